/// What has been emitted so far, as far as planning is concerned: rebuilt from the journal by applying its events
/// in sequence order, so a restart continues exactly where the last run stopped.
public struct PlannerState: Sendable, Hashable {
    /// A live activity that has started and not ended.
    public struct ActiveActivity: Sendable, Hashable {
        public var occurrenceStart: Instant
        public var occurrenceEnd: Instant
        /// When the activity started (anchor − lead), which fixes its update grid and its maximum end.
        public var activityStart: Instant
        /// The occurrence's fields as last reported; a difference means the occurrence changed.
        public var fingerprint: String
        /// The scheduled instant of the last start or update.
        public var lastReport: Instant
    }

    /// Ids of every event already emitted.
    public var emitted: Set<String> = []
    /// Live activities running now.
    public var active: [OccurrenceKey: ActiveActivity] = [:]

    /// An empty state: nothing emitted yet.
    public init() {}

    /// Records an emitted event.
    public mutating func apply(_ event: PlannedEvent) {
        let fingerprint = event.fingerprint
        emitted.insert(event.id)
        switch event.type {
        case .liveActivityStart:
            active[event.key] = ActiveActivity(
                occurrenceStart: event.occurrenceStart, occurrenceEnd: event.occurrenceEnd, activityStart: event.time,
                fingerprint: fingerprint, lastReport: event.time)
        case .liveActivityUpdate:
            active[event.key]?.lastReport = event.time
            active[event.key]?.fingerprint = fingerprint
            active[event.key]?.occurrenceEnd = event.occurrenceEnd
        case .liveActivityEnd:
            active[event.key] = nil
        case .reminderDue, .flightDetected:
            break
        }
    }
}
