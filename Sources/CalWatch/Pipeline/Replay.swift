import Synchronization

/// The whole pipeline on a virtual clock: planner → journal → bus → sinks, from one instant to another, as fast as
/// the machine allows (`calwatch replay`).
///
/// Each occurrence is admitted at its earliest possible event and then planned only at the instants it asks for
/// (an `Agenda`), so the cost follows the number of events, not the number of occurrences times the number of
/// minutes. Events are applied to the planner's state at once and committed to the journal in batches; sinks
/// only ever see committed events, so a run killed at any point and started again over the same journal emits
/// the rest: nothing lost, nothing journaled twice. State, journal and queues stay bounded however long the
/// window: ids are forgotten once expired, journal rows pruned once delivered and expired.
public final class Replay {
    /// What a replay did.
    public struct Summary: Sendable {
        public var counts: [EventType: Int] = [:]
        public var total = 0
        /// Where planning started: later than asked when the journal had already handled that time.
        public var start: Instant
        /// Stopped before the end: asked to, or every sink's reader went away.
        public var stopped = false
        public var sinks: [EventBus.SinkReport] = []
    }

    /// How a replay commits and prunes.
    public struct Options: Sendable {
        /// Events per journal transaction (and per batch handed to the sinks).
        public var batchSize = 512
        /// How long delivered events stay in the journal after they expire.
        public var retention: Int64 = 86_400
        /// How often (virtual time) expired rows are pruned. Each prune reads every row still kept, about a
        /// retention's worth, so pruning hourly read a day of rows 24 times a day: an eighth of a replay's time.
        public var pruneEvery: Int64 = 6 * 3600
        public var bus = EventBus.Policy()

        public init() {}
    }

    private let occurrences: Occurrences
    private let facts: @Sendable (Occurrence) -> PlanningFacts
    private let configuration: PlannerConfiguration
    private let journal: JournalStore
    private let sinks: [any EventSink]
    private let recordedTime: () -> Instant
    private let options: Options
    private let problem: @Sendable (String) -> Void

    /// Creates a replay of `occurrences` (any order), classified by `facts`, into `journal` and `sinks`;
    /// `recordedTime` is the real clock; `problem` hears about sink failures.
    public init(
        occurrences: [Occurrence], facts: @escaping @Sendable (Occurrence) -> PlanningFacts = { _ in .event },
        configuration: PlannerConfiguration, journal: JournalStore,
        sinks: [any EventSink], recordedTime: @escaping () -> Instant, options: Options = Options(),
        problem: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.occurrences = Occurrences(occurrences, facts: facts, configuration: configuration)
        self.facts = facts
        self.configuration = configuration
        self.journal = journal
        self.sinks = sinks
        self.recordedTime = recordedTime
        self.options = options
        self.problem = problem
    }

    /// Replays `[from, to)`; `shouldStop` is asked between batches (a signal arrived).
    public func run(from: Instant, to: Instant, shouldStop: () -> Bool = { false }) async throws -> Summary {
        let bus = EventBus(
            journal: journal, sinks: sinks, policy: options.bus, entry: occurrences.entry, problem: problem)
        var summary = Summary(start: from)
        do {
            try await produce(from: from, to: to, into: bus, summary: &summary, shouldStop: shouldStop)
        } catch {
            _ = await bus.finish()
            throw error
        }
        summary.sinks = await bus.finish()
        return summary
    }

    /// The occurrences being planned, each in a slot the agenda refers to.
    private struct Slot {
        var subject: Planner.Subject
        var wake: Instant?
    }

    private func produce(
        from: Instant, to: Instant, into bus: EventBus, summary: inout Summary, shouldStop: () -> Bool
    ) async throws {
        let start = max(from, try journal.handledUntil() ?? from)
        summary.start = start
        var state = try journal.plannerState(from: start)
        var slots: [Slot?] = []
        var freeSlots: [Int] = []
        var slotOf: [OccurrenceKey: Int] = [:]
        var agenda = Agenda()
        // The events of the current instant, then those waiting for the next commit.
        var step: [Emitted] = []
        var pending: [Emitted] = []

        func admit(_ occurrence: Occurrence) -> Int {
            let subject = Planner.Subject(occurrence, facts: facts(occurrence), configuration: configuration)
            if let index = slotOf[subject.key] {
                slots[index]!.subject = subject
                return index
            }
            let index = freeSlots.popLast() ?? slots.count
            if index == slots.count { slots.append(nil) }
            slots[index] = Slot(subject: subject, wake: nil)
            slotOf[subject.key] = index
            return index
        }

        /// Plans one occurrence until nothing more is due at `now` (a start can make an update due at once), then
        /// files its next wake, or lets it go when nothing more will happen to it.
        func plan(_ index: Int, at now: Instant) {
            guard let subject = slots[index]?.subject else { return }
            var wake: Instant?
            var due: [PlannedEvent] = []
            repeat {
                due.removeAll(keepingCapacity: true)
                wake = Planner.plan(subject, state: state, configuration: configuration, now: now, into: &due)
                for event in due {
                    state.apply(event)
                    step.append(Emitted(event: event, occurrence: subject.occurrence, facts: subject.facts))
                }
            } while !due.isEmpty
            slots[index]!.wake = wake
            if let wake {
                agenda.push(wake, slot: index)
            } else if state.active[subject.key] == nil {
                slots[index] = nil
                slotOf[subject.key] = nil
                freeSlots.append(index)
            }
        }

        // Activities the journal says are running are planned from the start, and those whose occurrence is gone
        // end now: otherwise a run started again from an earlier instant would see them too late.
        if !state.active.isEmpty {
            var present = Set<OccurrenceKey>()
            for (_, occurrence) in occurrences.byEarliest where state.active[OccurrenceKey(occurrence)] != nil {
                present.insert(OccurrenceKey(occurrence))
                plan(admit(occurrence), at: start)
            }
            for event in Planner.removedActivities(state: state, present: present.contains, now: start) {
                state.apply(event)
                step.append(Emitted(event: event, occurrence: nil, facts: .event))
            }
        }

        var nextIndex = 0
        var now = start
        var lastPrune = start
        while now < to {
            while nextIndex < occurrences.byEarliest.count && occurrences.byEarliest[nextIndex].earliest <= now {
                plan(admit(occurrences.byEarliest[nextIndex].occurrence), at: now)
                nextIndex += 1
            }
            while let next = agenda.next, next <= now {
                let (instant, index) = agenda.pop()!
                if slots[index]?.wake == instant { plan(index, at: now) }
            }
            if !step.isEmpty {
                step.sort { Planner.emittedBefore($0.event, $1.event) }
                for item in step { summary.counts[item.event.type, default: 0] += 1 }
                summary.total += step.count
                pending += step
                step.removeAll(keepingCapacity: true)
            }
            if pending.count >= options.batchSize {
                try await commit(pending, to: bus)
                pending.removeAll(keepingCapacity: true)
                if shouldStop() || bus.allSinksClosed {
                    summary.stopped = true
                    return
                }
            }
            if now.secondsSinceEpoch - lastPrune.secondsSinceEpoch >= options.pruneEvery {
                state.forget(expiredBefore: now)
                // The journal records the cut-off as handled, and a restart plans from there: it must not pass an
                // event still waiting for its commit (in a sparse calendar a batch can span weeks).
                var cutOff = now.adding(seconds: -options.retention)
                if let waiting = pending.first?.event.time { cutOff = min(cutOff, waiting) }
                try journal.prune(expiredBefore: cutOff, sinks: sinks.map(\.name))
                lastPrune = now
            }
            let admission =
                nextIndex < occurrences.byEarliest.count ? occurrences.byEarliest[nextIndex].earliest : nil
            guard let next = [agenda.next, admission].compactMap({ $0 }).min() else { break }
            now = next
        }
        try await commit(pending, to: bus)
    }

    /// A planned event with the occurrence and facts it was planned from (taken from its `Planner.Subject`, so
    /// nothing is classified again per event); `nil` and `.event` for an occurrence that is gone.
    private struct Emitted {
        var event: PlannedEvent
        var occurrence: Occurrence?
        var facts: PlanningFacts
    }

    /// Journals events, then hands what was committed to the bus.
    private func commit(_ pending: [Emitted], to bus: EventBus) async throws {
        guard !pending.isEmpty else { return }
        let recorded = recordedTime()
        let committed = try journal.append(pending.map(\.event), recorded: recorded)
        var index = 0
        let entries = committed.map { sequence, event in
            // Committed events come in the order given, some perhaps skipped as already journaled.
            while pending[index].event.id != event.id { index += 1 }
            return JournalStore.Entry(
                sequence: sequence, event: event, occurrence: pending[index].occurrence, facts: pending[index].facts,
                recorded: recorded)
        }
        await bus.publish(entries)
    }

    /// The replay's occurrences: in order of their earliest possible event, and by key for joining an event to its
    /// occurrence again when a sink reads it back from the journal.
    private final class Occurrences: Sendable {
        let byEarliest: [(earliest: Instant, occurrence: Occurrence)]
        let facts: @Sendable (Occurrence) -> PlanningFacts
        /// Built the first time a sink catches up, which most replays never need.
        private let byKey = Mutex<[OccurrenceKey: Occurrence]?>(nil)

        init(
            _ occurrences: [Occurrence], facts: @escaping @Sendable (Occurrence) -> PlanningFacts,
            configuration: PlannerConfiguration
        ) {
            self.facts = facts
            byEarliest = occurrences.map { occurrence in
                let earliest = Planner.earliestEvent(
                    of: occurrence, facts: facts(occurrence), configuration: configuration)
                return (earliest, occurrence)
            }.sorted { $0.earliest < $1.earliest }
        }

        @Sendable func entry(_ journaled: JournalStore.Journaled) -> JournalStore.Entry {
            let occurrence = byKey.withLock { index in
                if index == nil {
                    index = Dictionary(
                        byEarliest.map { (OccurrenceKey($0.occurrence), $0.occurrence) }, uniquingKeysWith: { $1 })
                }
                return index![journaled.event.key]
            }
            return JournalStore.Entry(
                sequence: journaled.sequence, event: journaled.event, occurrence: occurrence,
                facts: occurrence.map(facts) ?? .event, recorded: journaled.recorded)
        }
    }
}
