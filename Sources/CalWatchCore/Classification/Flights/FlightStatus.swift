public import Foundation

/// What a flight-status service (`flights.status`) said of one flight on one day, in its own words reduced to what
/// planning and the user need: when it now leaves and from where, and whether it leaves at all.
public struct FlightStatus: Sendable, Hashable, Codable {
    public enum State: String, Sendable, Hashable, Codable {
        case scheduled, delayed, boarding, departed, landed, cancelled, diverted, unknown
    }

    /// The service's name as its documentation writes it: `AeroDataBox`, `AeroAPI`, `aviationstack`.
    public var provider: String
    /// When the service was asked.
    public var asked: Instant
    public var state: State
    /// The departure the service has on its schedule.
    public var scheduled: Instant?
    /// The departure it expects now (revised, estimated or actual), and the field of its answer that said so.
    public var expected: Instant?
    public var expectedField: String?
    public var gate: String?
    public var terminal: String?
    /// The airport a diverted flight goes to instead (IATA), when the service says.
    public var divertedTo: String?

    public init(
        provider: String, asked: Instant, state: State, scheduled: Instant? = nil, expected: Instant? = nil,
        expectedField: String? = nil, gate: String? = nil, terminal: String? = nil, divertedTo: String? = nil
    ) {
        self.provider = provider
        self.asked = asked
        self.state = state
        self.scheduled = scheduled
        self.expected = expected
        self.expectedField = expectedField
        self.gate = gate
        self.terminal = terminal
        self.divertedTo = divertedTo
    }

    /// The same answer without what makes two answers differ though nothing changed for the user.
    var news: FlightStatus {
        var copy = self
        copy.asked = Instant(secondsSinceEpoch: 0)
        return copy
    }
}

/// A flight's live status as planning uses it (`FlightFacts.live`): the service's last answer, the departure in
/// force, and the changes the answers brought, each a `flightChanged` event.
public struct LiveFlight: Sendable, Hashable, Codable {
    public var status: FlightStatus
    /// The departure reminders and the time to leave count from; `nil` while the calendar's stands (the service
    /// never moved it by more than `travel.replanAfter`).
    public var departure: Instant?
    /// What each answer changed, oldest first.
    public var changes: [FlightChangeDetail]

    public init(status: FlightStatus, departure: Instant? = nil, changes: [FlightChangeDetail] = []) {
        self.status = status
        self.departure = departure
        self.changes = changes
    }

    /// The flight does not leave: nothing to leave for, nothing to remind.
    public var cancelled: Bool { status.state == .cancelled }

    /// The service's word when it is news, for cards, pushes and the page: "Cancelled", "Diverted to MAN",
    /// "Departs 19:55 (+35 min)" on `zone`'s clock against the calendar's departure `calendar`; `nil` otherwise.
    public func headline(calendar: Instant, zone: ZoneRules) -> String? {
        if cancelled { return "Cancelled" }
        if let airport = status.divertedTo, status.state == .diverted { return "Diverted to \(airport)" }
        guard let departure else { return nil }
        let minutes = (departure.secondsSinceEpoch - calendar.secondsSinceEpoch) / 60
        return "Departs \(NextUpFormat.clockTime(departure, zone: zone))"
            + (minutes == 0 ? "" : " (\(minutes > 0 ? "+" : "−")\(abs(minutes)) min)")
    }

    /// Where the departure in force came from, for `why` and `explain`: "departure 20:55, +35 min, AeroDataBox
    /// revisedTime, asked 17:12; delayed, gate A7, terminal 5", instants shown by `shown`, the delay counted from
    /// the calendar's departure `calendar`.
    public func details(calendar: Instant, shown: (Instant) -> String) -> String {
        var text: String
        if let departure {
            let minutes = (departure.secondsSinceEpoch - calendar.secondsSinceEpoch) / 60
            text = "departure \(shown(departure)), \(minutes >= 0 ? "+" : "−")\(abs(minutes)) min, \(status.provider)"
            if let field = status.expectedField { text += " \(field)" }
        } else {
            text = "departure as the calendar has it (\(status.provider) differs by at most travel.replanAfter)"
        }
        text += ", asked \(shown(status.asked)); \(status.state.rawValue)"
        if let gate = status.gate { text += ", gate \(gate)" }
        if let terminal = status.terminal { text += ", terminal \(terminal)" }
        if let airport = status.divertedTo { text += ", diverted to \(airport)" }
        return text
    }
}

/// `flightChanged`: what one answer of the flight-status service changed, each field from what it was to what it
/// is (`departure` as instants, `status` as `FlightStatus.State`).
public struct FlightChangeDetail: Sendable, Hashable, Codable {
    public struct Difference: Sendable, Hashable, Codable {
        /// `departure`, `gate`, `terminal`, `status` or `divertedTo`.
        public var field: String
        public var from: String?
        public var to: String?

        public init(field: String, from: String?, to: String?) {
            self.field = field
            self.from = from
            self.to = to
        }
    }

    public var changes: [Difference]
    public var provider: String
    /// When the service was asked.
    public var asked: Instant

    public init(changes: [Difference], provider: String, asked: Instant) {
        self.changes = changes
        self.provider = provider
        self.asked = asked
    }

    /// `gate B12 → A7, departure 19:20 → 19:55`: for logs, `why` and the event's identity.
    public var text: String {
        changes.map { "\($0.field) \($0.from ?? "none") → \($0.to ?? "none")" }.joined(separator: ", ")
    }
}

/// The live status of the flights planning has seen (`flights.status`), shared between planning (which reads it
/// and so says which flights it has: `live(for:scheduled:origin:)`) and the service that asks (`FlightStatusPoller`), and kept beside the
/// journal with the month's count of requests, so a restart neither asks again nor forgets the budget.
public final class FlightStatusCache: Sendable {
    /// A flight on a day: `BA286 2026-12-03`, the date on the origin airport's clock.
    public struct Key: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
        public var code: String
        public var date: String

        public init(code: String, date: String) {
            self.code = code
            self.date = date
        }

        public var description: String { code + " " + date }
        public static func < (a: Key, b: Key) -> Bool { (a.date, a.code) < (b.date, b.code) }
    }

    /// A flight planning has: when the calendar says it leaves, and from which airport (IATA), which the services
    /// need to tell a flight number's legs apart.
    public struct Tracked: Sendable, Hashable {
        public var key: Key
        public var scheduled: Instant
        public var origin: String?

        public init(key: Key, scheduled: Instant, origin: String?) {
            self.key = key
            self.scheduled = scheduled
            self.origin = origin
        }
    }

    private struct State {
        var flights: [Key: LiveFlight] = [:]
        var tracked: [Key: Tracked] = [:]
        /// `2026-11`: the month (UTC) `spent` counts.
        var month = ""
        var spent = 0
    }
    private let state: Locked<State>

    /// Flights kept: more than planning's horizon ever holds.
    static let most = 500

    public init() { state = Locked(State()) }

    /// What `encoded()` wrote; an empty cache when it cannot be read.
    public init(data: Data) {
        var state = State()
        if let file = try? JSONDecoder().decode(File.self, from: data) {
            state.month = file.month
            state.spent = max(0, file.spent)
            for entry in file.flights.prefix(Self.most) { state.flights[entry.key] = entry.live }
        }
        self.state = Locked(state)
    }

    private struct File: Codable {
        struct Entry: Codable {
            var key: Key
            var live: LiveFlight
        }
        var month: String
        var spent: Int
        var flights: [Entry]
    }

    /// The cache as its file holds it.
    public func encoded() -> Data {
        let file = state.withLock { state in
            File(
                month: state.month, spent: state.spent,
                flights: state.flights.sorted { $0.key < $1.key }.map { File.Entry(key: $0.key, live: $0.value) })
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(file)) ?? Data()
    }

    /// The live status of `key`, which planning has leaving at `scheduled` from `origin`: the service is asked
    /// about it from now on.
    public func live(for key: Key, scheduled: Instant, origin: String?) -> LiveFlight? {
        state.withLock { state in
            let tracked = Tracked(key: key, scheduled: scheduled, origin: origin)
            if state.tracked[key] != tracked, state.tracked.count < Self.most || state.tracked[key] != nil {
                state.tracked[key] = tracked
            }
            return state.flights[key]
        }
    }

    /// The live status of `key`, without tracking it.
    public func live(for key: Key) -> LiveFlight? { state.withLock { $0.flights[key] } }

    /// The flights planning has that have not left by `now` (the departure in force), earliest first.
    public func tracked(before now: Instant) -> [(flight: Tracked, live: LiveFlight?)] {
        state.withLock { state in
            state.tracked = state.tracked.filter { key, flight in
                (state.flights[key]?.departure ?? flight.scheduled) > now.adding(seconds: -86_400)
            }
            return state.tracked.values.map { ($0, state.flights[$0.key]) }
                .filter { ($0.live?.departure ?? $0.flight.scheduled) > now }
                .sorted {
                    ($0.live?.departure ?? $0.flight.scheduled, $0.flight.key) < (
                        $1.live?.departure ?? $1.flight.scheduled, $1.flight.key
                    )
                }
        }
    }

    /// Counts one request against `budget` a month (UTC); `false`, counting nothing, when the month's are spent.
    public func spend(at now: Instant, budget: Int) -> Bool {
        let month = String(now.description.prefix(7))
        return state.withLock { state in
            if state.month != month {
                state.month = month
                state.spent = 0
            }
            guard state.spent < budget else { return false }
            state.spent += 1
            return true
        }
    }

    /// Requests counted this month.
    public func spent(at now: Instant) -> Int {
        let month = String(now.description.prefix(7))
        return state.withLock { $0.month == month ? $0.spent : 0 }
    }

    /// Keeps an answer for `key`. The departure in force moves only when the service's differs from it by more
    /// than `threshold` seconds (a minute's difference is not worth new reminders); a moved departure, a new gate or
    /// terminal, a cancellation or a diversion is recorded as a change. Returns whether planning sees anything new.
    @discardableResult public func store(_ status: FlightStatus, for key: Key, threshold: Int64) -> Bool {
        state.withLock { state in
            let previous = state.flights[key]
            let calendar = state.tracked[key]?.scheduled ?? status.scheduled
            var live = previous ?? LiveFlight(status: status)
            var differences: [FlightChangeDetail.Difference] = []
            let inForce = previous?.departure ?? calendar
            if let proposed = status.expected ?? status.scheduled, let inForce {
                let moved = abs(proposed.secondsSinceEpoch - inForce.secondsSinceEpoch)
                if moved > threshold {
                    differences.append(.init(field: "departure", from: inForce.description, to: proposed.description))
                    live.departure = proposed
                }
            }
            let before = previous?.status
            if status.state != before?.state ?? .scheduled,
                [.cancelled, .diverted].contains(status.state)
                    || [.cancelled, .diverted].contains(before?.state ?? .scheduled)
            {
                differences.append(
                    .init(
                        field: "status", from: (before?.state ?? .scheduled).rawValue, to: status.state.rawValue))
            }
            if let before {
                if status.gate != before.gate, status.gate != nil {
                    differences.append(.init(field: "gate", from: before.gate, to: status.gate))
                }
                if status.terminal != before.terminal, status.terminal != nil {
                    differences.append(.init(field: "terminal", from: before.terminal, to: status.terminal))
                }
            }
            if status.divertedTo != nil, status.divertedTo != before?.divertedTo {
                differences.append(.init(field: "divertedTo", from: before?.divertedTo, to: status.divertedTo))
            }
            if !differences.isEmpty {
                live.changes.append(
                    FlightChangeDetail(changes: differences, provider: status.provider, asked: status.asked))
                // A flight's day brings a handful; a service that flaps is not kept without end.
                if live.changes.count > 20 { live.changes.removeFirst(live.changes.count - 20) }
            }
            live.status = status
            state.flights[key] = live
            if state.flights.count > Self.most, let oldest = state.flights.keys.min() {
                state.flights[oldest] = nil
            }
            return !differences.isEmpty || before?.news != status.news
        }
    }

    /// How long after the last request a flight leaving at `departure` is asked again at `now`: hourly from a day
    /// before, every 10 minutes in the last 3 hours; `nil` outside the day before it. A wallet pass's web service is
    /// asked on the same schedule.
    public static func interval(departure: Instant, now: Instant) -> Int64? {
        let left = departure.secondsSinceEpoch - now.secondsSinceEpoch
        guard left > 0, left <= 86_400 else { return nil }
        return left <= 3 * 3600 ? 600 : 3600
    }
}
