/// Another occurrence an event names: the one a conflict is with, the one that has started while a meeting runs
/// on. Enough to show it and join it without looking it up.
public struct OtherOccurrence: Hashable, Sendable, Codable {
    public var uid: String
    public var recurrenceId: String?
    public var calendar: String
    public var summary: String?
    public var start: Instant
    public var end: Instant
    public var kind: OccurrenceFacts.Kind
    public var joinUrl: String?

    package init(_ occurrence: Occurrence, facts: OccurrenceFacts) {
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

/// `conflictDetected`: the event's occurrence overlaps `with` from `overlapStart` to `overlapEnd`, and each of
/// `alsoWith`. One event per occurrence, naming every occurrence that starts after it and overlaps it (`with` the
/// first of them), so a crowded day's conflicts grow with the day, not with its square. Reported `ahead` of its
/// start, or when the overlap appears (never late: it is news whenever it comes).
public struct ConflictDetail: Hashable, Sendable, Codable {
    public var with: OtherOccurrence
    public var overlapStart: Instant
    public var overlapEnd: Instant
    /// The other occurrences after `with` that it overlaps too, by start; empty for two meetings.
    public var alsoWith: [OtherOccurrence] = []

    public var overlapSeconds: Int64 { overlapEnd.secondsSinceEpoch - overlapStart.secondsSinceEpoch }

    package init(with: OtherOccurrence, overlapStart: Instant, overlapEnd: Instant, alsoWith: [OtherOccurrence] = []) {
        self.with = with
        self.overlapStart = overlapStart
        self.overlapEnd = overlapEnd
        self.alsoWith = alsoWith
    }

    private enum CodingKeys: String, CodingKey { case with, overlapStart, overlapEnd, alsoWith }

    /// Journals written before `alsoWith` lack it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        with = try container.decode(OtherOccurrence.self, forKey: .with)
        overlapStart = try container.decode(Instant.self, forKey: .overlapStart)
        overlapEnd = try container.decode(Instant.self, forKey: .overlapEnd)
        alsoWith = try container.decodeIfPresent([OtherOccurrence].self, forKey: .alsoWith) ?? []
    }
}

/// `overrunDetected`: the event's occurrence is still running and `next` has started; so are `alsoRunning`. One
/// event per occurrence that starts, on the one still running that started last.
public struct OverrunDetail: Hashable, Sendable, Codable {
    public var next: OtherOccurrence
    /// Reported after its instant (calwatch was not running then), in seconds; 0 when on time.
    public var lateness: Int64
    /// The other occurrences still running when `next` started, by start.
    public var alsoRunning: [OtherOccurrence] = []

    package init(next: OtherOccurrence, lateness: Int64, alsoRunning: [OtherOccurrence] = []) {
        self.next = next
        self.lateness = lateness
        self.alsoRunning = alsoRunning
    }

    private enum CodingKeys: String, CodingKey { case next, lateness, alsoRunning }

    /// Journals written before `alsoRunning` lack it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        next = try container.decode(OtherOccurrence.self, forKey: .next)
        lateness = try container.decode(Int64.self, forKey: .lateness)
        alsoRunning = try container.decodeIfPresent([OtherOccurrence].self, forKey: .alsoRunning) ?? []
    }
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
