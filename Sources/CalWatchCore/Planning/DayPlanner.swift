/// What concerns more than one occurrence (config.yml `day:`): two that overlap (`conflictDetected`), one that
/// starts while another still runs (`overrunDetected`), and each day's agenda (`agendaDue`). `PlanningLoop` keeps it
/// beside the per-occurrence planner and hands it every occurrence it is given, admitted or still waiting.
///
/// It holds the occurrences by the UTC day they start on, a whole day at once two days before it (the loop is given
/// occurrences up to the flight horizon ahead), so a changed occurrence is compared with those of its own and the
/// neighbouring days only, and a day too crowded to be one person's is known before any of its pairs is proposed.
/// Conflicts and overruns are one event per occurrence, not per pair, so their number grows with the day and not
/// with its square: a conflict on each occurrence naming every later one it overlaps, an overrun on each start
/// naming every occurrence still running. The events it can propose wait in a heap by instant; one whose
/// occurrences changed before it came up is dropped, and proposed again under a new id, so a conflict is reported
/// once and again when any occurrence it names changes.
struct DayPlanner {
    let settings: DaySettings
    let configuration: PlannerConfiguration

    /// An occurrence as the day sees it.
    struct Item {
        var occurrence: Occurrence
        var facts: OccurrenceFacts
        var origin: PlanningLoop.Origin
        var key: OccurrenceKey
        /// Its times and the fields events report, hashed: an `add` that changes none of them changes nothing.
        var fingerprint: UInt64
        /// The first rule that matches it.
        var rule: Int?
        /// It takes part in conflicts and overruns (`DaySettings.takesPart`, and its rule does not say otherwise).
        var busy: Bool

        var startDay: Int64 { Self.day(occurrence.start) }
        static func day(_ instant: Instant) -> Int64 {
            instant.secondsSinceEpoch >= 0
                ? instant.secondsSinceEpoch / 86_400 : (instant.secondsSinceEpoch - 86_399) / 86_400
        }
    }

    /// A conflict or an overrun, waiting for its instant. A conflict is about `first` and names `second` and `also`,
    /// which start after it; an overrun is about `first`, still running when `second` started, as `also` are.
    private struct Candidate {
        enum Kind { case conflict, overrun }
        var kind: Kind
        var first: OccurrenceKey
        var second: OccurrenceKey
        var also: [OccurrenceKey] = []
        var time: Instant
        var expiry: Instant

        /// The occurrence whose changes propose it again: a conflict's own, an overrun's starting one.
        var owner: OccurrenceKey { kind == .conflict ? first : second }
        var keys: [OccurrenceKey] { [first, second] + also }
    }

    /// A daily agenda: the global one (`rule` nil) or a rule's own.
    private struct Schedule {
        var rule: Int?
        var minutes: Int
        /// The next day (local, days since 1970) to send it for; found at the first plan.
        var nextDay: Int64?
    }

    private var items: [OccurrenceKey: Item] = [:]
    private var keysOf: [PlanningLoop.Origin: [OccurrenceKey]] = [:]
    private var startingOn: [Int64: Set<OccurrenceKey>] = [:]
    /// How many of them take part in conflicts, by the same day.
    private var busyOn: [Int64: Int] = [:]
    private var changed: Set<OccurrenceKey> = []
    private var candidates: [EventID: Candidate] = [:]
    private var candidatesOf: [OccurrenceKey: [EventID]] = [:]
    /// The conflict and the overrun each occurrence owns (`Candidate.owner`), as last proposed.
    private var owned: [OccurrenceKey: (conflict: EventID?, overrun: EventID?)] = [:]
    /// Occurrences whose events named one that changed or went: proposed again at the next plan.
    private var stale: Set<OccurrenceKey> = []
    private var queue = WakeHeap<EventID>()
    private var schedules: [Schedule]
    /// Occurrences not yet indexed, by when they are (`lead` before their day begins).
    private var pending: [Int: Pending] = [:]
    private var pendingQueue = WakeHeap<Int>()
    private var nextPending = 0
    /// The pending entries of each occurrence (some since indexed or dropped).
    private var pendingOf: [OccurrenceKey: [Int]] = [:]
    /// Bumped when an origin is removed, so its occurrences still pending are dropped when they come up.
    private var generations: [PlanningLoop.Origin: Int32] = [:]

    private struct Pending {
        var occurrence: Occurrence
        var facts: OccurrenceFacts
        var origin: PlanningLoop.Origin
        var generation: Int32
    }

    /// How long before its UTC day an occurrence is indexed: before its conflicts are due, and well before its
    /// day's agenda (a day in a zone far from UTC starts up to 14 hours off).
    private var lead: Int64 { max(settings.conflicts?.ahead ?? 0, 2 * 86_400) }

    init(settings: DaySettings, configuration: PlannerConfiguration) {
        self.settings = settings
        self.configuration = configuration
        schedules =
            (settings.agendaAt.map { [Schedule(rule: nil, minutes: $0)] } ?? [])
            + configuration.rules.indices.compactMap { index in
                configuration.rules[index].agendaAt.map { Schedule(rule: index, minutes: $0) }
            }
    }

    // MARK: Occurrences

    /// Takes an occurrence: indexed at once when its day is near `now`, else when it comes (`plan`).
    mutating func add(_ occurrence: Occurrence, facts: OccurrenceFacts, origin: PlanningLoop.Origin, now: Instant) {
        // A whole (UTC) day at once, so that a crowded day is known to be crowded before any of its pairs is proposed.
        let indexed = Instant(secondsSinceEpoch: Item.day(occurrence.start) * 86_400).adding(seconds: -lead)
        guard indexed <= now || items[OccurrenceKey(occurrence)] != nil else {
            pending[nextPending] = Pending(
                occurrence: occurrence, facts: facts, origin: origin, generation: generations[origin, default: 0])
            pendingQueue.push(indexed, slot: nextPending)
            pendingOf[OccurrenceKey(occurrence), default: []].append(nextPending)
            nextPending += 1
            return
        }
        index(occurrence, facts: facts, origin: origin)
    }

    private mutating func index(_ occurrence: Occurrence, facts: OccurrenceFacts, origin: PlanningLoop.Origin) {
        var hasher = EventID.Hasher()
        hasher.feed(occurrence.start.secondsSinceEpoch)
        hasher.feed(occurrence.end.secondsSinceEpoch)
        hasher.feed(occurrence.summary ?? "")
        hasher.feed(occurrence.location ?? "")
        hasher.feed(occurrence.status.map { "\($0)" } ?? "")
        hasher.feed(facts.participation ?? "")
        hasher.feed(facts.joinURL ?? "")
        hasher.feed(facts.kind.rawValue)
        hasher.feed(occurrence.source.component.transparent ? 1 : 0)
        let key = OccurrenceKey(occurrence)
        let fingerprint = hasher.id.high
        keysOf[origin, default: []].append(key)
        if let old = items[key] {
            items[key]!.origin = origin
            guard old.fingerprint != fingerprint else { return }
            unindex(old)
        }
        let rule = configuration.rules.firstIndex { $0.matches(occurrence, facts: facts) }
        let item = Item(
            occurrence: occurrence, facts: facts, origin: origin, key: key, fingerprint: fingerprint, rule: rule,
            busy: settings.takesPart(occurrence, facts: facts, rules: configuration.rules))
        items[key] = item
        startingOn[item.startDay, default: []].insert(key)
        if item.busy { busyOn[item.startDay, default: 0] += 1 }
        changed.insert(key)
    }

    mutating func remove(origin: PlanningLoop.Origin) {
        generations[origin, default: 0] &+= 1
        for key in keysOf.removeValue(forKey: origin) ?? [] {
            guard let item = items[key], item.origin == origin else { continue }
            unindex(item)
            items[key] = nil
        }
    }

    /// Forgets one occurrence (a copy of a meeting another copy now stands for), if it came from `calendar`.
    mutating func remove(key: OccurrenceKey, calendar: String) {
        for id in pendingOf[key] ?? [] where pending[id]?.occurrence.calendar == calendar { pending[id] = nil }
        guard let item = items[key], item.occurrence.calendar == calendar else { return }
        unindex(item)
        items[key] = nil
    }

    /// Takes an occurrence out of the day index, with every pair event proposed for it.
    private mutating func unindex(_ item: Item) {
        startingOn[item.startDay]?.remove(item.key)
        if startingOn[item.startDay]?.isEmpty == true { startingOn[item.startDay] = nil }
        if item.busy { busyOn[item.startDay, default: 1] -= 1 }
        for id in candidatesOf.removeValue(forKey: item.key) ?? [] {
            guard let candidate = candidates.removeValue(forKey: id) else { continue }
            if candidate.owner != item.key { stale.insert(candidate.owner) }
        }
        owned[item.key] = nil
        changed.insert(item.key)
    }

    /// Forgets the occurrences that ended more than a day before `instant`: no pair or agenda planned from then on
    /// needs them.
    mutating func forget(endedBefore instant: Instant) {
        let cutOff = instant.adding(seconds: -86_400)
        for (key, item) in items where item.occurrence.end < cutOff {
            unindex(item)
            items[key] = nil
            changed.remove(key)
        }
        keysOf = keysOf.mapValues { keys in keys.filter { items[$0] != nil } }.filter { !$0.value.isEmpty }
    }

    /// Whether the item takes part in conflicts and overruns, on a day that is not crowded.
    private func takesPart(_ item: Item) -> Bool {
        item.busy && busyOn[item.startDay, default: 0] <= DaySettings.crowdedDay
    }

    /// The occurrences starting on the UTC days `days`.
    private func items(startingOn days: ClosedRange<Int64>) -> [Item] {
        days.flatMap { startingOn[$0] ?? [] }.compactMap { items[$0] }
    }

    // MARK: Planning

    /// The next instant at which a pair's event or an agenda is due.
    var nextInstant: Instant? {
        let agendas = schedules.compactMap { schedule in schedule.nextDay.map { agendaTime(day: $0, schedule) } }
        return ([queue.next, pendingQueue.next].compactMap { $0 } + agendas).min()
    }

    /// Proposes the pair events of what changed since the last plan, then returns what is due at `now`.
    mutating func plan(at now: Instant, state: PlannerState) -> [PlanningLoop.Emitted] {
        while let next = pendingQueue.next, next <= now {
            let (_, id) = pendingQueue.pop()!
            let entry = pending.removeValue(forKey: id)
            if let entry {
                let key = OccurrenceKey(entry.occurrence)
                pendingOf[key]?.removeAll { $0 == id }
                if pendingOf[key]?.isEmpty == true { pendingOf[key] = nil }
            }
            guard let entry,
                entry.generation == generations[entry.origin, default: 0]
            else { continue }
            index(entry.occurrence, facts: entry.facts, origin: entry.origin)
        }
        proposePairs()
        var due: [PlanningLoop.Emitted] = []
        while let next = queue.next, next <= now {
            let (_, id) = queue.pop()!
            guard let candidate = candidates.removeValue(forKey: id), !state.hasEmitted(id), now <= candidate.expiry,
                let first = items[candidate.first], let second = items[candidate.second]
            else { continue }
            let also = candidate.also.compactMap { items[$0] }
            guard also.count == candidate.also.count else { continue }
            if let event = event(
                candidate, id: id, first: first, second: second, also: also, now: now, state: state)
            {
                due.append(PlanningLoop.Emitted(event: event, occurrence: first.occurrence, facts: first.facts))
            }
        }
        for index in schedules.indices {
            if schedules[index].nextDay == nil { schedules[index].nextDay = firstAgendaDay(schedules[index], now: now) }
            while let day = schedules[index].nextDay, agendaTime(day: day, schedules[index]) <= now {
                schedules[index].nextDay = day + 1
                if let agenda = agenda(day: day, schedules[index], now: now, state: state) { due.append(agenda) }
            }
        }
        return due
    }

    /// Proposes again the conflicts and overruns of each occurrence that changed, of those whose events named one
    /// that changed, and of those it overlaps now (they may name it now, or no longer).
    private mutating func proposePairs() {
        guard !changed.isEmpty || !stale.isEmpty else { return }
        var owners = stale
        for key in changed {
            guard let item = items[key] else { continue }
            owners.insert(key)
            guard takesPart(item) else { continue }
            let days = (item.startDay - 1)...Item.day(item.occurrence.end)
            for other in items(startingOn: days)
            where other.key != key && takesPart(other) && Self.overlap(item, other) {
                owners.insert(other.key)
            }
        }
        changed.removeAll(keepingCapacity: true)
        stale.removeAll(keepingCapacity: true)
        for key in owners {
            guard let item = items[key] else { continue }
            proposeConflict(for: item)
            proposeOverrun(startingWith: item)
        }
    }

    /// Whether two occurrences share any time.
    private static func overlap(_ one: Item, _ other: Item) -> Bool {
        max(one.occurrence.start, other.occurrence.start) < min(one.occurrence.end, other.occurrence.end)
    }

    /// `item`'s conflict: every occurrence that starts after it (or with it, later by key) and overlaps it enough,
    /// the first as `with`. Two meetings keep the id a pair had, so a journal from before counts it as sent.
    private mutating func proposeConflict(for item: Item) {
        var proposed: EventID?
        defer { replace(\.conflict, of: item.key, with: proposed) }
        guard let conflicts = settings.conflicts, takesPart(item) else { return }
        let later = items(startingOn: item.startDay...Item.day(item.occurrence.end)).filter { other in
            other.key != item.key && takesPart(other)
                && (item.occurrence.start, item.key) < (other.occurrence.start, other.key)
                && other.occurrence.start < item.occurrence.end && settings.conflict(item.occurrence, other.occurrence)
        }.sorted { ($0.occurrence.start, $0.key) < ($1.occurrence.start, $1.key) }
        guard let first = later.first, let last = later.last else { return }
        var tag = Self.tag(first)
        var fingerprints = Int64(bitPattern: first.fingerprint)
        for other in later.dropFirst() {
            tag += "," + Self.tag(other).dropFirst(5)
            fingerprints = fingerprints &* 31 &+ Int64(bitPattern: other.fingerprint)
        }
        let id = EventID.make(
            EventID.seed(item.key), .conflictDetected, tag, Int64(bitPattern: item.fingerprint), fingerprints)
        queue(
            Candidate(
                kind: .conflict, first: item.key, second: first.key, also: later.dropFirst().map(\.key),
                time: item.occurrence.start.adding(seconds: -conflicts.ahead), expiry: last.occurrence.start),
            id: id)
        proposed = id
    }

    /// The overrun when `item` starts: every occurrence still running then, on the one that started last. One
    /// still running keeps the id a pair had.
    private mutating func proposeOverrun(startingWith item: Item) {
        var proposed: EventID?
        defer { replace(\.overrun, of: item.key, with: proposed) }
        guard settings.overruns, takesPart(item) else { return }
        let running = items(startingOn: (item.startDay - 1)...item.startDay).filter { other in
            other.key != item.key && takesPart(other) && other.occurrence.start < item.occurrence.start
                && other.occurrence.end > item.occurrence.start
        }.sorted { ($0.occurrence.start, $0.key) < ($1.occurrence.start, $1.key) }
        guard let latest = running.last else { return }
        let also = running.dropLast()
        let tag =
            Self.tag(item)
            + also.map { ",running:" + $0.key.uid + "/" + ($0.key.recurrenceID?.description ?? "") }
            .joined()
        let id = EventID.make(
            EventID.seed(latest.key), .overrunDetected, tag, item.occurrence.start.secondsSinceEpoch,
            latest.occurrence.end.secondsSinceEpoch)
        queue(
            Candidate(
                kind: .overrun, first: latest.key, second: item.key, also: also.map(\.key),
                time: item.occurrence.start, expiry: min(latest.occurrence.end, item.occurrence.end)),
            id: id)
        proposed = id
    }

    /// `with:<uid>/<recurrence id>`: how an event's id names another occurrence.
    private static func tag(_ other: Item) -> String {
        "with:" + other.key.uid + "/" + (other.key.recurrenceID?.description ?? "")
    }

    /// Keeps `id` as the conflict or the overrun `owner` has, dropping the one it had when that differs.
    private mutating func replace(
        _ kind: WritableKeyPath<(conflict: EventID?, overrun: EventID?), EventID?>, of owner: OccurrenceKey,
        with id: EventID?
    ) {
        var entry = owned[owner] ?? (nil, nil)
        if let old = entry[keyPath: kind], old != id { candidates[old] = nil }
        entry[keyPath: kind] = id
        owned[owner] = entry.conflict == nil && entry.overrun == nil ? nil : entry
    }

    private mutating func queue(_ candidate: Candidate, id: EventID) {
        guard candidates[id] == nil else { return }
        candidates[id] = candidate
        for key in candidate.keys { candidatesOf[key, default: []].append(id) }
        queue.push(candidate.time, slot: id)
    }

    /// A conflict's or an overrun's event at `now`. A conflict found after its instant (an invitation that arrived
    /// later) is reported when found; an overrun keeps its instant and says how late it is. None for a meeting the
    /// user dismissed.
    private func event(
        _ candidate: Candidate, id: EventID, first: Item, second: Item, also: [Item], now: Instant,
        state: PlannerState
    ) -> PlannedEvent? {
        let other = OtherOccurrence(second.occurrence, facts: second.facts)
        let rest = also.map { OtherOccurrence($0.occurrence, facts: $0.facts) }
        let payload: PlannedEvent.Payload
        var time = candidate.time
        switch candidate.kind {
        case .conflict:
            time = max(time, now)
            payload = .conflictDetected(
                ConflictDetail(
                    with: other, overlapStart: second.occurrence.start,
                    overlapEnd: min(first.occurrence.end, second.occurrence.end), alsoWith: rest))
        case .overrun:
            if !state.answers.isEmpty, state.answers[first.key]?.dismissed == true { return nil }
            payload = .overrunDetected(
                OverrunDetail(next: other, lateness: lateness(since: time, now: now), alsoRunning: rest))
        }
        return PlannedEvent(
            payload, id: id, key: first.key, occurrenceStart: first.occurrence.start,
            occurrenceEnd: first.occurrence.end, time: time, expiry: candidate.expiry, fingerprint: first.fingerprint)
    }

    private func lateness(since time: Instant, now: Instant) -> Int64 {
        let lateness = now.secondsSinceEpoch - time.secondsSinceEpoch
        return lateness > configuration.lateGrace ? lateness : 0
    }

    // MARK: Agenda

    /// Where the user is (`day.travelZone`): a day's agenda is counted in the zone of that day.
    var travel: TravelZones?

    /// The zone local day `day` is counted in: home, or where the user is at its agenda's time.
    private func zone(day: Int64, _ schedule: Schedule) -> ZoneRules {
        guard let travel else { return settings.zone }
        return travel.zone(at: settings.zone.instant(for: wall(day: day, schedule)))
    }

    private func wall(day: Int64, _ schedule: Schedule) -> LocalDateTime {
        LocalDateTime(
            date: CalendarDate(daysSinceEpoch: day), hour: schedule.minutes / 60, minute: schedule.minutes % 60)
    }

    private func agendaTime(day: Int64, _ schedule: Schedule) -> Instant {
        zone(day: day, schedule).instant(for: wall(day: day, schedule))
    }

    /// Today's agenda when it is still of use at `now`, else tomorrow's.
    private func firstAgendaDay(_ schedule: Schedule, now: Instant) -> Int64 {
        let today = (travel?.zone(at: now) ?? settings.zone).wallClock(at: now).date.daysSinceEpoch
        return agendaTime(day: today, schedule).adding(seconds: DaySettings.agendaUseful) < now ? today + 1 : today
    }

    /// The agenda of local day `day`: its timed occurrences that start that day and the all-day ones that cover it,
    /// in order (all-day first), each with the day's conflicts; none once delivered or no longer of use.
    private func agenda(day: Int64, _ schedule: Schedule, now: Instant, state: PlannerState) -> PlanningLoop.Emitted? {
        let date = CalendarDate(daysSinceEpoch: day)
        let zone = zone(day: day, schedule)
        let dayStart = zone.instant(for: LocalDateTime(date: date))
        let dayEnd = zone.instant(for: LocalDateTime(date: date.adding(days: 1)))
        let time = agendaTime(day: day, schedule)
        let expiry = time.adding(seconds: DaySettings.agendaUseful)
        let key = OccurrenceKey(
            calendar: "day", uid: schedule.rule.map { "agenda-rule\($0 + 1)" } ?? "agenda", recurrenceID: .date(date))
        let id = EventID.make(EventID.seed(key), .agendaDue, "day", day)
        guard !state.hasEmitted(id), now <= expiry else { return nil }
        let ownAgendas = Set(schedules.compactMap(\.rule))
        let dayItems = items(startingOn: (Item.day(dayStart) - 7)...Item.day(dayEnd))
            .filter { item in
                let occurrence = item.occurrence
                guard occurrence.status != .cancelled, item.facts.participation != "DECLINED" else { return false }
                guard schedule.rule == nil ? !(item.rule.map(ownAgendas.contains) ?? false) : item.rule == schedule.rule
                else { return false }
                if occurrence.allDay {
                    let first = occurrence.startLocal.date
                    let last = occurrence.displayZone.wallClock(at: occurrence.end.adding(seconds: -1)).date
                    return first <= date && date <= last
                }
                return occurrence.start >= dayStart && occurrence.start < dayEnd
            }
            .sorted { a, b in
                (a.occurrence.allDay ? 0 : 1, a.occurrence.start, a.key) < (
                    b.occurrence.allDay ? 0 : 1, b.occurrence.start, b.key
                )
            }
        let entries = dayItems.map { item in
            let conflicts = dayItems.filter { other in
                other.key != item.key && takesPart(item) && takesPart(other)
                    && settings.conflict(item.occurrence, other.occurrence)
            }
            .map(\.key.uid)
            return AgendaDetail.Item(
                occurrence: OtherOccurrence(item.occurrence, facts: item.facts), allDay: item.occurrence.allDay,
                location: item.occurrence.location, leaveBy: item.facts.leaveBy,
                participation: item.facts.participation, conflicts: conflicts)
        }
        let detail = AgendaDetail(
            date: date.description, zone: zone.identifier, items: entries, lateness: lateness(since: time, now: now))
        let event = PlannedEvent(
            .agendaDue(detail), id: id, key: key, occurrenceStart: dayStart, occurrenceEnd: dayEnd, time: time,
            expiry: expiry, fingerprint: 0)
        return PlanningLoop.Emitted(event: event, occurrence: nil, facts: .event)
    }
}
