/// Where the user is between events: the place each placed occurrence ends at, and the arrival airport of each
/// flight, by the instant the user leaves it. The way to an event starts at the last of these before it (within
/// `travel.fromPreviousWithin` on the same day; for a landing, within a day), when there is one.
///
/// Filled per group of occurrences (a file), like the planning loop, and shared by every occurrence's planning: a
/// change to one file can move the start of the way to an event in another, which its caller then plans again.
public final class Itinerary: Sendable {
    /// A place the user is at from the end of an occurrence.
    public struct Stop: Sendable, Hashable {
        /// The end of the occurrence (a flight's arrival).
        public var end: Instant
        public var place: Leave.Place
        /// A flight's arrival airport: the start of the way to the first event after it, whatever the day.
        public var landing: Bool
        /// The occurrence's summary, for `why`.
        public var summary: String?

        public init(end: Instant, place: Leave.Place, landing: Bool = false, summary: String? = nil) {
            self.end = end
            self.place = place
            self.landing = landing
            self.summary = summary
        }

        /// Why the way from here starts here.
        var basis: Leave.OriginBasis { landing ? .landing(summary, end: end) : .previousEvent(summary, end: end) }
    }

    private struct State {
        var byOrigin: [Int32: [Stop]] = [:]
        /// Every origin's stops by end.
        var sorted: [Stop] = []
    }
    private let state = Locked(State())

    public init() {}

    /// Replaces the stops of one group; returns whether what the itinerary holds changed.
    @discardableResult public func replace(_ origin: Int32, with stops: [Stop]) -> Bool {
        state.withLock { state in
            let old = state.byOrigin[origin] ?? []
            guard Set(old) != Set(stops) else { return false }
            state.byOrigin[origin] = stops.isEmpty ? nil : stops
            state.sorted = state.byOrigin.values.joined().sorted { $0.end < $1.end }
            return true
        }
    }

    /// The last stop that ends at or before `instant`, when it ends no earlier than `since` (a landing: a day before).
    public func last(atOrBefore instant: Instant, since: Instant) -> Stop? {
        state.withLock { state in
            // The first stop ending after `instant`, then back over those before it.
            var low = 0
            var high = state.sorted.count
            while low < high {
                let middle = (low + high) / 2
                if state.sorted[middle].end <= instant { low = middle + 1 } else { high = middle }
            }
            // Only the last: an event after a landing is where the next way starts, not the airport.
            guard low > 0, case let stop = state.sorted[low - 1] else { return nil }
            return stop.end >= since || (stop.landing && stop.end >= instant.adding(seconds: -86_400)) ? stop : nil
        }
    }

    /// Whether any stop is held (nothing to look up otherwise).
    public var isEmpty: Bool { state.withLock { $0.sorted.isEmpty } }
}
