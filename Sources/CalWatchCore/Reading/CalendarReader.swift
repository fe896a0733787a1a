import Foundation
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Reads one source into parsed calendars, turning every failure into a problem that names the file and line.
public enum CalendarReader {
    /// A calendar read from a source, with the name its occurrences carry.
    public struct ReadCalendar: Sendable {
        public var name: String
        public var color: String?
        public var calendar: ParsedCalendar
        /// Where the calendar text came from, for error messages.
        public var origin: String

        package init(name: String, color: String?, calendar: ParsedCalendar, origin: String) {
            self.name = name
            self.color = color
            self.calendar = calendar
            self.origin = origin
        }
    }

    /// What reading one source gave.
    public struct Result: Sendable {
        public var calendars: [ReadCalendar] = []
        public var problems: [CalendarProblem] = []
        /// Whether the source gave no calendar data at all.
        public var failed = false
    }

    /// Reads a source; `standardInput` supplies the bytes for `-`.
    public static func read(_ source: CalendarSource, standardInput: () -> [UInt8] = readStandardInput) -> Result {
        var result = Result()
        let bytes: [UInt8]
        do {
            bytes = source.path == "-" ? standardInput() : try readFile(source.path)
            if bytes.count > maximumFileBytes { throw TooLarge() }
        } catch {
            result.failed = true
            result.problems.append(
                CalendarProblem(severity: .error, path: source.path, message: "cannot read the file (\(error))"))
            return result
        }
        return read(source, bytes: bytes)
    }

    /// Reads a source's bytes, already in hand.
    public static func read(_ source: CalendarSource, bytes: [UInt8]) -> Result {
        var result = Result()
        switch source.format {
        case .iCalendar:
            readICalendar(bytes, origin: source.path, source: source, into: &result)
            if result.calendars.isEmpty && !result.failed {
                result.failed = true
                result.problems.append(notICalendar(bytes, path: source.path))
            }
        case .walletPass:
            // A pass without a time or a flight gives no item: it only joins the calendars' flights.
            if let text = WalletPassCalendar.text(Data(bytes)) {
                readICalendar(Array(text.utf8), origin: source.path, source: source, into: &result)
            }
        case .calDAVMultistatus:
            do {
                let objects = try CalDAVMultistatus.objects(in: Data(bytes))
                for object in objects {
                    let origin = source.path + (object.href.map { "#" + $0 } ?? "")
                    var named = source
                    if let displayName = object.collectionDisplayName {
                        // The collection's own name, as a vdir's `displayname` file gives it.
                        named.collectionName = displayName
                        named.collectionColor = object.collectionColor ?? named.collectionColor
                    } else if let collection = object.collectionName {
                        named.fallbackName = collection
                    }
                    readICalendar(Array(object.calendarData.utf8), origin: origin, source: named, into: &result)
                }
                if objects.isEmpty {
                    // Nothing to read, like an .ics file without a calendar: an error, so `scan` of it alone exits 65.
                    result.failed = true
                    result.problems.append(
                        CalendarProblem(
                            severity: .error, path: source.path,
                            message: "the multistatus document holds no calendar-data; export with a calendar-query "
                                + "REPORT that asks for <C:calendar-data/>"))
                }
            } catch let failure as CalDAVMultistatus.ParseFailure {
                result.failed = true
                result.problems.append(
                    CalendarProblem(severity: .error, path: source.path, line: failure.line, message: failure.reason))
            } catch {
                result.failed = true
                result.problems.append(CalendarProblem(severity: .error, path: source.path, message: "\(error)"))
            }
        }
        return result
    }

    /// The longest calendar name kept, in Unicode scalars: a name goes into every event, filter and status line,
    /// and a feed's `X-WR-CALNAME` of 200 KB would go with it.
    public static let longestCalendarName = 200

    /// A calendar's name as calwatch keeps it: at most `longestCalendarName` scalars, ending with `…` when cut.
    public static func calendarName(_ name: String) -> String {
        guard name.unicodeScalars.count > longestCalendarName else { return name }
        var kept = String.UnicodeScalarView(name.unicodeScalars.prefix(longestCalendarName - 1))
        kept.append("…")
        return String(kept)
    }

    private static func readICalendar(
        _ bytes: [UInt8], origin: String, source: CalendarSource, into result: inout Result
    ) {
        for calendar in ICalDocumentParser.parse(bytes) {
            result.calendars.append(
                ReadCalendar(
                    name: name(of: calendar, in: source), color: source.collectionColor, calendar: calendar,
                    origin: origin))
            for problem in calendar.problems {
                result.problems.append(
                    CalendarProblem(severity: .warning, path: origin, line: problem.line, message: problem.message))
            }
        }
    }

    /// A calendar's name: its collection's, else its own `X-WR-CALNAME`, else the folder's or file's.
    package static func name(of calendar: ParsedCalendar, in source: CalendarSource) -> String {
        calendarName(source.collectionName ?? calendar.name ?? source.fallbackName)
    }

    /// Why bytes that gave no calendar are not iCalendar, with the line of the first thing that is wrong.
    static func notICalendar(_ bytes: [UInt8], path: String) -> CalendarProblem {
        if bytes.isEmpty {
            return CalendarProblem(severity: .error, path: path, message: "the file is empty; expected iCalendar data")
        }
        if bytes.contains(0) {
            return CalendarProblem(
                severity: .error, path: path, line: SourceLines.line(ofOffset: bytes.firstIndex(of: 0)!, in: bytes),
                message: "binary data (a NUL byte) where iCalendar text was expected")
        }
        let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
        let firstLine = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return CalendarProblem(
            severity: .error, path: path, line: 1,
            message: "not iCalendar data: expected BEGIN:VCALENDAR, found '\(firstLine.prefix(60))'")
    }

    /// The largest calendar file calwatch reads: 256 MiB, ten times a busy shared calendar of 20 years, and what one
    /// process can expand without risking the memory of a small machine. A larger file, or a file that keeps
    /// growing while it is read, is refused with `TooLarge`.
    package static let maximumFileBytes = 256 << 20

    /// Reads a whole file with POSIX calls (fast for the thousands of small files of a vdir).
    package static func readFile(_ path: String) throws -> [UInt8] {
        // O_NONBLOCK: opening a named pipe must not wait for a writer; the type is checked on what was opened.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw POSIXFailure(code: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw POSIXFailure(code: errno) }
        if let kind = FileStatus(status).notARegularFile { throw NotAFile(kind: kind) }
        guard status.st_size <= maximumFileBytes else { throw TooLarge() }
        // A byte to spare, so that the end of the file is seen without growing the buffer to twice its size.
        var bytes = [UInt8](repeating: 0, count: max(Int(status.st_size), 0) + 1)
        var filled = 0
        while true {
            if filled == bytes.count { bytes.append(contentsOf: repeatElement(0, count: max(4096, bytes.count))) }
            let count = bytes.withUnsafeMutableBytes {
                Glibc.read(descriptor, $0.baseAddress! + filled, $0.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw POSIXFailure(code: errno)
            }
            if count == 0 { break }
            filled += count
            if filled > maximumFileBytes { throw TooLarge() }
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// Standard input, up to one byte more than `maximumFileBytes` (which `read` then refuses).
    public static func readStandardInput() -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count <= maximumFileBytes {
            let chunk = FileHandle.standardInput.readData(ofLength: 1 << 20)
            if chunk.isEmpty { break }
            bytes += chunk
        }
        return bytes
    }

    /// A file above `maximumFileBytes`.
    package struct TooLarge: Error, CustomStringConvertible {
        package var description: String {
            "it is larger than the 256 MiB calwatch reads from one file; split the calendar into several files "
                + "(a vdir folder holds one item per file)"
        }
    }

    /// A path that is a pipe, a device or a socket: reading it could block for ever or never end.
    package struct NotAFile: Error, CustomStringConvertible {
        package var kind: String
        package var description: String { "is \(kind), not a calendar file" }
    }

    package struct POSIXFailure: Error, CustomStringConvertible {
        package var code: Int32
        package var description: String { Errno(rawValue: code).description }
    }
}

/// Finds line numbers in raw calendar text, for messages only (libical does not track lines).
enum SourceLines {
    /// The 1-based line of a byte offset.
    static func line(ofOffset offset: Int, in bytes: [UInt8]) -> Int {
        bytes[..<min(offset, bytes.count)].reduce(1) { $1 == 10 ? $0 + 1 : $0 }
    }

    /// The line of `UID:<uid>` (the component a problem belongs to), if it can be found.
    static func line(ofUID uid: String, in bytes: [UInt8]) -> Int? {
        let needle = Array("UID:\(uid)".utf8)
        guard !needle.isEmpty, bytes.count >= needle.count else { return nil }
        var index = 0
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0] && (index == 0 || bytes[index - 1] == 10)
                && bytes[index..<(index + needle.count)].elementsEqual(needle)
            {
                return line(ofOffset: index, in: bytes)
            }
            index += 1
        }
        return nil
    }
}
