/// What has been emitted so far, as far as planning is concerned: rebuilt from the journal by applying its events
/// in sequence order, so a restart continues exactly where the last run stopped.
///
/// It stays small however long calwatch runs: an event's id is needed only until the event expires (the planner
/// never proposes an event past its expiry), so `forget(expiredBefore:)` drops the rest.
public struct PlannerState: Sendable, Hashable {
    /// A live activity that has started and not ended.
    public struct ActiveActivity: Sendable, Hashable {
        public var occurrenceStart: Instant
        public var occurrenceEnd: Instant
        /// When the activity started (anchor − lead), which fixes its update grid and its maximum end.
        public var activityStart: Instant
        /// The hash of the occurrence's fields as last reported; a difference means the occurrence changed.
        public var fingerprint: UInt64
        /// The scheduled instant of the last start or update.
        public var lastReport: Instant

        /// An update was emitted, scheduled `at`, about the occurrence as `fingerprint` and `end` say.
        mutating func reported(at time: Instant, fingerprint: UInt64, end: Instant) {
            lastReport = time
            self.fingerprint = fingerprint
            occurrenceEnd = end
        }
    }

    /// Ids of the events emitted and not yet expired, with their expiry.
    public private(set) var emitted: [EventID: Instant] = [:]
    /// Live activities running now.
    public var active: [OccurrenceKey: ActiveActivity] = [:]

    /// What the user answered about an occurrence's reminders.
    public struct Answers: Sendable, Hashable {
        /// When it was dismissed or acknowledged: no reminder comes after that.
        public var silenced: Instant?
        /// Dismissed (not only acknowledged): its live activity ends too.
        public var dismissed = false
        /// Snoozes, in order: each brings one reminder at its instant.
        public var snoozes: [Instant] = []
        /// Kept until a day after the occurrence ends.
        public var occurrenceEnd: Instant
    }

    /// Answers by occurrence.
    public var answers: [OccurrenceKey: Answers] = [:]

    /// An empty state: nothing emitted yet.
    public init() {}

    /// Whether an event with this id has been emitted.
    public func hasEmitted(_ id: EventID) -> Bool { emitted[id] != nil }

    /// Records an emitted event.
    public mutating func apply(_ event: PlannedEvent) {
        let fingerprint = event.fingerprint
        emitted[event.id] = event.expiry
        switch event.type {
        case .liveActivityStart:
            active[event.key] = ActiveActivity(
                occurrenceStart: event.occurrenceStart, occurrenceEnd: event.occurrenceEnd, activityStart: event.time,
                fingerprint: fingerprint, lastReport: event.time)
        case .liveActivityUpdate:
            // One look-up of the key, not one per field: updates are most of the events.
            active[event.key]?.reported(at: event.time, fingerprint: fingerprint, end: event.occurrenceEnd)
        case .liveActivityEnd:
            active[event.key] = nil
        case .reminderDue, .flightDetected, .conflictDetected, .overrunDetected, .invitationPending, .agendaDue,
            .prepareDue, .flightChanged, .accountSignInNeeded:
            break
        case .reminderSnoozed, .reminderDismissed, .reminderAcknowledged:
            var answers = self.answers[event.key] ?? Answers(occurrenceEnd: event.occurrenceEnd)
            switch event.type {
            case .reminderSnoozed: if let until = event.answer?.until { answers.snoozes.append(until) }
            case .reminderDismissed:
                answers.silenced = answers.silenced ?? event.time
                answers.dismissed = true
            default: answers.silenced = answers.silenced ?? event.time
            }
            self.answers[event.key] = answers
        }
    }

    /// When this watcher took each calendar of a fleet over from another (by scope): what was due before then
    /// comes marked late whatever its lateness, since the user was waiting on the hand-over.
    public var takenOver: [String: Instant] = [:]

    /// Calendars of a fleet taken over from other watchers at one instant, with what those delivered about them.
    public struct HandOver: Sendable {
        public var scopes: Set<String>
        public var at: Instant
        public var delivered: [Delivered]

        public init(scopes: Set<String>, at: Instant, delivered: [Delivered]) {
            self.scopes = scopes
            self.at = at
            self.delivered = delivered
        }
    }

    /// Takes calendars over (`HandOver`): what was delivered counts as emitted (`inherit`), and what was due
    /// before the hand-over is marked late.
    public mutating func take(_ handOver: HandOver) {
        for scope in handOver.scopes { takenOver[scope] = handOver.at }
        inherit(handOver.delivered)
    }

    /// The lateness below which an event due at `time` about `key` is not marked late: `grace`, or none for
    /// what was due before its calendar was taken over from another watcher.
    func grace(_ grace: Int64, for key: OccurrenceKey, dueAt time: Instant) -> Int64 {
        guard !takenOver.isEmpty, let at = takenOver[key.scope], time < at else { return grace }
        return 0
    }

    /// An event another watcher of a fleet delivered, as the database that records deliveries has it.
    public struct Delivered: Sendable, Hashable {
        public var id: EventID
        public var type: EventType
        public var key: OccurrenceKey
        public var occurrenceStart: Instant
        public var occurrenceEnd: Instant
        public var time: Instant
        public var expiry: Instant
        /// A snooze's reminder instant.
        public var snoozedUntil: Instant?

        public init(
            id: EventID, type: EventType, key: OccurrenceKey, occurrenceStart: Instant, occurrenceEnd: Instant,
            time: Instant, expiry: Instant, snoozedUntil: Instant? = nil
        ) {
            self.id = id
            self.type = type
            self.key = key
            self.occurrenceStart = occurrenceStart
            self.occurrenceEnd = occurrenceEnd
            self.time = time
            self.expiry = expiry
            self.snoozedUntil = snoozedUntil
        }
    }

    /// Takes over what another watcher delivered about calendars this one now holds (a fleet's hand-over): those
    /// ids count as emitted, its running live activities go on from their last report, its answers hold. Applied
    /// by time; where this journal knows more (a later report), it stays. A live activity's fingerprint is not
    /// recorded there, so the first report after a hand-over does not count as a change.
    public mutating func inherit(_ delivered: [Delivered]) {
        let rank: (EventType) -> Int = { type in
            switch type {
            case .liveActivityEnd: 0
            case .liveActivityStart: 1
            default: 2
            }
        }
        for event in delivered.sorted(by: { ($0.time, rank($0.type)) < ($1.time, rank($1.type)) }) {
            emitted[event.id] = emitted[event.id] ?? event.expiry
            switch event.type {
            case .liveActivityStart:
                guard active[event.key].map({ $0.lastReport < event.time }) ?? true else { continue }
                active[event.key] = ActiveActivity(
                    occurrenceStart: event.occurrenceStart, occurrenceEnd: event.occurrenceEnd,
                    activityStart: event.time, fingerprint: Self.unknownFingerprint, lastReport: event.time)
            case .liveActivityUpdate:
                if let running = active[event.key], running.lastReport < event.time {
                    active[event.key]?.lastReport = event.time
                }
            case .liveActivityEnd:
                if let running = active[event.key], running.lastReport <= event.time { active[event.key] = nil }
            case .reminderSnoozed, .reminderDismissed, .reminderAcknowledged:
                var answers = self.answers[event.key] ?? Answers(occurrenceEnd: event.occurrenceEnd)
                switch event.type {
                case .reminderSnoozed:
                    if let until = event.snoozedUntil, !answers.snoozes.contains(until) {
                        answers.snoozes.append(until)
                    }
                case .reminderDismissed:
                    answers.silenced = min(answers.silenced ?? event.time, event.time)
                    answers.dismissed = true
                default: answers.silenced = min(answers.silenced ?? event.time, event.time)
                }
                self.answers[event.key] = answers
            default: break
            }
        }
    }

    /// Forgets the live activities and answers of occurrences outside `scopes`: calendars another watcher of a
    /// fleet holds now, which go on there. (Their ids may stay: this watcher never plans them.)
    public mutating func keep(scopes: Set<String>) {
        active = active.filter { scopes.contains($0.key.scope) }
        answers = answers.filter { scopes.contains($0.key.scope) }
        takenOver = takenOver.filter { scopes.contains($0.key) }
    }

    /// The fingerprint of a live activity taken over from another watcher, which did not record it: the planner
    /// takes the occurrence's own at the next report instead of reporting a change.
    public static let unknownFingerprint: UInt64 = 0

    /// Counts an event as delivered without delivering it: a reminder another copy of the same meeting delivered
    /// under its own id. Not journaled; once a later reminder of the copy is delivered, the planner's rule that
    /// no earlier one comes after it holds across a restart too.
    public mutating func assumeDelivered(_ id: EventID, expiry: Instant) {
        emitted[id] = emitted[id] ?? expiry
    }

    /// Drops the ids of events that expired before `instant`: planning at `instant` or later never needs them.
    public mutating func forget(expiredBefore instant: Instant) {
        // Into a table as large as before: ids keep coming at the same pace, and a table grown again from the few
        // kept rehashed every id at each doubling.
        var kept = [EventID: Instant](minimumCapacity: emitted.capacity)
        for (id, expiry) in emitted where expiry >= instant { kept[id] = expiry }
        emitted = kept
        answers = answers.filter { $0.value.occurrenceEnd.adding(seconds: 86_400) >= instant }
    }
}
