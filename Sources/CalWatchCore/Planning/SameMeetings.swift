/// One meeting kept in several calendars (the user's own, a shared team calendar, a delegate's): copies that start
/// at the same instant and share the join link, or, without one, the organizer and summary; and one flight that a
/// boarding pass joins, as a calendar has it and as the pass's own item (`WalletPassCalendar`). It is planned once: the
/// copy where the user is an attendee wins (an accepted one first), then the first by calendar and UID, so the
/// choice never depends on the order files are read in. `calwatch why` names every copy and the winner.
///
/// `PlanningLoop` registers every occurrence it is given here first; a copy that does not win is neither planned
/// nor counted in the day's conflicts and agenda, and when the winner's file goes the next copy takes its place.
package struct SameMeetings {
    /// One copy: an occurrence as found in one calendar.
    package struct Copy {
        package var occurrence: Occurrence
        package var facts: OccurrenceFacts
        var origin: PlanningLoop.Origin
        /// The key with its calendar: copies of one UID in two calendars are two copies.
        package let id: String
        /// `identity`: the copies of one meeting share it.
        package let group: String?

        package init(_ occurrence: Occurrence, facts: OccurrenceFacts, origin: PlanningLoop.Origin = 0) {
            self.occurrence = occurrence
            self.facts = facts
            self.origin = origin
            group = SameMeetings.identity(occurrence, facts: facts)
            id = group == nil ? "" : occurrence.calendar + "\n" + OccurrenceKey(occurrence).description
        }
    }

    private var groups: [String: [Copy]] = [:]
    /// The group each copy is in, by `Copy.id`.
    private var groupOf: [String: String] = [:]
    /// The copies each origin brought, by `Copy.id`.
    private var copiesOf: [PlanningLoop.Origin: Set<String>] = [:]

    /// What makes copies the same meeting: the start with the join link, or with the organizer and summary; `nil`
    /// for an occurrence with neither (it is never grouped).
    package static func identity(_ occurrence: Occurrence, facts: OccurrenceFacts) -> String? {
        guard !occurrence.allDay else { return nil }
        // A flight a boarding pass joins: the pass's own item (`WalletPassCalendar`) and the calendar's flight are
        // one flight, whatever time each gives.
        if let leg = facts.flight?.pass {
            return occurrence.scope + " flight " + leg.code + " " + String(leg.dayOfYear) + " " + leg.bookingReference
        }
        // Copies are one person's: in a fleet, the same meeting in two people's calendars is reminded to each.
        let start = occurrence.scope + " " + String(occurrence.start.secondsSinceEpoch)
        if let link = facts.joinURL { return start + " link " + link }
        guard let organizer = occurrence.source.component.organizer, let summary = occurrence.summary else {
            return nil
        }
        return start + " organizer " + organizer + " " + summary.lowercased()
    }

    /// The copy planned: where the user is an attendee (accepted first), then the first by calendar and UID.
    package static func winner(_ copies: [Copy]) -> Copy? {
        func rank(_ copy: Copy) -> (Int, Int, Int, String, String) {
            let answer = copy.facts.participation
            return (
                // A calendar's flight before a boarding pass's own item.
                copy.occurrence.uid.hasSuffix(WalletPassCalendar.uidSuffix) ? 1 : 0,
                answer == nil ? 1 : 0, answer == "ACCEPTED" ? 0 : 1, copy.occurrence.calendar.lowercased(),
                copy.occurrence.uid
            )
        }
        return copies.min { rank($0) < rank($1) }
    }

    /// Registers a copy. Says whether it is to be planned (it wins its group), and which copy it displaced as the
    /// winner (to be planned no more) when that is another.
    mutating func register(_ copy: Copy) -> (plan: Bool, displaced: Copy?, reinstated: Copy?) {
        var reinstated: Copy?
        guard let group = copy.group else {
            // One that was grouped and lost its link and organizer leaves its group.
            guard !groupOf.isEmpty else { return (true, nil, nil) }
            let id = copy.occurrence.calendar + "\n" + OccurrenceKey(copy.occurrence).description
            return (true, nil, groupOf[id].flatMap { unregister(id, from: $0) })
        }
        // Each key is looked up once: the group swapped in for the old one, the group's copies changed in place
        // (a replay registers 49,000 copies before planning, and their long keys cost most of that).
        let id = copy.id
        if let old = groupOf.updateValue(group, forKey: id), old != group { reinstated = leave(id, group: old) }
        copiesOf[copy.origin, default: []].insert(id)
        let (plan, displaced) = Self.join(copy, &groups[group, default: []])
        return (plan, displaced, reinstated)
    }

    /// Room for `count` more copies from `origin`, made at once rather than by growing a copy at a time.
    mutating func reserveCapacity(_ count: Int, origin: PlanningLoop.Origin) {
        groupOf.reserveCapacity(groupOf.count + count)
        groups.reserveCapacity(groups.count + count)
        copiesOf[origin, default: []].reserveCapacity((copiesOf[origin]?.count ?? 0) + count)
    }

    /// Puts `copy` among `copies` in place of an earlier version of it; whether it wins, and the winner it displaced.
    private static func join(_ copy: Copy, _ copies: inout [Copy]) -> (plan: Bool, displaced: Copy?) {
        let before = winner(copies)
        copies.removeAll { $0.id == copy.id }
        copies.append(copy)
        guard winner(copies)?.id == copy.id else { return (false, nil) }
        return (true, before.flatMap { $0.id == copy.id ? nil : $0 })
    }

    /// Whether a copy still wins its group (one that waited to be admitted may have lost since).
    func wins(id: String, group: String?) -> Bool {
        guard let group, let copies = groups[group] else { return true }
        return Self.winner(copies)?.id == id
    }

    /// Forgets `origin`'s copies; returns the copies that win now in their place.
    mutating func remove(origin: PlanningLoop.Origin) -> [Copy] {
        var reinstated: [Copy] = []
        for id in copiesOf.removeValue(forKey: origin) ?? [] {
            guard let group = groupOf[id], groups[group]?.first(where: { $0.id == id })?.origin == origin else {
                continue
            }
            if let next = unregister(id, from: group) { reinstated.append(next) }
        }
        return reinstated
    }

    /// Takes a copy out of its group; returns the group's new winner when the copy was the winner.
    private mutating func unregister(_ id: String, from group: String) -> Copy? {
        groupOf[id] = nil
        return leave(id, group: group)
    }

    /// `unregister` but for `groupOf`, which the caller sets.
    private mutating func leave(_ id: String, group: String) -> Copy? {
        guard let copies = groups[group] else { return nil }
        let wasWinner = Self.winner(copies)?.id == id
        let rest = copies.filter { $0.id != id }
        groups[group] = rest.isEmpty ? nil : rest
        return wasWinner ? Self.winner(rest) : nil
    }

    /// Forgets the copies that ended before `instant`.
    mutating func forget(endedBefore instant: Instant) {
        // Most groups lose nothing at a prune: looked at in place, not filtered into a new array (which copied
        // every copy's occurrence, its strings retained and released, for each group at each prune). Those that do
        // are picked out first: changing `groups` while going through it copied the whole dictionary.
        let ending = groups.filter { $0.value.contains { $0.occurrence.end < instant } }
        for (group, copies) in ending {
            let kept = copies.filter { $0.occurrence.end >= instant }
            for copy in copies where copy.occurrence.end < instant {
                groupOf[copy.id] = nil
                copiesOf[copy.origin]?.remove(copy.id)
            }
            groups[group] = kept.isEmpty ? nil : kept
        }
    }
}
