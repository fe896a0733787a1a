/// Builds one JSON object as UTF-8 bytes, without Foundation's encoder (the scan prints hundreds of thousands).
///
/// Keys are written in the order they are added, so the output order is the documented one.
public struct JSONLineWriter {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    /// Creates an empty writer with room for `capacity` bytes.
    public init(capacity: Int = 1 << 16) { bytes.reserveCapacity(capacity) }

    /// The bytes written so far in a buffer of their own size: `bytes` hands out the writer's own, larger buffer,
    /// which the next write then has to copy.
    public var copiedBytes: [UInt8] { bytes.withUnsafeBufferPointer { Array($0) } }

    /// Empties the buffer (keeping its capacity).
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    /// Opens an object.
    public mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Opens an object as the value of a field.
    public mutating func beginObject(field name: StaticString) {
        key(name)
        beginObject()
    }

    /// Opens an array as the value of a field; its elements are `element` and `beginElement`.
    public mutating func beginArray(field name: StaticString) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Closes an array.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Opens an object as the next element of an array.
    public mutating func beginElement() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        beginObject()
    }

    /// A string as the next element of an array.
    public mutating func element(_ value: String) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        var value = value
        bytes.append(UInt8(ascii: "\""))
        value.withUTF8 { appendEscaped($0) }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// `"name":null`.
    public mutating func nullField(_ name: StaticString) {
        key(name)
        appendNull()
    }

    /// Marks that fields already written precede, so the next field starts with a comma.
    public mutating func continueObject() { needsComma = true }

    /// Appends bytes that are already JSON (fields rendered earlier with `continueObject`).
    public mutating func append(raw: [UInt8]) {
        bytes.append(contentsOf: raw)
        needsComma = true
    }

    /// Appends bytes in memory that are already JSON.
    public mutating func append(raw: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: raw)
        needsComma = true
    }

    /// Appends text as it is, unquoted and unescaped: for buffers that are not JSON (`SQLRow`).
    package mutating func append(text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Closes an object; `newline` ends the JSON Lines record.
    public mutating func endObject(newline: Bool = false) {
        bytes.append(UInt8(ascii: "}"))
        if newline { bytes.append(10) }
        needsComma = true
    }

    /// `"name":`, for a value another writer appends (a nested object).
    public mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = true
    }

    /// `"name":` for a key known only at run time (a dictionary's).
    public mutating func key(_ name: String) {
        element(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// `"name":"value"` (or `null`).
    public mutating func field(_ name: StaticString, _ value: String?) {
        key(name)
        guard var value else { return appendNull() }
        bytes.append(UInt8(ascii: "\""))
        value.withUTF8 { appendEscaped($0) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `"name":true`.
    public mutating func field(_ name: StaticString, _ value: Bool?) {
        key(name)
        guard let value else { return appendNull() }
        append(static: value ? "true" : "false")
    }

    /// `"name":42`.
    public mutating func field(_ name: StaticString, _ value: Int?) {
        key(name)
        guard let value else { return appendNull() }
        appendInteger(value)
    }

    /// `"name":0.97`.
    public mutating func field(_ name: StaticString, _ value: Double?) {
        key(name)
        guard let value, value.isFinite else { return appendNull() }
        bytes.append(contentsOf: String(value).utf8)
    }

    /// `"name":"2027-03-01T08:30:00Z"`.
    public mutating func field(_ name: StaticString, _ instant: Instant?) {
        key(name)
        guard let instant else { return appendNull() }
        quoted { $0.append(instant: instant) }
    }

    /// `"name":"<32 hex digits>"`.
    public mutating func field(_ name: StaticString, _ id: EventID) {
        key(name)
        quoted { $0.append(id: id) }
    }

    /// An event id's 32 hex digits, unquoted.
    package mutating func append(id: EventID) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { digits in
            id.write(to: digits)
            bytes.append(contentsOf: UnsafeBufferPointer(digits))
        }
    }

    /// A RECURRENCE-ID as `DateValueText.description` has it (`2027-03-01T08:30:00Z` or `2027-03-01`), unquoted.
    package mutating func append(dateValue: DateValueText) {
        switch dateValue {
        case .instant(let instant): append(instant: instant)
        case .day(let days): appendDate(CalendarDate(daysSinceEpoch: days))
        }
    }

    /// `2027-03-01T08:30:00Z`, unquoted.
    package mutating func append(instant: Instant) {
        appendDateTime(instant.utc)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// `"name":"2027-03-01T08:30:00.042Z"`.
    public mutating func field(_ name: StaticString, _ timestamp: Timestamp) {
        key(name)
        quoted { $0.append(timestamp: timestamp) }
    }

    /// `2027-03-01T08:30:00.042Z`, unquoted.
    package mutating func append(timestamp: Timestamp) {
        appendDateTime(timestamp.instant.utc)
        let milliseconds = timestamp.milliseconds
        bytes.append(UInt8(ascii: "."))
        bytes.append(UInt8(ascii: "0") + UInt8(milliseconds / 100))
        bytes.append(UInt8(ascii: "0") + UInt8(milliseconds / 10 % 10))
        bytes.append(UInt8(ascii: "0") + UInt8(milliseconds % 10))
        bytes.append(UInt8(ascii: "Z"))
    }

    /// `"name":"<prefix><text>"`, without joining the two into a string first (an event's `source`).
    package mutating func field(_ name: StaticString, prefix: StaticString, _ text: String) {
        key(name)
        var text = text
        quoted { writer in
            writer.append(static: prefix)
            text.withUTF8 { writer.appendEscaped($0) }
        }
    }

    /// `"name":"<text>/<date value>"`, without joining them into a string first (an event's `subject`).
    package mutating func field(_ name: StaticString, _ text: String, slash value: DateValueText) {
        key(name)
        var text = text
        quoted { writer in
            text.withUTF8 { writer.appendEscaped($0) }
            writer.bytes.append(UInt8(ascii: "/"))
            writer.append(dateValue: value)
        }
    }

    /// `"name":"<digits>"`: an integer as a JSON string (CloudEvents' `sequence`).
    package mutating func field(_ name: StaticString, quoted value: Int64) {
        key(name)
        quoted { $0.appendInteger(Int(value)) }
    }

    /// `"name":"2027-03-01T08:30:00Z"` or `"name":"2027-03-01"` for a RECURRENCE-ID.
    public mutating func field(_ name: StaticString, _ value: DateValueText?) {
        key(name)
        guard let value else { return appendNull() }
        quoted { $0.append(dateValue: value) }
    }

    /// `"name":"2027-03-01T09:30:00+01:00"`: a wall-clock reading with its offset.
    public mutating func field(_ name: StaticString, local: LocalDateTime, offset: Int) {
        key(name)
        bytes.append(UInt8(ascii: "\""))
        appendDateTime(local)
        let magnitude = abs(offset)
        bytes.append(offset < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
        appendDigits(magnitude / 3600, width: 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(magnitude % 3600 / 60, width: 2)
        if magnitude % 60 != 0 {
            bytes.append(UInt8(ascii: ":"))
            appendDigits(magnitude % 60, width: 2)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendNull() { append(static: "null") }

    /// What `write` appends, between double quotes (text it makes that needs no escaping).
    private mutating func quoted(_ write: (inout JSONLineWriter) -> Void) {
        bytes.append(UInt8(ascii: "\""))
        write(&self)
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func append(static text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// A decimal integer, without making a `String` of it.
    private mutating func appendInteger(_ value: Int) {
        guard value != .min else { return bytes.append(contentsOf: String(value).utf8) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(48 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Zero-padded decimal digits (2 or 4 wide in practice).
    private mutating func appendDigits(_ value: Int, width: Int) {
        if width == 2 && value >= 0 && value < 100 {
            bytes.append(UInt8(48 + value / 10))
            bytes.append(UInt8(48 + value % 10))
            return
        }
        if width == 4 && value >= 0 && value < 10_000 {
            bytes.append(UInt8(48 + value / 1000))
            bytes.append(UInt8(48 + value / 100 % 10))
            bytes.append(UInt8(48 + value / 10 % 10))
            bytes.append(UInt8(48 + value % 10))
            return
        }
        let digits = String(value)
        if digits.count < width {
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - digits.count))
        }
        bytes.append(contentsOf: digits.utf8)
    }

    private mutating func appendDate(_ date: CalendarDate) {
        guard date.year >= 0 else {
            bytes.append(contentsOf: date.description.utf8)
            return
        }
        appendDigits(date.year, width: 4)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(date.month, width: 2)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(date.day, width: 2)
    }

    private mutating func appendDateTime(_ value: LocalDateTime) {
        let date = value.date
        guard (0..<10_000).contains(date.year), (0..<100).contains(value.hour), (0..<100).contains(value.minute),
            (0..<100).contains(value.second)
        else {
            appendDate(date)
            bytes.append(UInt8(ascii: "T"))
            appendDigits(value.hour, width: 2)
            bytes.append(UInt8(ascii: ":"))
            appendDigits(value.minute, width: 2)
            bytes.append(UInt8(ascii: ":"))
            appendDigits(value.second, width: 2)
            return
        }
        // The usual case in one append: a scan prints three date-times for each of hundreds of thousands of lines.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 19) { text in
            func put(_ number: Int, at offset: Int, width: Int) {
                var number = number
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    text[index] = UInt8(48 + number % 10)
                    number /= 10
                }
            }
            put(date.year, at: 0, width: 4)
            text[4] = UInt8(ascii: "-")
            put(date.month, at: 5, width: 2)
            text[7] = UInt8(ascii: "-")
            put(date.day, at: 8, width: 2)
            text[10] = UInt8(ascii: "T")
            put(value.hour, at: 11, width: 2)
            text[13] = UInt8(ascii: ":")
            put(value.minute, at: 14, width: 2)
            text[16] = UInt8(ascii: ":")
            put(value.second, at: 17, width: 2)
            bytes.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    /// RFC 8259 string escaping: quote, backslash and control characters; everything else is UTF-8 as is.
    private mutating func appendEscaped(_ text: UnsafeBufferPointer<UInt8>) {
        if !text.contains(where: { $0 < 32 || $0 == 34 || $0 == 92 || $0 == 127 }) {
            bytes.append(contentsOf: text)
            return
        }
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        for byte in text {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [92, 92])
            case 10: bytes.append(contentsOf: [92, 110])
            case 13: bytes.append(contentsOf: [92, 114])
            case 9: bytes.append(contentsOf: [92, 116])
            case 0..<32, 127:
                bytes.append(contentsOf: [92, 117, 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            default: bytes.append(byte)
            }
        }
    }
}
