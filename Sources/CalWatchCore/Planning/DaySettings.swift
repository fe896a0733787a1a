/// The day as a whole (config.yml `day:`, docs/configuration.md): overlapping meetings, one running on into the
/// next, the end of a meeting, unanswered invitations, a morning agenda, and the zone a trip puts the user in.
/// Without `day:` none of it is planned.
public struct DaySettings: Sendable, Hashable {
    /// The user's answers to an invitation that take part in conflicts and overruns. An item that is not an
    /// invitation to the user (their own, or one without attendees) always does.
    public enum Answer: String, Sendable, Hashable, CaseIterable {
        case accepted, tentative, needsAction

        /// The `PARTSTAT` this names.
        public var partstat: String {
            switch self {
            case .accepted: "ACCEPTED"
            case .tentative: "TENTATIVE"
            case .needsAction: "NEEDS-ACTION"
            }
        }
    }

    /// `conflictDetected` for two timed occurrences that overlap by more than `minOverlap`, `ahead` before the
    /// first starts (at once when the overlap appears later); `nil`: off.
    public struct Conflicts: Sendable, Hashable {
        public var minOverlap: Int64 = 300
        public var include: Set<Answer> = [.accepted]
        public var ahead: Int64 = 86_400
        public init() {}
    }

    public var conflicts: Conflicts? = Conflicts()
    /// `overrunDetected` when an occurrence starts while another that started earlier still runs.
    public var overruns = true
    /// A live activity's update at this long before the end has `phase: endingSoon` (0: never).
    public var endingSoon: Int64 = 300
    /// `invitationPending` this long before an occurrence the user has not answered (`PARTSTAT=NEEDS-ACTION`).
    public var pendingInvitations: [Int64] = []
    /// `agendaDue` at this time of day (minutes after midnight); `nil`: no agenda but the rules' own.
    public var agendaAt: Int?
    /// A delivered agenda is of use this long after its time: a daemon started in the afternoon does not send the
    /// morning's.
    public static let agendaUseful: Int64 = 4 * 3600
    /// A day with more busy timed occurrences than this is a shared calendar's (rooms, a whole team), not one
    /// person's: its overlaps are not reported as conflicts or overruns, which would be thousands an hour.
    public static let crowdedDay = 100
    /// Floating times, all-day items and the agenda follow the zone the detected flights take the user to.
    public var travelZone = false
    /// The user's home zone: the agenda's day, and where a trip comes back to.
    public var zone: ZoneRules = .utc

    public init() {}

    /// Whether an occurrence takes part in conflicts and overruns: timed, shorter than a day, busy, not cancelled,
    /// and either the user's own or answered as `conflicts.include` says (declined never).
    public func takesPart(_ occurrence: Occurrence, facts: OccurrenceFacts) -> Bool {
        let length = occurrence.end.secondsSinceEpoch - occurrence.start.secondsSinceEpoch
        guard !occurrence.allDay, occurrence.status != .cancelled, !occurrence.source.component.transparent,
            length > 0, length < 86_400
        else { return false }
        guard let answer = facts.participation else { return true }
        return (conflicts?.include ?? [.accepted]).contains { $0.partstat == answer }
    }

    /// The same, unless the first of `rules` that matches it says `conflicts: false`.
    public func takesPart(_ occurrence: Occurrence, facts: OccurrenceFacts, rules: [ReminderRule]) -> Bool {
        takesPart(occurrence, facts: facts)
            && (rules.isEmpty || rules.first { $0.matches(occurrence, facts: facts) }?.conflicts != false)
    }

    /// Whether two occurrences that take part overlap by more than `conflicts.minOverlap`.
    public func conflict(_ a: Occurrence, _ b: Occurrence) -> Bool {
        guard let conflicts else { return false }
        let overlap = min(a.end, b.end).secondsSinceEpoch - max(a.start, b.start).secondsSinceEpoch
        return overlap > conflicts.minOverlap
    }

    public static func == (a: DaySettings, b: DaySettings) -> Bool {
        a.conflicts == b.conflicts && a.overruns == b.overruns && a.endingSoon == b.endingSoon
            && a.pendingInvitations == b.pendingInvitations && a.agendaAt == b.agendaAt && a.travelZone == b.travelZone
            && a.zone.identifier == b.zone.identifier
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(conflicts)
        hasher.combine(agendaAt)
        hasher.combine(zone.identifier)
    }
}
