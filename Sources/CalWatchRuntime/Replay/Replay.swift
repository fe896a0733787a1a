public import CalWatchCore
public import Logging

/// The whole pipeline on a virtual clock: planner → journal → bus → sinks, from one instant to another, as fast as
/// the machine allows (`calwatch replay`).
///
/// A `PlanningLoop` is stepped from one instant that asks for planning to the next. Events are applied to the
/// planner's state at once and committed to the journal in batches; sinks only ever see committed events, so a run
/// killed at any point and started again over the same journal emits the rest: nothing lost, nothing journaled
/// twice. State, journal and queues stay bounded however long the
/// window: ids are forgotten once expired, journal rows pruned once delivered and expired.
public final class Replay: Sendable {
    /// What a replay did.
    public struct Summary: Sendable {
        public var counts: [EventType: Int] = [:]
        public var total = 0
        /// Where planning started: later than asked when the journal had already handled that time.
        public var start: Instant
        /// Stopped before the end: asked to, or every sink's reader went away.
        public var stopped = false
        public var sinks: [EventBus.SinkReport] = []

        /// Counts a step's events into `counts`.
        mutating func count(_ events: [PlanningLoop.Emitted]) {
            EventType.tally(events, type: \.event.type, into: &counts)
        }
    }

    /// How a replay commits and prunes.
    public struct Options: Sendable {
        /// Events per journal transaction (and per batch handed to the sinks). Batches of 512 spent a tenth of a
        /// replay's time handing them between the planner's, the journal's and the sinks' threads.
        public var batchSize = 2048
        /// How long delivered events stay in the journal after they expire, and how often they are pruned.
        public var retention = PlanningLoop.Retention()
        /// A sink's queue holds 16 batches, as many events as the daemon's 64 of its smaller ones.
        public var bus = EventBus.Policy()

        public init() {
            bus.queueLimit = 16
        }
    }

    private let occurrences: Occurrences
    private let facts: @Sendable (Occurrence) -> OccurrenceFacts
    private let configuration: PlannerConfiguration
    private let journal: JournalStore
    private let sinks: [any EventSink]
    private let recordedTime: @Sendable () -> Timestamp
    private let options: Options
    private let logger: Logger

    /// Creates a replay of `occurrences` (any order), classified by `facts`, into `journal` and `sinks`;
    /// `recordedTime` is the real clock; `logger` hears about sink failures.
    public init(
        occurrences: [Occurrence], facts: @escaping @Sendable (Occurrence) -> OccurrenceFacts = { _ in .event },
        configuration: PlannerConfiguration, journal: JournalStore,
        sinks: [any EventSink], recordedTime: @escaping @Sendable () -> Timestamp, options: Options = Options(),
        logger: Logger = Logger(label: "calwatch.replay")
    ) {
        self.occurrences = Occurrences(occurrences, facts: facts)
        self.facts = facts
        self.configuration = configuration
        self.journal = journal
        self.sinks = sinks
        self.recordedTime = recordedTime
        self.options = options
        self.logger = logger
    }

    /// Replays `[from, to)`; `shouldStop` is asked between batches (a signal arrived).
    public func run(from: Instant, to: Instant, shouldStop: () -> Bool = { false }) async throws -> Summary {
        try await journal.verify(sinks)
        let bus = EventBus(
            journal: journal, sinks: sinks, policy: options.bus, entry: occurrences.entry, logger: logger)
        var summary = Summary(start: from)
        let reports = try await bus.running {
            try await produce(from: from, to: to, into: bus, summary: &summary, shouldStop: shouldStop)
        }
        summary.sinks = reports
        return summary
    }

    private func produce(
        from: Instant, to: Instant, into bus: EventBus, summary: inout Summary, shouldStop: () -> Bool
    ) async throws {
        let start = max(from, try await journal.handledUntil() ?? from)
        summary.start = start
        var loop = PlanningLoop(
            configuration: configuration, facts: facts, state: try await journal.plannerState(from: start),
            retention: options.retention)
        // Activities the journal says are running are planned from the start, and those whose occurrence is gone
        // end there.
        loop.addAll(occurrences.all, now: start, planningStopsAt: to)
        loop.endRemovedActivities(at: start)
        // Batches commit (journal, then the sinks' queues) in order on a task of their own while later ones are
        // planned: the planner, the journal and the sinks run on different threads, and the planner waits only when
        // `commitsAhead` batches are still uncommitted. With one batch ahead, the journal often sat idle while the
        // planner, sharing two cores with it and the sinks, was between batches. Prunes go the same way, after the
        // batches handed over before them: the planner waited a tenth of its time for prunes queued behind appends.
        let (journal, sinkNames) = (journal, sinks.map(\.name))
        let (work, toCommit) = AsyncStream.makeStream(of: JournalWork.self)
        let (commits, committed) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { committed.finish() }
                for await step in work {
                    switch step {
                    case .commit(let batch, let recorded):
                        try await bus.publish(batch, committingTo: journal, recorded: recorded)
                        committed.yield()
                    case .prune(let cutOff):
                        try await journal.prune(expiredBefore: cutOff, sinks: sinkNames)
                    }
                }
            }
            var commitsDone = commits.makeAsyncIterator()
            var pending: [PlanningLoop.Emitted] = []
            /// The first scheduled time of each batch handed over and not yet committed, oldest first: a prune must
            /// not pass them.
            var committing: [Instant] = []
            /// Waits for the oldest batch handed over to be committed; throws what stopped the committing task.
            func awaitOldestCommit() async throws {
                guard await commitsDone.next() != nil else {
                    // The committing task ended with batches waiting: it threw (rethrown here) or was cancelled.
                    try await group.waitForAll()
                    throw CancellationError()
                }
                committing.removeFirst()
            }
            func commitPending() async throws {
                while committing.count >= Self.commitsAhead { try await awaitOldestCommit() }
                guard !pending.isEmpty else { return }
                committing.append(pending[0].event.time)
                toCommit.yield(.commit(pending, recorded: recordedTime()))
                pending.removeAll(keepingCapacity: true)
            }
            func commitAll() async throws {
                try await commitPending()
                while !committing.isEmpty { try await awaitOldestCommit() }
            }
            defer { toCommit.finish() }
            var now = start
            while now < to {
                // Events wait for a full batch (in a sparse calendar a batch can span weeks): a prune must not pass
                // them.
                let uncommitted = [committing.first, pending.first?.event.time].compactMap { $0 }.min()
                let step = loop.step(at: now, uncommittedSince: uncommitted)
                if !step.events.isEmpty {
                    summary.count(step.events)
                    summary.total += step.events.count
                    pending += step.events
                }
                if pending.count >= options.batchSize {
                    try await commitPending()
                    if shouldStop() || bus.allSinksClosed {
                        try await commitAll()
                        summary.stopped = true
                        if shouldStop() { bus.stop() }
                        return
                    }
                }
                // The cut-off is never after an event not yet committed (`uncommittedSince`): a run killed after
                // the prune starts again no later than that event.
                if let cutOff = step.pruneBefore { toCommit.yield(.prune(cutOff)) }
                guard let next = loop.nextInstant else { break }
                now = next
            }
            try await commitAll()
        }
    }

    /// Batches handed to the committing task and not yet committed, at most, before the planner waits.
    private static let commitsAhead = 4

    /// What the committing task does, in the order it is handed over.
    private enum JournalWork: Sendable {
        /// Journals a batch and hands it to the sinks.
        case commit([PlanningLoop.Emitted], recorded: Timestamp)
        /// Prunes the journal (`JournalStore.prune`).
        case prune(Instant)
    }

    /// The replay's occurrences, and an index by key for joining an event to its occurrence again when a sink reads
    /// it back from the journal.
    private final class Occurrences: Sendable {
        let all: [Occurrence]
        let facts: @Sendable (Occurrence) -> OccurrenceFacts
        /// Built the first time a sink catches up, which most replays never need.
        private let byKey = Locked<[OccurrenceKey: Occurrence]?>(nil)

        init(_ occurrences: [Occurrence], facts: @escaping @Sendable (Occurrence) -> OccurrenceFacts) {
            all = occurrences
            self.facts = facts
        }

        @Sendable func entry(_ journaled: JournalStore.Journaled) -> JournalStore.Entry {
            let occurrence = byKey.withLock { index in
                let built = index ?? Dictionary(all.map { (OccurrenceKey($0), $0) }, uniquingKeysWith: { $1 })
                index = built
                return built[journaled.event.key]
            }
            return JournalStore.Entry(journaled, occurrence: occurrence, facts: facts)
        }
    }
}
