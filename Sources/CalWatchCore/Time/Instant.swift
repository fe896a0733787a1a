/// An absolute point in time, in whole seconds since 1970-01-01T00:00:00Z.
///
/// RFC 5545 values have second resolution, so an integer keeps expansion exact and cheap.
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Seconds since the Unix epoch (UTC).
    public var secondsSinceEpoch: Int64

    /// Creates an instant from seconds since the Unix epoch.
    public init(secondsSinceEpoch: Int64) {
        self.secondsSinceEpoch = secondsSinceEpoch
    }

    public static func < (lhs: Instant, rhs: Instant) -> Bool {
        lhs.secondsSinceEpoch < rhs.secondsSinceEpoch
    }

    /// The instant `seconds` later (earlier when negative).
    public func adding(seconds: Int64) -> Instant {
        Instant(secondsSinceEpoch: secondsSinceEpoch + seconds)
    }

    /// The UTC wall-clock reading of this instant.
    public var utc: LocalDateTime { LocalDateTime(secondsSinceEpochAsUTC: secondsSinceEpoch) }

    /// ISO 8601 in UTC with `Z`, as every JSON field of calwatch prints instants.
    public var description: String {
        var writer = JSONLineWriter(capacity: 24)
        writer.append(instant: self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// A half-open interval of instants, `[start, end)`.
public struct InstantWindow: Hashable, Sendable {
    /// The first instant inside the window.
    public var start: Instant
    /// The first instant after the window.
    public var end: Instant

    /// Creates the window `[start, end)`.
    public init(start: Instant, end: Instant) {
        self.start = start
        self.end = end
    }

    /// Whether an occurrence `[s, e)` overlaps the window (docs/design.md §3); a zero-length one only when `start <= s < end`.
    public func overlaps(start s: Instant, end e: Instant) -> Bool {
        if s == e { return start <= s && s < end }
        return s < end && e > start
    }

    /// Whether an instant lies inside the window.
    public func contains(_ instant: Instant) -> Bool { start <= instant && instant < end }
}

/// Seconds since the epoch: how the journal keeps the instants inside an event's detail.
extension Instant: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(secondsSinceEpoch: try decoder.singleValueContainer().decode(Int64.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(secondsSinceEpoch)
    }
}
