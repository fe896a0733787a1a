/// Builds one JSON object as UTF-8 bytes, without Foundation's encoder (the scan prints hundreds of thousands).
///
/// Keys are written in the order they are added, so the output order is the documented one.
public struct JSONLineWriter {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    /// Creates an empty writer.
    public init() { bytes.reserveCapacity(1 << 16) }

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

    /// Closes an object; `newline` ends the JSON Lines record.
    public mutating func endObject(newline: Bool = false) {
        bytes.append(UInt8(ascii: "}"))
        if newline { bytes.append(10) }
        needsComma = true
    }

    private mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        needsComma = true
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
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    /// `"name":42`.
    public mutating func field(_ name: StaticString, _ value: Int?) {
        key(name)
        guard let value else { return appendNull() }
        bytes.append(contentsOf: String(value).utf8)
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
        bytes.append(UInt8(ascii: "\""))
        appendDateTime(instant.utc)
        bytes.append(contentsOf: [UInt8(ascii: "Z"), UInt8(ascii: "\"")])
    }

    /// `"name":"2027-03-01T09:30:00+01:00"`: a wall-clock reading with its offset.
    public mutating func field(_ name: StaticString, local: LocalDateTime, offset: Int) {
        key(name)
        bytes.append(UInt8(ascii: "\""))
        appendDateTime(local)
        var text = ""
        ISO8601Text.appendOffset(offset, to: &text)
        bytes.append(contentsOf: text.utf8)
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendNull() { bytes.append(contentsOf: [110, 117, 108, 108]) }

    private mutating func appendDigits(_ value: Int, width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        if rest >= divisor * 10 {
            bytes.append(contentsOf: String(rest).utf8)
            return
        }
        while divisor > 0 {
            bytes.append(UInt8(48 + rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    private mutating func appendDateTime(_ value: LocalDateTime) {
        guard value.date.year >= 0 else {
            bytes.append(contentsOf: value.iso8601.utf8)
            return
        }
        appendDigits(value.date.year, width: 4)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(value.date.month, width: 2)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(value.date.day, width: 2)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(value.hour, width: 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(value.minute, width: 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(value.second, width: 2)
    }

    /// RFC 8259 string escaping: quote, backslash and control characters; everything else is UTF-8 as is.
    private mutating func appendEscaped(_ text: UnsafeBufferPointer<UInt8>) {
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
