/// Another occurrence an event names: the one a conflict is with, the one that has started while a meeting runs
/// on. Enough to show it and join it without looking it up.
public struct OtherOccurrence: Hashable, Sendable, Codable {
    public var uid: String
    public var recurrenceId: String?
    public var calendar: String
    public var summary: String?
    public var start: Instant
    public var end: Instant
    public var kind: PlanningFacts.Kind
    public var joinUrl: String?

    package init(_ occurrence: Occurrence, facts: PlanningFacts) {
        uid = occurrence.uid
        recurrenceId = occurrence.recurrenceID?.description
        calendar = occurrence.calendar
        summary = occurrence.summary
        start = occurrence.start
        end = occurrence.end
        kind = facts.kind
        joinUrl = facts.joinURL
    }
}

/// `conflictDetected`: the event's occurrence overlaps `with` from `overlapStart` to `overlapEnd`. Reported `ahead`
/// of the first start, or when the overlap appears (never late: it is news whenever it comes).
public struct ConflictDetail: Hashable, Sendable, Codable {
    public var with: OtherOccurrence
    public var overlapStart: Instant
    public var overlapEnd: Instant

    public var overlapSeconds: Int64 { overlapEnd.secondsSinceEpoch - overlapStart.secondsSinceEpoch }
}

/// `overrunDetected`: the event's occurrence is still running and `next` has started.
public struct OverrunDetail: Hashable, Sendable, Codable {
    public var next: OtherOccurrence
    /// Reported after its instant (calwatch was not running then), in seconds; 0 when on time.
    public var lateness: Int64
}

/// `invitationPending`: the user has not answered the occurrence's invitation (`PARTSTAT=NEEDS-ACTION`).
public struct InvitationDetail: Hashable, Sendable, Codable {
    /// Which of `day.pendingInvitations` this is, in seconds before the start.
    public var secondsBefore: Int64
    public var organizer: String?
    public var lateness: Int64
}

/// `agendaDue`: the day's occurrences in order, at `day.agendaAt`.
public struct AgendaDetail: Hashable, Sendable, Codable {
    /// One occurrence of the day.
    public struct Item: Hashable, Sendable, Codable {
        public var occurrence: OtherOccurrence
        public var allDay: Bool
        public var location: String?
        public var leaveBy: Instant?
        /// The user's own answer (`ACCEPTED`, `NEEDS-ACTION`, …); `nil` for an item that is not an invitation.
        public var participation: String?
        /// The UIDs of the day's items this one conflicts with.
        public var conflicts: [String]
    }

    /// The day, `YYYY-MM-DD`, in `zone`.
    public var date: String
    /// The zone the day is counted in: the configured one, or where a trip takes the user (`day.travelZone`).
    public var zone: String
    public var items: [Item]
    public var lateness: Int64
}
