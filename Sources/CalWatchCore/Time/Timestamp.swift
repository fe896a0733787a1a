import Foundation

/// A moment read off the real clock, to the millisecond: when calwatch emitted an event (CloudEvents
/// `recordedtime`), so a consumer can see how late it was. Calendar instants stay `Instant` (whole seconds).
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch (UTC).
    public var millisecondsSinceEpoch: Int64

    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    /// The system's clock now.
    public static var now: Timestamp {
        Timestamp(millisecondsSinceEpoch: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// The start of a whole second.
    public init(_ instant: Instant) {
        millisecondsSinceEpoch = instant.secondsSinceEpoch * 1000
    }

    /// The second it falls in.
    public var instant: Instant {
        let (seconds, remainder) = millisecondsSinceEpoch.quotientAndRemainder(dividingBy: 1000)
        return Instant(secondsSinceEpoch: remainder < 0 ? seconds - 1 : seconds)
    }

    /// The milliseconds past `instant`, 0...999.
    public var milliseconds: Int { Int(millisecondsSinceEpoch - instant.secondsSinceEpoch * 1000) }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    /// RFC 3339 in UTC with three fractional digits: `2027-03-01T08:30:00.042Z`.
    public var description: String {
        var writer = JSONLineWriter(capacity: 28)
        writer.append(timestamp: self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
