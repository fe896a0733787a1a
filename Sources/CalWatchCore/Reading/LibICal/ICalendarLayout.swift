/// The component structure of iCalendar text, found by a line scan without parsing any value, and mended.
///
/// libical builds one tree for a whole file; for a calendar of 10,000 events that tree is tens of megabytes
/// and slow to walk, and one unclosed `BEGIN:VALARM` makes it swallow every event after it. The reader instead
/// hands libical one calendar's header and VTIMEZONEs, then its events in small batches, each with its missing
/// `END:` lines put back. Splitting at `BEGIN:`/`END:` lines is safe: RFC 5545 folds long lines with a leading
/// space, so a line starting with `BEGIN:` is always a component boundary.
struct ICalendarLayout {
    /// A child component of a VCALENDAR: its kind, its bytes, the line it starts on, and the mends it needs.
    struct Child: Sendable {
        var name: String
        var range: Range<Int>
        var line: Int
        /// Mends in ascending order: missing `END:` lines inserted (empty range), stray `END:` lines dropped.
        var edits: [(range: Range<Int>, text: [UInt8])] = []

        /// The child's bytes, mended.
        func bytes(of text: [UInt8]) -> ArraySlice<UInt8> {
            guard !edits.isEmpty else { return text[range] }
            var result: [UInt8] = []
            var position = range.lowerBound
            for edit in edits {
                result += text[position..<edit.range.lowerBound]
                result += edit.text
                position = edit.range.upperBound
            }
            result += text[position..<range.upperBound]
            return result[...]
        }
    }

    /// One VCALENDAR: its own property lines and its children.
    struct Calendar {
        var propertyRanges: [Range<Int>] = []
        var children: [Child] = []
    }

    /// A structural mistake that was mended, with the line it was found on.
    struct Repair {
        var line: Int
        var message: String
    }

    var calendars: [Calendar]
    var repairs: [Repair]

    /// Components that may only stand directly inside a VCALENDAR: one starting deeper closes what is open.
    private static let topLevelComponents: Set<String> = ["VEVENT", "VTODO", "VJOURNAL", "VFREEBUSY", "VTIMEZONE"]

    /// Scans the text; `nil` when it holds no VCALENDAR at all (a bare VEVENT, or not iCalendar), for libical to judge.
    static func scan(_ bytes: [UInt8]) -> ICalendarLayout? {
        var scanner = Scanner()
        var start = 0
        let count = bytes.count
        while start < count {
            var end = start
            while end < count && bytes[end] != 10 { end += 1 }
            let next = min(end + 1, count)
            var contentEnd = end
            if contentEnd > start && bytes[contentEnd - 1] == 13 { contentEnd -= 1 }
            scanner.line += 1
            if let boundary = boundary(bytes, start, contentEnd) {
                let name = upperName(bytes, boundary.name, contentEnd)
                // `END;X=1:VEVENT` is a boundary to libical too, which then prints its own debug line: rewritten.
                let plain: [UInt8]? =
                    boundary.plain ? nil : Array(((boundary.begin ? "BEGIN:" : "END:") + name + "\r\n").utf8)
                if plain != nil {
                    scanner.repairs.append(
                        Repair(
                            line: scanner.line,
                            message: "parameters on \(boundary.begin ? "BEGIN" : "END"):\(name) are ignored"))
                }
                if boundary.begin {
                    scanner.begin(name, at: start, rewrite: plain.map { (start..<next, $0) })
                } else {
                    scanner.end(name, at: start, next: next, rewrite: plain)
                }
            } else if scanner.stack.count == 1 {
                if contentEnd > start { scanner.current.propertyRanges.append(start..<next) }
            } else if scanner.stack.isEmpty && contentEnd > start && !isBlank(bytes, start, contentEnd) {
                scanner.repairs.append(Repair(line: scanner.line, message: "text outside any component is ignored"))
            }
            start = next
        }
        scanner.finish(at: count)
        guard !scanner.calendars.isEmpty else { return nil }
        return ICalendarLayout(calendars: scanner.calendars, repairs: scanner.repairs)
    }

    /// Blanks every `END:` line that closes nothing in text without a VCALENDAR (bare components), which libical
    /// would otherwise report on standard error itself, without the file's name. The lines stay, empty, so that
    /// every later line keeps its number.
    static func blankUnmatchedEnds(in bytes: inout [UInt8]) -> [Repair] {
        var open: [String] = []
        var blanks: [(range: Range<Int>, line: Int, name: String)] = []
        var start = 0
        var line = 0
        let count = bytes.count
        while start < count {
            var end = start
            while end < count && bytes[end] != 10 { end += 1 }
            var contentEnd = end
            if contentEnd > start && bytes[contentEnd - 1] == 13 { contentEnd -= 1 }
            line += 1
            if let boundary = boundary(bytes, start, contentEnd), boundary.begin {
                open.append(upperName(bytes, boundary.name, contentEnd))
            } else if let boundary = boundary(bytes, start, contentEnd) {
                let name = upperName(bytes, boundary.name, contentEnd)
                if let position = open.lastIndex(of: name), boundary.plain {
                    open.removeSubrange(position...)
                } else {
                    blanks.append((start..<contentEnd, line, name))
                }
            }
            start = min(end + 1, count)
        }
        for blank in blanks.reversed() { bytes.removeSubrange(blank.range) }
        return blanks.map { Repair(line: $0.line, message: "END:\($0.name) without a matching BEGIN is ignored") }
    }

    /// The state of the line scan: the open components and what has been found.
    private struct Scanner {
        var calendars: [Calendar] = []
        var current = Calendar()
        var stack: [String] = []
        var child: Child?
        var repairs: [Repair] = []
        var line = 0

        mutating func begin(_ name: String, at offset: Int, rewrite: (range: Range<Int>, text: [UInt8])? = nil) {
            defer { if let rewrite { child?.edits.append(rewrite) } }
            if stack.isEmpty {
                if name == "VCALENDAR" {
                    current = Calendar()
                    stack = ["VCALENDAR"]
                    return
                }
                guard ICalendarLayout.topLevelComponents.contains(name), !calendars.isEmpty else {
                    stack = [name]  // a component outside any calendar: skipped up to its END
                    repairs.append(Repair(line: line, message: "BEGIN:\(name) outside a VCALENDAR is ignored"))
                    return
                }
                // A component after END:VCALENDAR: it still belongs to the calendar before it.
                current = calendars.removeLast()
                stack = ["VCALENDAR"]
                repairs.append(
                    Repair(line: line, message: "BEGIN:\(name) after END:VCALENDAR is read as part of the calendar"))
            } else if stack.count >= 2 && ICalendarLayout.topLevelComponents.contains(name) {
                close(from: 1, at: offset, reason: "before BEGIN:\(name) on line \(line)")
            }
            if stack.count == 1 {
                child = Child(name: name, range: offset..<offset, line: line)
            }
            stack.append(name)
        }

        mutating func end(_ name: String, at offset: Int, next: Int, rewrite: [UInt8]? = nil) {
            guard let position = stack.lastIndex(of: name) else {
                repairs.append(Repair(line: line, message: "END:\(name) without a matching BEGIN is ignored"))
                child?.edits.append((offset..<next, []))
                return
            }
            if position < stack.count - 1 {
                close(from: position + 1, at: offset, reason: "before END:\(name) on line \(line)")
            }
            if let rewrite { child?.edits.append((offset..<next, rewrite)) }
            if position == 1, var finished = child {
                finished.range = finished.range.lowerBound..<next
                current.children.append(finished)
                child = nil
            } else if position == 0 && stack[0] == "VCALENDAR" {
                calendars.append(current)
                current = Calendar()
            }
            stack.removeLast()
        }

        /// Closes the components open from stack index `from` on, inserting their `END:` lines at `offset`.
        mutating func close(from index: Int, at offset: Int, reason: String) {
            let open = stack[index...].reversed()
            for name in open {
                repairs.append(Repair(line: line, message: "BEGIN:\(name) is never closed; closed \(reason)"))
            }
            let text = Array(open.map { "END:\($0)\r\n" }.joined().utf8)
            if index == 1, var finished = child {
                finished.range = finished.range.lowerBound..<offset
                finished.edits.append((offset..<offset, text))
                current.children.append(finished)
                child = nil
            } else {
                child?.edits.append((offset..<offset, text))
            }
            stack.removeLast(stack.count - index)
        }

        mutating func finish(at count: Int) {
            guard !stack.isEmpty else { return }
            if stack[0] == "VCALENDAR" {
                if stack.count > 1 { close(from: 1, at: count, reason: "at the end of the file") }
                repairs.append(
                    Repair(line: line, message: "BEGIN:VCALENDAR is never closed; closed at the end of the file"))
                calendars.append(current)
            }
            stack = []
        }
    }

    /// A `BEGIN` or `END` line (any case), and where its component name starts. `plain` is false when parameters
    /// stand between the two (`END;X-FOO=1:VEVENT`, which libical also takes for a boundary): they are skipped,
    /// quoted values included.
    private static func boundary(_ bytes: [UInt8], _ start: Int, _ end: Int) -> (begin: Bool, name: Int, plain: Bool)? {
        let begin: Bool
        var position: Int
        if startsWith(bytes, start, end, "BEGIN"), start + 5 < end {
            (begin, position) = (true, start + 5)
        } else if startsWith(bytes, start, end, "END"), start + 3 < end {
            (begin, position) = (false, start + 3)
        } else {
            return nil
        }
        if bytes[position] == 58 { return (begin, position + 1, true) }  // ':'
        guard bytes[position] == 59 else { return nil }  // ';'
        var quoted = false
        while position < end {
            if bytes[position] == 34 { quoted.toggle() } else if bytes[position] == 58 && !quoted { break }
            position += 1
        }
        return position < end ? (begin, position + 1, false) : nil
    }

    private static func startsWith(_ bytes: [UInt8], _ start: Int, _ end: Int, _ prefix: StaticString) -> Bool {
        let length = prefix.utf8CodeUnitCount
        guard end - start >= length else { return false }
        return prefix.withUTF8Buffer { buffer in
            for offset in 0..<length {
                var byte = bytes[start + offset]
                if byte >= 97 && byte <= 122 { byte -= 32 }
                if byte != buffer[offset] { return false }
            }
            return true
        }
    }

    /// A component name, upper-cased and without trailing blanks (names are ASCII by RFC 5545).
    private static func upperName(_ bytes: [UInt8], _ start: Int, _ end: Int) -> String {
        var last = end
        while last > start && (bytes[last - 1] == 32 || bytes[last - 1] == 9) { last -= 1 }
        return String(unsafeUninitializedCapacity: last - start) { buffer in
            for offset in 0..<(last - start) {
                let byte = bytes[start + offset]
                buffer[offset] = byte >= 97 && byte <= 122 ? byte - 32 : byte
            }
            return last - start
        }
    }

    private static func isBlank(_ bytes: [UInt8], _ start: Int, _ end: Int) -> Bool {
        bytes[start..<end].allSatisfy { $0 == 32 || $0 == 9 }
    }
}
