/// The UTC offsets of one time zone over time, as a table of transitions.
///
/// Built once per zone from the system's IANA data or from a calendar's own VTIMEZONE, then shared.
/// Turning a wall-clock time into an instant follows RFC 5545 §3.3.5, which libical gets backwards:
/// a time inside a DST gap uses the offset from before the gap, a time inside a fold is the first of the two.
public final class ZoneRules: Sendable, CustomStringConvertible {
    /// The name shown for this zone: an IANA identifier where one is known, else the calendar's TZID.
    public let identifier: String
    /// Transition instants (seconds since the epoch), ascending.
    private let transitions: [Int64]
    /// The offset in force from each transition on.
    private let offsetsAfter: [Int32]
    /// The offset in force before the first transition.
    private let initialOffset: Int32
    /// For each transition, the last wall-clock reading (as seconds) that still belongs to the offset before it:
    /// `transition + max(before, after)`. Below that key, both a gap and a fold resolve to the earlier offset.
    private let wallKeys: [Int64]

    /// Creates zone rules from an initial offset and `(instant, offset after)` transitions in any order.
    public init(identifier: String, initialOffset: Int, transitions: [(at: Int64, offsetAfter: Int)]) {
        self.identifier = identifier
        self.initialOffset = Int32(initialOffset)
        var times: [Int64] = []
        var afters: [Int32] = []
        var keys: [Int64] = []
        var previous = Int32(initialOffset)
        for transition in transitions.sorted(by: { $0.at < $1.at }) {
            let after = Int32(transition.offsetAfter)
            if after == previous || times.last == transition.at { continue }
            times.append(transition.at)
            afters.append(after)
            keys.append(transition.at + Int64(max(previous, after)))
            previous = after
        }
        self.transitions = times
        self.offsetsAfter = afters
        self.wallKeys = keys
    }

    /// A zone with one offset for all time.
    public convenience init(identifier: String, fixedOffset: Int) {
        self.init(identifier: identifier, initialOffset: fixedOffset, transitions: [])
    }

    /// Coordinated Universal Time.
    public static let utc = ZoneRules(identifier: "UTC", fixedOffset: 0)

    /// The UTC offset in seconds in force at an instant.
    public func offset(at instant: Instant) -> Int {
        let index = Self.countNotAbove(instant.secondsSinceEpoch, in: transitions)
        return Int(index == 0 ? initialOffset : offsetsAfter[index - 1])
    }

    /// The instant a wall-clock reading in this zone names (RFC 5545 §3.3.5 for gaps and folds).
    public func instant(for wall: LocalDateTime) -> Instant {
        let seconds = wall.secondsAsUTC
        let index = Self.countNotAbove(seconds, in: wallKeys)
        let offset = index == 0 ? initialOffset : offsetsAfter[index - 1]
        return Instant(secondsSinceEpoch: seconds - Int64(offset))
    }

    /// The wall-clock reading of an instant in this zone.
    public func wallClock(at instant: Instant) -> LocalDateTime {
        LocalDateTime(secondsSinceEpochAsUTC: instant.secondsSinceEpoch + Int64(offset(at: instant)))
    }

    public var description: String { identifier }

    /// How many entries of an ascending array are `<= value`.
    private static func countNotAbove(_ value: Int64, in sorted: [Int64]) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] <= value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
