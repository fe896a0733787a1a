/// The component structure of iCalendar text, found by a line scan without parsing any value.
///
/// libical builds one tree for a whole file; for a calendar of 10,000 events that tree is tens of megabytes
/// and slow to walk. The reader instead hands libical one calendar's header and VTIMEZONEs, then its events in
/// small batches. Splitting at `BEGIN:`/`END:` lines is safe: RFC 5545 folds long lines with a leading space,
/// so a line starting with `BEGIN:` is always a component boundary. Anything unusual (unbalanced or nested
/// VCALENDARs, text outside components) makes `scan` return `nil`, and libical reads the whole text as it is.
struct ICalendarLayout {
    /// A child component of a VCALENDAR: its kind, its bytes and the line it starts on.
    struct Child {
        var name: String
        var range: Range<Int>
        var line: Int
    }

    /// One VCALENDAR: its own property lines and its children.
    struct Calendar {
        var propertyRanges: [Range<Int>] = []
        var children: [Child] = []
    }

    var calendars: [Calendar]

    static func scan(_ bytes: [UInt8]) -> ICalendarLayout? {
        var calendars: [Calendar] = []
        var current: Calendar?
        var depth = 0
        var childStart = 0
        var childLine = 0
        var childName = ""
        var lineNumber = 0
        var start = 0
        let count = bytes.count
        while start < count {
            var end = start
            while end < count && bytes[end] != 10 { end += 1 }
            lineNumber += 1
            let next = end + 1
            var contentEnd = end
            if contentEnd > start && bytes[contentEnd - 1] == 13 { contentEnd -= 1 }
            let isBegin = startsWith(bytes, start, contentEnd, "BEGIN:")
            let isEnd = !isBegin && startsWith(bytes, start, contentEnd, "END:")
            if isBegin {
                depth += 1
                let name = upperName(bytes, start + 6, contentEnd)
                if depth == 1 {
                    guard name == "VCALENDAR" else { return nil }
                    current = Calendar()
                } else if depth == 2 {
                    childStart = start
                    childLine = lineNumber
                    childName = name
                }
            } else if isEnd {
                if depth == 2 {
                    current?.children.append(Child(name: childName, range: childStart..<min(next, count), line: childLine))
                } else if depth == 1 {
                    guard let finished = current else { return nil }
                    calendars.append(finished)
                    current = nil
                }
                depth -= 1
                guard depth >= 0 else { return nil }
            } else if depth == 1 {
                if contentEnd > start { current?.propertyRanges.append(start..<min(next, count)) }
            } else if depth == 0 && contentEnd > start && !isBlank(bytes, start, contentEnd) {
                return nil  // text outside any component: let libical judge it
            }
            start = next
        }
        guard depth == 0, current == nil, !calendars.isEmpty else { return nil }
        return ICalendarLayout(calendars: calendars)
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
