/// The planner driven over time for a changing set of occurrences: the one pipeline driver, which `replay` runs on a
/// virtual clock and `watch` on the real one. It says which occurrences to expand around a window (`expansion`),
/// plans at the instants they ask for, applies answers, and says when expired ids and journal rows may go
/// (`Retention`); committing, delivering and pruning are the runtime's part (docs/design.md §1).
///
/// Each occurrence waits, unplanned, until its earliest possible event (`Planner.earliestEvent`); then it is
/// admitted into a slot and planned only at the instants it asks for (the `WakeHeap`), so the cost follows the
/// number of events, not the number of occurrences times the number of minutes. Occurrences come in groups named
/// by an origin (a file); replacing a group plans what changed at once: new reminders for a moved meeting, an end
/// for the live activity of one that was deleted or cancelled, a new `flightDetected` for a flight whose time
/// changed. The loop applies what it plans to its `PlannerState`; committing the events is the caller's part.
public struct PlanningLoop {
    /// A planned event with the occurrence and facts it was planned from (taken from its `Planner.Subject`, so
    /// nothing is classified again per event); `nil` and `.event` for an occurrence that is gone.
    public struct Emitted: Sendable {
        public var event: PlannedEvent
        public var occurrence: Occurrence?
        public var facts: OccurrenceFacts

        package init(event: PlannedEvent, occurrence: Occurrence?, facts: OccurrenceFacts) {
            self.event = event
            self.occurrence = occurrence
            self.facts = facts
        }
    }

    /// A group of occurrences replaced together.
    public typealias Origin = Int32

    /// How long events are remembered after they expire, and how often the forgetting is done.
    public struct Retention: Sendable {
        /// How long an expired event stays in the journal (for `calwatch why`, and a sink that lags behind).
        public var keep: Int64 = 86_400
        /// How often (in the loop's time) expired ids are dropped and the journal is pruned. Each prune reads every
        /// row still kept, about `keep`'s worth, so pruning hourly read a day of rows 24 times a day: an eighth of a
        /// replay's time.
        public var pruneEvery: Int64 = 6 * 3600

        public init() {}
    }

    /// What one step found due, and how far the journal may be pruned now.
    public struct Step {
        /// The events due, in emission order.
        public var events: [Emitted]
        /// Set when `retention` says it is time: journal rows that expired before this instant, and that every
        /// sink has, may go. Never after the scheduled time of an event not yet committed, since the journal keeps
        /// the cut-off as handled and a restart plans from there.
        public var pruneBefore: Instant?
    }

    public let configuration: PlannerConfiguration
    public let retention: Retention
    private let facts: (Occurrence) -> OccurrenceFacts
    /// What has been emitted, as planning sees it.
    public private(set) var state: PlannerState

    /// An admitted occurrence, in a slot the wake heap refers to.
    private struct Slot {
        var subject: Planner.Subject
        var wake: Instant?
        var origin: Origin
    }
    private var slots: [Slot?] = []
    private var freeSlots: [Int] = []
    private var slotOf: [OccurrenceKey: Int] = [:]
    private var wakes = WakeHeap<Int>()
    private var waiting = WaitingQueue()
    /// Bumped when an origin is replaced, so its occurrences still waiting are skipped when they come up.
    private var generations: [Origin: Int32] = [:]
    /// The slots each origin's occurrences were admitted into (some since freed or taken by another origin), so
    /// replacing one file does not look through every slot.
    private var slotsOf: [Origin: [Int]] = [:]
    /// The events of the current step, in the order planned.
    private var step: [Emitted] = []
    /// Origins removed since the waiting queue last dropped the entries they left behind.
    private var removedSinceSweep = 0
    /// Origins with entries put in the waiting queue since they were last removed: only their removal leaves
    /// entries behind (a file new to the loop, removed before it is added, leaves none).
    private var waitingOrigins = Set<Origin>()
    /// When expired ids were last dropped; `nil` before the first step.
    private var prunedAt: Instant?
    /// Conflicts, overruns and agendas, when `day:` is configured.
    private var day: DayPlanner?
    /// One meeting in several calendars, planned once.
    private var copies = SameMeetings()
    /// Copies that won when another's file went, added at the next step.
    private var reinstated: [SameMeetings.Copy] = []
    /// Where the user is (`day.travelZone`): occurrences are placed in the zone of their time before planning.
    private var travel: TravelZones?
    /// With `travel`: each origin's occurrences as written, to place again when the flights change, and its flights.
    private var written: [Origin: [Occurrence]] = [:]
    private var flights: [Origin: [(arrival: Instant, zone: String)]] = [:]
    private var tripChanged = false

    /// A loop that continues from `state` (rebuilt from the journal).
    public init(
        configuration: PlannerConfiguration, facts: @escaping (Occurrence) -> OccurrenceFacts, state: PlannerState,
        retention: Retention = Retention()
    ) {
        self.configuration = configuration
        self.facts = facts
        self.state = state
        self.retention = retention
        day = configuration.day.map { DayPlanner(settings: $0, configuration: configuration) }
        if let day = configuration.day, day.travelZone { travel = TravelZones(home: day.zone, flights: []) }
    }

    /// What to expand for planning `window`: the occurrences whose events can fall inside it, from the longest live
    /// activity before it to the earliest reminder or calendar alarm after it, and a flight detected a horizon ahead.
    public static func expansion(
        for window: InstantWindow, zone: ZoneRules, configuration: PlannerConfiguration
    ) -> ExpansionOptions {
        var options = ExpansionOptions(window: window, defaultZone: zone, includeTodos: configuration.includeTodos)
        options.lookBehind = configuration.liveActivityMaxDuration + 86_400
        options.lookAhead = max(configuration.lookAhead, configuration.horizon, 8 * 86_400)
        return options
    }

    /// Occurrences waiting to be admitted, entries of removed files not yet swept out included.
    var waitingCount: Int { waiting.count }

    /// The next instant at which something is due or an occurrence is admitted (`nil`: nothing ever will be).
    public var nextInstant: Instant? {
        [wakes.next, waiting.next?.earliest, day?.nextInstant].compactMap { $0 }.min()
    }

    /// Adds occurrences under `origin`. Those whose earliest event has come, or whose live activity is running,
    /// are planned at `now` at once (their events come with the next `step`); the rest wait.
    public mutating func add(_ occurrences: [Occurrence], origin: Origin = 0, now: Instant) {
        guard travel != nil else { return add(occurrences, origin: origin, now: now, takingOver: false) }
        written[origin, default: []] += occurrences
        flights[origin, default: []] += TravelZones.flights(in: occurrences, facts: facts)
        retrace(except: origin, now: now)
        guard let timeline = travel else { return }
        let keepsHome: (Occurrence) -> Bool =
            configuration.rules.contains { $0.travelZone == false }
            ? { occurrence in
                configuration.rules.first { $0.matches(occurrence, facts: facts(occurrence)) }?.travelZone == false
            } : { _ in false }
        add(timeline.placing(occurrences, keepsHome: keepsHome), origin: origin, now: now, takingOver: false)
    }

    /// Works the trip out again from the flights held; when it changed, what every origin but `except` holds is
    /// placed again (a floating 09:00 moves with the user).
    private mutating func retrace(except: Origin?, now: Instant) {
        guard let travel else { return }
        let timeline = TravelZones(home: travel.home, flights: flights.values.flatMap { $0 })
        let stays = { (zones: TravelZones) in zones.stays.map { "\($0.from) \($0.zone.identifier)" } }
        guard stays(timeline) != stays(travel) else { return }
        self.travel = timeline
        day?.travel = timeline
        for other in written.keys.sorted() where other != except {
            let occurrences = written[other]!
            remove(origin: other)
            add(occurrences, origin: other, now: now)
        }
    }

    /// Adds every occurrence of a run that stops before `end` (a replay's, given at once, before any other): those
    /// it could only admit at `end` or later are left out.
    ///
    /// A replay expands every item as far ahead as a flight is detected (60 days), and admitting the occurrences
    /// beyond its end was a third of a week's replay of 5,000 weekly meetings. One never admitted plans nothing; it
    /// counts only as a copy of a meeting that one admitted may lose to, and such copies start together, or are
    /// flights (a boarding pass's own item): those stay.
    public mutating func addAll(_ occurrences: [Occurrence], now: Instant, planningStopsAt end: Instant) {
        assert(slotOf.isEmpty && waiting.count == 0, "addAll comes before any other add")
        add(admissible(occurrences, before: end), now: now)
    }

    /// The occurrences admitted before `end` (their earliest event comes first, or their live activity runs),
    /// flights, and any that starts with one of them.
    private func admissible(_ occurrences: [Occurrence], before end: Instant) -> [Occurrence] {
        var starts = Set<Instant>()
        let admitted = occurrences.map { occurrence in
            let facts = facts(occurrence)
            let admitted =
                facts.flight != nil || state.active[OccurrenceKey(occurrence)] != nil
                || Planner.earliestEvent(of: occurrence, facts: facts, configuration: configuration) < end
            if admitted { starts.insert(occurrence.start) }
            return admitted
        }
        return zip(occurrences, admitted).compactMap { occurrence, admitted in
            admitted || starts.contains(occurrence.start) ? occurrence : nil
        }
    }

    /// `takingOver`: each is a copy of a meeting that wins now that the copy planned so far went.
    private mutating func add(_ occurrences: [Occurrence], origin: Origin, now: Instant, takingOver: Bool) {
        let generation = generations[origin, default: 0]
        var later: [WaitingQueue.Entry] = []
        /// Copies of one meeting or flight due at once are planned once the whole batch is registered: the copy
        /// that wins may come after one that is due at once (a boarding pass's own item before the calendar's flight).
        var grouped: [(occurrence: Occurrence, facts: OccurrenceFacts, copy: SameMeetings.Copy, takesOver: Bool)] = []
        copies.reserveCapacity(occurrences.count, origin: origin)
        for occurrence in occurrences {
            let facts = facts(occurrence)
            let copy = SameMeetings.Copy(occurrence, facts: facts, origin: origin)
            let registered = copies.register(copy)
            var takesOver = takingOver
            if let displaced = registered.displaced {
                // Only one planned before this batch had anything to deliver in its place.
                takesOver = takesOver || slotOf[OccurrenceKey(displaced.occurrence)] != nil
                planNoMore(displaced)
            }
            if let next = registered.reinstated { reinstated.append(next) }
            guard registered.plan else { continue }
            // Only a copy due at once waits for the batch: one that waits for its earliest event is checked again
            // then (`WaitingQueue`), and most meetings with a link are such.
            if copy.group != nil,
                Planner.earliestEvent(of: occurrence, facts: facts, configuration: configuration) <= now
            {
                grouped.append((occurrence, facts, copy, takesOver))
                continue
            }
            admit(
                occurrence, facts: facts, copy: copy, takesOver: takesOver, origin: origin, generation: generation,
                now: now, later: &later)
        }
        for entry in grouped where copies.wins(id: entry.copy.id, group: entry.copy.group) {
            admit(
                entry.occurrence, facts: entry.facts, copy: entry.copy, takesOver: entry.takesOver, origin: origin,
                generation: generation, now: now, later: &later)
        }
        if !later.isEmpty { waitingOrigins.insert(origin) }
        waiting.add(later)
    }

    /// Plans a copy that wins: at once when something of it is due, else once its earliest event comes.
    private mutating func admit(
        _ occurrence: Occurrence, facts: OccurrenceFacts, copy: SameMeetings.Copy, takesOver: Bool, origin: Origin,
        generation: Int32, now: Instant, later: inout [WaitingQueue.Entry]
    ) {
        if takesOver { takeOver(occurrence, facts: facts, at: now) }
        day?.add(occurrence, facts: facts, origin: origin, now: now)
        let earliest = Planner.earliestEvent(of: occurrence, facts: facts, configuration: configuration)
        if earliest <= now || state.active[OccurrenceKey(occurrence)] != nil {
            plan(admit(occurrence, origin: origin), at: now)
        } else {
            later.append(
                .init(
                    earliest: earliest, occurrence: occurrence, origin: origin, generation: generation,
                    copy: copy.group.map { WaitingQueue.CopyName(group: $0, id: copy.id) }))
        }
    }

    /// A copy that takes over from another copy of the meeting: the reminders whose time has passed were the other
    /// copy's to deliver, so this one does not deliver them again, late.
    private mutating func takeOver(_ occurrence: Occurrence, facts: OccurrenceFacts, at now: Instant) {
        let subject = Planner.Subject(occurrence, facts: facts, configuration: configuration)
        for reminder in subject.reminders where reminder.time <= now {
            state.assumeDelivered(reminder.id, expiry: reminder.expiry)
        }
    }

    /// A copy of a meeting that another copy now wins: its slot goes (a running live activity of a copy under
    /// another UID ends as `removed` at the next `endRemovedActivities`; the winner's starts).
    private mutating func planNoMore(_ copy: SameMeetings.Copy) {
        let key = OccurrenceKey(copy.occurrence)
        day?.remove(key: key, calendar: copy.occurrence.calendar)
        guard let index = slotOf[key], slots[index]?.subject.occurrence.calendar == copy.occurrence.calendar else {
            return
        }
        slotOf[key] = nil
        slots[index] = nil
        freeSlots.append(index)
    }

    /// Forgets every occurrence added under `origin` (those another origin has replaced since stay). A running
    /// live activity whose occurrence does not come back ends at the next `endRemovedActivities`.
    public mutating func remove(origin: Origin) {
        generations[origin, default: 0] &+= 1
        day?.remove(origin: origin)
        if travel != nil {
            written[origin] = nil
            // A flight gone changes the trip: worked out again at the next step.
            if flights.removeValue(forKey: origin)?.isEmpty == false { tripChanged = true }
        }
        reinstated += copies.remove(origin: origin)
        // A removed file's occurrences still waiting are skipped when they come up, which for an item days ahead is
        // days later; each holds its component. A daemon whose files change every second would grow by them, so
        // every 1,024 removals that left some they are swept out.
        if waitingOrigins.remove(origin) != nil {
            removedSinceSweep += 1
            if removedSinceSweep >= 1024 {
                removedSinceSweep = 0
                waiting.removeAll { generations[$0.origin, default: 0] != $0.generation }
            }
        }
        for index in slotsOf.removeValue(forKey: origin) ?? [] where slots[index]?.origin == origin {
            slotOf[slots[index]!.subject.key] = nil
            slots[index] = nil
            freeSlots.append(index)
        }
    }

    /// Ends, with reason `removed`, every running live activity whose occurrence is no longer admitted: call it
    /// after a set of changes (a file renamed is removed and added in one set, and its activities go on).
    public mutating func endRemovedActivities(at now: Instant) {
        guard state.active.count > 0 else { return }
        for event in Planner.removedActivities(state: state, present: { slotOf[$0] != nil }, now: now) {
            state.apply(event)
            step.append(Emitted(event: event, occurrence: nil, facts: .event))
        }
    }

    /// Plans everything due at `now` (`events`), and says when the journal may be pruned (`pruneBefore`, with
    /// `uncommittedSince` the earliest scheduled time of events the caller holds back for its next commit).
    public mutating func step(at now: Instant, uncommittedSince: Instant? = nil) -> Step {
        let events = plan(at: now)
        guard now.secondsSinceEpoch - (prunedAt ?? now).secondsSinceEpoch >= retention.pruneEvery else {
            if prunedAt == nil { prunedAt = now }
            return Step(events: events, pruneBefore: nil)
        }
        prunedAt = now
        state.forget(expiredBefore: now)
        day?.forget(endedBefore: now)
        copies.forget(endedBefore: now)
        let earliest = [now.adding(seconds: -retention.keep), uncommittedSince] + events.map(\.event.time)
        return Step(events: events, pruneBefore: earliest.compactMap { $0 }.min())
    }

    /// Occurrences whose earliest event has come are admitted, those whose wake has come are planned. Returns the
    /// events of this step and of any `add` since the last one, in emission order.
    private mutating func plan(at now: Instant) -> [Emitted] {
        if tripChanged {
            tripChanged = false
            retrace(except: nil, now: now)
        }
        if !reinstated.isEmpty {
            let next = reinstated
            reinstated.removeAll()
            for copy in next { add([copy.occurrence], origin: copy.origin, now: now, takingOver: true) }
        }
        while let next = waiting.next, next.earliest <= now {
            let entry = waiting.pop()
            guard generations[entry.origin, default: 0] == entry.generation,
                entry.copy.map({ copies.wins(id: $0.id, group: $0.group) }) ?? true
            else { continue }
            plan(admit(entry.occurrence, origin: entry.origin), at: now)
        }
        while let next = wakes.next, next <= now {
            let (instant, index) = wakes.pop()!
            if slots[index]?.wake == instant { plan(index, at: now) }
        }
        if day != nil {
            for emitted in day!.plan(at: now, state: state) {
                state.apply(emitted.event)
                step.append(emitted)
            }
        }
        defer { step.removeAll(keepingCapacity: true) }
        // Positions are sorted, not the events: moving an event (with its occurrence and facts) is a large copy.
        let order = step.indices.sorted { Planner.emittedBefore(step[$0].event, step[$1].event) }
        return order.map { step[$0] }
    }

    /// Forgets what goes on in calendars of a fleet outside `scopes`, which another watcher holds now
    /// (`PlannerState.keep`).
    public mutating func keep(scopes: Set<String>) {
        state.keep(scopes: scopes)
    }

    /// Takes calendars of a fleet over from other watchers (`PlannerState.take`); call before their files are added.
    public mutating func take(_ handOver: PlannerState.HandOver) {
        state.take(handOver)
    }

    /// Takes an answer about `occurrence` at `now` (`Planner.answer` decides what it makes, or why nothing): the
    /// answer's event and what it changes (a dismissed live activity's end) come with the next `step`. An
    /// occurrence not admitted yet finds the answer in the state when it is.
    public mutating func answer(
        _ answer: Planner.Answer, target: String, answered: (id: EventID, type: EventType?)?, occurrence: Occurrence,
        at now: Instant
    ) -> Result<PlannedEvent, Planner.AnswerRefused> {
        let facts = facts(occurrence)
        let made = Planner.answer(
            answer, target: target, answered: answered, occurrence: occurrence, facts: facts, state: state, now: now)
        guard case .success(let event) = made else { return made }
        state.apply(event)
        step.append(Emitted(event: event, occurrence: occurrence, facts: facts))
        if let index = slotOf[event.key] { plan(index, at: now) }
        return made
    }

    private mutating func admit(_ occurrence: Occurrence, origin: Origin) -> Int {
        let subject = Planner.Subject(occurrence, facts: facts(occurrence), configuration: configuration)
        if let index = slotOf[subject.key] {
            slots[index]!.subject = subject
            if slots[index]!.origin != origin {
                slots[index]!.origin = origin
                file(index, under: origin)
            }
            return index
        }
        let index = freeSlots.popLast() ?? slots.count
        if index == slots.count { slots.append(nil) }
        slots[index] = Slot(subject: subject, wake: nil, origin: origin)
        slotOf[subject.key] = index
        file(index, under: origin)
        return index
    }

    /// Notes that a slot holds one of `origin`'s occurrences. Entries for slots freed since are dropped each time
    /// the list doubles, so it stays within twice the origin's live slots (a replay's single origin admits
    /// hundreds of thousands of occurrences over a year).
    private mutating func file(_ index: Int, under origin: Origin) {
        var list = slotsOf.removeValue(forKey: origin) ?? []
        list.append(index)
        if list.count >= 64 && list.count.nonzeroBitCount == 1 {
            var seen = Set<Int>()
            list.removeAll { slots[$0]?.origin != origin || !seen.insert($0).inserted }
        }
        slotsOf[origin] = list
    }

    /// Plans one occurrence until nothing more is due at `now` (a start can make an update due at once), then files
    /// its next wake, or lets it go when nothing more will happen to it.
    private mutating func plan(_ index: Int, at now: Instant) {
        guard let subject = slots[index]?.subject else { return }
        var wake: Instant?
        var due: [PlannedEvent] = []
        var again = false
        repeat {
            due.removeAll(keepingCapacity: true)
            wake = Planner.plan(subject, state: state, configuration: configuration, now: now, into: &due)
            again = false
            for event in due {
                state.apply(event)
                step.append(Emitted(event: event, occurrence: subject.occurrence, facts: subject.facts))
                // An update leaves its activity as it was but for the report it made: planning again at the same
                // instant finds nothing more and the same wake (most events are updates; this halves their plans).
                again = again || event.type != .liveActivityUpdate
            }
        } while again
        slots[index]!.wake = wake
        if let wake {
            wakes.push(wake, slot: index)
        } else if state.active[subject.key] == nil {
            slots[index] = nil
            slotOf[subject.key] = nil
            freeSlots.append(index)
        }
    }
}

/// Occurrences not yet admitted, by earliest event: a sorted run (a replay's whole input, sorted once) and a heap
/// for what comes later (a daemon's changed files), popped in one order.
private struct WaitingQueue {
    struct Entry {
        var earliest: Instant
        var occurrence: Occurrence
        var origin: PlanningLoop.Origin
        var generation: Int32
        /// A copy of a meeting kept in several calendars: planned only if it still wins when its time comes.
        var copy: CopyName?
    }

    /// Which copy of which meeting an entry is, held by reference: most entries are none, and every entry of a
    /// replay's year waits here.
    final class CopyName: Sendable {
        let group: String
        let id: String

        init(group: String, id: String) {
            self.group = group
            self.id = id
        }
    }
    private var run: [Entry] = []
    private var runIndex = 0
    private var heap: [Entry] = []

    var next: Entry? {
        let fromRun = runIndex < run.count ? run[runIndex] : nil
        guard let top = heap.first else { return fromRun }
        guard let fromRun else { return top }
        return fromRun.earliest <= top.earliest ? fromRun : top
    }

    mutating func add(_ entries: [Entry]) {
        guard !entries.isEmpty else { return }
        if runIndex >= run.count && heap.isEmpty {
            run = entries.sorted { $0.earliest < $1.earliest }
            runIndex = 0
            return
        }
        for entry in entries { push(entry) }
    }

    /// How many entries wait, stale ones included.
    var count: Int { run.count - runIndex + heap.count }

    /// Drops the entries `stale` says will be skipped anyway; the order of the rest is kept.
    mutating func removeAll(where stale: (Entry) -> Bool) {
        run = run[runIndex...].filter { !stale($0) }
        runIndex = 0
        let kept = heap.filter { !stale($0) }
        heap = []
        heap.reserveCapacity(kept.count)
        for entry in kept { push(entry) }
    }

    mutating func pop() -> Entry {
        let top = next!
        if runIndex < run.count && (heap.isEmpty || run[runIndex].earliest <= heap[0].earliest) {
            runIndex += 1
            if runIndex == run.count {
                run = []
                runIndex = 0
            }
            return top
        }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var first = parent
            if left < heap.count && heap[left].earliest < heap[first].earliest { first = left }
            if right < heap.count && heap[right].earliest < heap[first].earliest { first = right }
            guard first != parent else { break }
            heap.swapAt(parent, first)
            parent = first
        }
        return top
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].earliest < heap[parent].earliest else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }
}
