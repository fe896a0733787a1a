/// The component structure of iCalendar text, found by a line scan without parsing any value, and mended.
///
/// libical builds one tree for a whole file; for a calendar of 10,000 events that tree is tens of megabytes
/// and slow to walk, and one unclosed `BEGIN:VALARM` makes it swallow every event after it. The reader instead
/// hands libical one calendar's header and VTIMEZONEs, then its events in small batches, each with its missing
/// `END:` lines put back. Splitting at `BEGIN:`/`END:` lines is safe: RFC 5545 folds long lines with a leading
/// space, so a line starting with `BEGIN:` is always a component boundary.
struct ICalendarLayout {
    /// A child component of a VCALENDAR: its kind, its bytes, the line it starts on, and the mends it needs.
    struct Child {
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
            if startsWith(bytes, start, contentEnd, "BEGIN:") {
                scanner.begin(upperName(bytes, start + 6, contentEnd), at: start)
            } else if startsWith(bytes, start, contentEnd, "END:") {
                scanner.end(upperName(bytes, start + 4, contentEnd), at: start, next: next)
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
            if startsWith(bytes, start, contentEnd, "BEGIN:") {
                open.append(upperName(bytes, start + 6, contentEnd))
            } else if startsWith(bytes, start, contentEnd, "END:") {
                let name = upperName(bytes, start + 4, contentEnd)
                if let position = open.lastIndex(of: name) {
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

        mutating func begin(_ name: String, at offset: Int) {
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

        mutating func end(_ name: String, at offset: Int, next: Int) {
            guard let position = stack.lastIndex(of: name) else {
                repairs.append(Repair(line: line, message: "END:\(name) without a matching BEGIN is ignored"))
                child?.edits.append((offset..<next, []))
                return
            }
            if position < stack.count - 1 {
                close(from: position + 1, at: offset, reason: "before END:\(name) on line \(line)")
            }
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
