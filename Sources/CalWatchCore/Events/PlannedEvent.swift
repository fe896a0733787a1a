/// One event the planner found due, before the journal gives it a sequence number. Made whole and never changed:
/// its id is worked out before it exists, and its `payload` carries exactly the detail its type has.
public struct PlannedEvent: Hashable, Sendable {
    /// What the event says: one case per event type, each with the detail that type needs, so that a reminder
    /// without its offset or an answer without what it answered cannot be written.
    public enum Payload: Hashable, Sendable {
        case flightDetected
        case reminderDue(ReminderDetail)
        case liveActivityStart(LiveActivityDetail)
        case liveActivityUpdate(LiveActivityDetail)
        case liveActivityEnd(LiveActivityDetail, reason: LiveActivityDetail.EndReason)
        case reminderSnoozed(AnswerDetail)
        case reminderDismissed(AnswerDetail)
        case reminderAcknowledged(AnswerDetail)
        // Boxed: inline, the other occurrence they name made every event (most are minute updates) twice as large.
        indirect case conflictDetected(ConflictDetail)
        indirect case overrunDetected(OverrunDetail)
        case invitationPending(InvitationDetail)
        indirect case agendaDue(AgendaDetail)
        /// The time to get ready has come; `data.leave` says for when and why.
        case prepareDue
        /// What the flight-status service's answer changed.
        indirect case flightChanged(FlightChangeDetail)
        /// An account's sign-in lapsed; about the account, not an occurrence.
        indirect case accountSignInNeeded(AccountNotice)

        /// The event's type.
        public var type: EventType {
            switch self {
            case .flightDetected: .flightDetected
            case .reminderDue: .reminderDue
            case .liveActivityStart: .liveActivityStart
            case .liveActivityUpdate: .liveActivityUpdate
            case .liveActivityEnd: .liveActivityEnd
            case .reminderSnoozed: .reminderSnoozed
            case .reminderDismissed: .reminderDismissed
            case .reminderAcknowledged: .reminderAcknowledged
            case .conflictDetected: .conflictDetected
            case .overrunDetected: .overrunDetected
            case .invitationPending: .invitationPending
            case .agendaDue: .agendaDue
            case .prepareDue: .prepareDue
            case .flightChanged: .flightChanged
            case .accountSignInNeeded: .accountSignInNeeded
            }
        }
    }

    /// What the event says, with its detail.
    public let payload: Payload
    /// Deterministic: the same input yields the same id, so a restart or a second run never duplicates.
    public let id: EventID
    public let key: OccurrenceKey
    /// The occurrence as planned (its current start and end).
    public let occurrenceStart: Instant
    public let occurrenceEnd: Instant
    /// The scheduled instant: CloudEvents `time`.
    public let time: Instant
    /// After this the event is stale: CloudEvents `expirytime`.
    public let expiry: Instant
    /// A hash of the occurrence's reported fields (summary, location, end, status) when the event was planned;
    /// a live activity whose occurrence no longer matches is updated at once.
    public let fingerprint: UInt64

    package init(
        _ payload: Payload, id: EventID, key: OccurrenceKey, occurrenceStart: Instant, occurrenceEnd: Instant,
        time: Instant, expiry: Instant, fingerprint: UInt64
    ) {
        self.payload = payload
        self.id = id
        self.key = key
        self.occurrenceStart = occurrenceStart
        self.occurrenceEnd = occurrenceEnd
        self.time = time
        self.expiry = expiry
        self.fingerprint = fingerprint
    }

    /// The event's type.
    public var type: EventType { payload.type }

    /// A reminder's detail; `nil` for every other type.
    public var reminder: ReminderDetail? {
        if case .reminderDue(let detail) = payload { detail } else { nil }
    }

    /// A live activity's state; on its end, with the reason.
    public var liveActivity: LiveActivityDetail? {
        switch payload {
        case .liveActivityStart(let detail), .liveActivityUpdate(let detail): detail
        case .liveActivityEnd(let detail, let reason): detail.ending(reason)
        default: nil
        }
    }

    /// An answer's detail; `nil` for every other type.
    public var answer: AnswerDetail? {
        switch payload {
        case .reminderSnoozed(let detail), .reminderDismissed(let detail), .reminderAcknowledged(let detail): detail
        default: nil
        }
    }

    /// An account's notice; `nil` for every other type.
    public var account: AccountNotice? {
        if case .accountSignInNeeded(let notice) = payload { notice } else { nil }
    }

    /// The other occurrence a conflict is with, or the one that started while this one runs on; `nil` otherwise.
    public var other: OtherOccurrence? {
        switch payload {
        case .conflictDetected(let conflict): conflict.with
        case .overrunDetected(let overrun): overrun.next
        default: nil
        }
    }

    /// Every other occurrence a conflict or an overrun names: `other` first, then the rest of a crowded day's.
    public var others: [OtherOccurrence] {
        switch payload {
        case .conflictDetected(let conflict): [conflict.with] + conflict.alsoWith
        case .overrunDetected(let overrun): [overrun.next] + overrun.alsoRunning
        default: []
        }
    }

    /// CloudEvents `subject`: `<uid>/<occurrence start, UTC>`.
    public var subject: String { key.uid + "/" + (key.recurrenceID?.description ?? occurrenceStart.description) }
}
