/// The typed events calwatch emits (docs/design.md §5).
public enum EventType: String, Sendable, CaseIterable, Hashable {
    case flightDetected, reminderDue, liveActivityStart, liveActivityUpdate, liveActivityEnd
    /// Answers to a reminder (`calwatch snooze`, `dismiss`, `ack`), on the stream like the events they answer.
    case reminderSnoozed, reminderDismissed, reminderAcknowledged

    /// The CloudEvents `type`: `calwatch.` and the event name.
    public var cloudEventType: String { "calwatch." + rawValue }
}

/// Which occurrence an event is about, stable across moves: a series instance is named by its RECURRENCE-ID,
/// a single event by its UID alone, so that moving either is seen as a change of the same occurrence.
///
/// The calendar is where the occurrence was found, not part of what it is (RFC 5545: a UID names one calendar
/// object wherever it is stored): keys that differ only in calendar are equal, and event ids leave it out. So a
/// collection folder renamed, or an item moved to another calendar, keeps its events and is not reminded again,
/// and one invitation kept in two calendars is reminded once.
public struct OccurrenceKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var calendar: String
    public var uid: String
    /// The original start of a series instance; `nil` for a single event.
    public var recurrenceID: DateValueText?

    /// Creates a key.
    public init(calendar: String, uid: String, recurrenceID: DateValueText?) {
        self.calendar = calendar
        self.uid = uid
        self.recurrenceID = recurrenceID
    }

    /// The key of an occurrence.
    public init(_ occurrence: Occurrence) {
        self.init(calendar: occurrence.calendar, uid: occurrence.uid, recurrenceID: occurrence.recurrenceID)
    }

    public static func == (a: OccurrenceKey, b: OccurrenceKey) -> Bool {
        a.uid == b.uid && a.recurrenceID == b.recurrenceID
    }

    public func hash(into hasher: inout Swift.Hasher) {
        hasher.combine(uid)
        hasher.combine(recurrenceID)
    }

    public static func < (a: OccurrenceKey, b: OccurrenceKey) -> Bool {
        (a.uid, a.recurrenceID?.description ?? "") < (b.uid, b.recurrenceID?.description ?? "")
    }

    public var description: String { "\(calendar)/\(uid)/\(recurrenceID?.description ?? "-")" }
}

/// What a reminder is about: how long before which anchor, and whether it comes late.
public struct ReminderDetail: Hashable, Sendable {
    /// What the reminder counts back from.
    public enum Anchor: String, Sendable, CaseIterable { case start, leaveBy }
    /// Where the reminder comes from: an offset, a calendar alarm, or a snooze of an earlier reminder.
    public enum Source: String, Sendable { case offset, valarm, snooze }

    public var secondsBefore: Int64
    public var anchor: Anchor
    public var source: Source
    /// Delivered after its scheduled time (calwatch was not running then).
    public var late: Bool
    /// How late, in seconds (0 when on time).
    public var lateness: Int64
    /// Which snooze of the occurrence brought it (1, 2, …); 0 for a reminder that was not snoozed.
    public var snoozeCount: Int
    /// Held back by quiet hours from this instant to its `time`.
    public var deferredFrom: Instant?

    package init(
        secondsBefore: Int64, anchor: Anchor, source: Source, late: Bool, lateness: Int64, snoozeCount: Int = 0,
        deferredFrom: Instant? = nil
    ) {
        self.deferredFrom = deferredFrom
        self.secondsBefore = secondsBefore
        self.anchor = anchor
        self.source = source
        self.late = late
        self.lateness = lateness
        self.snoozeCount = snoozeCount
    }
}

/// An answer to a reminder, as `reminderSnoozed`, `reminderDismissed` and `reminderAcknowledged` carry it.
public struct AnswerDetail: Hashable, Sendable {
    /// The event answered (a reminder's id, as hooks get it in `CE_ID`); `nil` when the occurrence was named.
    public var answered: EventID?
    /// A snooze's reminder instant.
    public var until: Instant?
    /// Which snooze of the occurrence this is (1, 2, …); 0 for a dismiss or an acknowledgement.
    public var count: Int

    package init(answered: EventID?, until: Instant?, count: Int) {
        self.answered = answered
        self.until = until
        self.count = count
    }
}

/// The state a live activity reports.
public struct LiveActivityDetail: Hashable, Sendable {
    /// Before the occurrence starts, or while it runs.
    public enum Phase: String, Sendable { case upcoming, inProgress }
    /// Why a live activity ended.
    public enum EndReason: String, Sendable { case ended, cancelled, removed, rescheduled, expired, dismissed }

    public var phase: Phase
    public var secondsToStart: Int64
    public var secondsToEnd: Int64
    /// 0 before the start, then the share of the occurrence that has passed (0...1).
    public var progress: Double
    /// Set on `liveActivityEnd` only (`PlannedEvent.liveActivity` sets it from the payload's reason).
    public var endReason: EndReason?

    /// The state of an occurrence `[start, end)` as seen at `instant`.
    public init(start: Instant, end: Instant, at instant: Instant, endReason: EndReason? = nil) {
        let toStart = start.secondsSinceEpoch - instant.secondsSinceEpoch
        let toEnd = end.secondsSinceEpoch - instant.secondsSinceEpoch
        let length = end.secondsSinceEpoch - start.secondsSinceEpoch
        phase = toStart > 0 ? .upcoming : .inProgress
        secondsToStart = max(0, toStart)
        secondsToEnd = max(0, toEnd)
        progress = toStart > 0 ? 0 : (length <= 0 ? 1 : min(1, Double(-toStart) / Double(length)))
        self.endReason = endReason
    }

    /// This state with the reason the activity ended.
    func ending(_ reason: EndReason) -> LiveActivityDetail {
        var ended = self
        ended.endReason = reason
        return ended
    }
}

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

    /// CloudEvents `subject`: `<uid>/<occurrence start, UTC>`.
    public var subject: String { key.uid + "/" + (key.recurrenceID?.description ?? occurrenceStart.description) }
}

extension Occurrence {
    /// Whether a CloudEvents subject names this occurrence: `UID/START` as `PlannedEvent.subject` writes it (START
    /// the RECURRENCE-ID of a series instance), or with the start it has now. Compared whole, so a UID holding a
    /// `/` is no trouble.
    public func isNamed(bySubject subject: String) -> Bool {
        guard subject.hasPrefix(uid), subject.dropFirst(uid.count).first == "/" else { return false }
        let instant = subject.dropFirst(uid.count + 1)
        return instant == start.description || recurrenceID.map { instant == $0.description } ?? false
    }
}
