import CalWatchCore
public import Logging
public import ServiceLifecycle

/// The bus between the journal and the sinks (docs/design.md §1 and §6): each sink consumes committed events from its own
/// async stream, in its own task, at its own pace.
///
/// The journal is the buffer. A sink's stream holds at most `Policy.queueLimit` batches; when a sink lags
/// further behind, newer batches are not queued for it, and it reads them back from the journal when it gets
/// there (a gap in sequence numbers says so), made into entries again by `entry`. So a slow sink never delays another,
/// nothing is dropped, and memory stays bounded however far a sink lags. A sink that fails keeps its cursor and
/// is retried with a growing delay while the others go on.
///
/// The bus is a `Service`: `init` starts nothing, `run` runs one consumer per sink (and each sink's own `run`) as
/// children of one task group, and returns once `finish` (or a graceful shutdown) has closed its input and every
/// sink has handled what was committed. So no consumer outlives its owner, and a bus that replaces another
/// (a reload) starts reading the journal only after the old one has finished: nothing runs twice.
public final class EventBus: Service {
    /// How the bus queues and retries.
    public struct Policy: Sendable {
        /// Batches waiting per sink; beyond this a sink reads from the journal instead.
        public var queueLimit = 64
        /// Events per read when a sink catches up from the journal.
        public var catchUpChunk = 512
        /// The first delay after a failure (on the bus's clock); it doubles up to `maxRetryDelay` while failures
        /// go on.
        public var retryDelay: Duration = .milliseconds(100)
        public var maxRetryDelay: Duration = .seconds(5)
        /// Attempts to deliver what is left when the bus finishes; what still fails stays in the journal for the
        /// next run.
        public var finalAttempts = 5
        /// How long a failing sink that delivered earlier in the run is still tried when the bus finishes, beyond
        /// `finalAttempts`: a replay waits this long for a receiver or broker that is briefly down (counted in retry
        /// delays, on the bus's clock).
        public var finalWait: Duration = .zero

        public init() {}
    }

    /// What one sink did while the bus ran.
    public struct SinkReport: Sendable {
        public var name: String
        /// Events delivered.
        public var delivered = 0
        /// Of those, events read back from the journal: left by an earlier run, or beyond the queue.
        public var fromJournal = 0
        /// Failed deliveries (each retried later).
        public var failures = 0
        /// The last failure, worded for the user.
        public var lastFailure: String?
        /// Committed events the sink had not handled when the bus finished (they wait in the journal).
        public var undelivered: Int64 = 0
        /// The reader went away (`| head`): the sink stopped, which is not a failure.
        public var closed = false
    }

    /// How full each sink's queue is, shared by the publisher and the consumers.
    ///
    /// The publisher waits while no healthy sink has room: a replay then goes at the pace of its fastest sink
    /// instead of filling the journal for all of them. A sink that fails or whose reader went away is not waited
    /// for, so it never slows the others.
    private final class Pace: Sendable {
        /// Whether a sink is waited for.
        enum Health { case delivering, failing, closed }

        private struct State {
            var queued: [Int]
            var health: [Health]
            var waiter: CheckedContinuation<Void, Never>?
        }
        private let state: Locked<State>
        private let limit: Int

        init(lanes: Int, limit: Int) {
            state = Locked(
                State(
                    queued: Array(repeating: 0, count: lanes), health: Array(repeating: .delivering, count: lanes)))
            self.limit = limit
        }

        /// Room when some delivering sink's queue is not full, or when no sink is delivering at all.
        private static func hasRoom(_ state: State, limit: Int) -> Bool {
            let delivering = state.queued.indices.filter { state.health[$0] == .delivering }
            return delivering.isEmpty || delivering.contains { state.queued[$0] < limit }
        }

        private func update(_ change: (inout State) -> Void) {
            state.withLock { state in
                change(&state)
                if let waiter = state.waiter, Self.hasRoom(state, limit: limit) {
                    waiter.resume()
                    state.waiter = nil
                }
            }
        }

        func waitForRoom() async {
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    if Self.hasRoom(state, limit: limit) { continuation.resume() } else { state.waiter = continuation }
                }
            }
        }

        func queued(_ lane: Int) { update { $0.queued[lane] += 1 } }
        func taken(_ lane: Int) { update { $0.queued[lane] -= 1 } }
        func set(_ lane: Int, _ health: Health) { update { $0.health[lane] = health } }
        var allClosed: Bool { state.withLock { !$0.health.isEmpty && $0.health.allSatisfy { $0 == .closed } } }
    }

    private let streams: [AsyncStream<[JournalStore.Entry]>]
    private let inputs: [AsyncStream<[JournalStore.Entry]>.Continuation]
    private let sinks: [any EventSink]
    private let journal: JournalStore
    private let policy: Policy
    private let clock: any Clock<Duration>
    private let entry: @Sendable (JournalStore.Journaled) -> JournalStore.Entry
    private let logger: Logger
    private let pace: Pace
    private let reports = Outcome<[SinkReport]>()
    /// Set when the owner is stopping (a signal): a failing sink then gets one more try, without waiting.
    private let stopping = Outcome<Void>()
    /// Set when the input is closed (`finish`): a failing sink stops retrying on its timer and makes its final
    /// attempts.
    private let inputClosed = Outcome<Void>()
    /// The newest sequence number published, for each sink's backlog.
    private let newest = Locked<Int64>(0)

    /// A bus over `sinks`; nothing runs until `run`. Each consumer first delivers what the journal holds beyond its
    /// sink's cursor, joined to its occurrence by `entry`. Retry delays are slept on `clock`; failures and
    /// recoveries are logged with the sink's name (`sink.name`).
    public init(
        journal: JournalStore, sinks: [any EventSink], policy: Policy = Policy(),
        clock: any Clock<Duration> = ContinuousClock(),
        entry: @escaping @Sendable (JournalStore.Journaled) -> JournalStore.Entry, logger: Logger
    ) {
        self.journal = journal
        self.sinks = sinks
        self.policy = policy
        self.clock = clock
        self.entry = entry
        self.logger = logger
        pace = Pace(lanes: sinks.count, limit: policy.queueLimit)
        var streams: [AsyncStream<[JournalStore.Entry]>] = []
        var inputs: [AsyncStream<[JournalStore.Entry]>.Continuation] = []
        for _ in sinks {
            let (stream, input) = AsyncStream.makeStream(
                of: [JournalStore.Entry].self, bufferingPolicy: .bufferingOldest(policy.queueLimit))
            streams.append(stream)
            inputs.append(input)
        }
        self.streams = streams
        self.inputs = inputs
    }

    /// Runs every sink's consumer until the input is closed (`finish`, or a graceful shutdown) and all of them
    /// have handled what was committed; then the sinks' own work is stopped and awaited.
    public func run() async {
        await withGracefulShutdownHandler {
            await consume()
        } onGracefulShutdown: {
            self.stopping.set(())
            self.closeInput()
        }
    }

    private func consume() async {
        let done = await withTaskGroup(of: (Int, SinkReport)?.self) { group in
            for (index, sink) in sinks.enumerated() {
                let context = SinkContext(journal: journal, entry: entry)
                group.addTask { [self] in
                    var consumer = Consumer(sink: sink, lane: index, bus: self)
                    let report = await consumer.run(streams[index])
                    context.stopRun()
                    return (index, report)
                }
                group.addTask {
                    await sink.run(context)
                    return nil
                }
            }
            var reports = [SinkReport?](repeating: nil, count: sinks.count)
            for await case (let index, let report)? in group { reports[index] = report }
            return reports.compactMap { $0 }
        }
        reports.set(done)
    }

    private func closeInput() {
        inputClosed.set(())
        for input in inputs { input.finish() }
    }

    /// Whether every sink has stopped because its reader went away: then there is no point in going on.
    public var allSinksClosed: Bool { pace.allClosed }

    /// Hands committed events to every sink, once the fastest healthy sink has room for them. A sink without
    /// room gets them later from the journal.
    public func publish(_ entries: [JournalStore.Entry]) async {
        guard let last = entries.last?.sequence else { return }
        newest.withLock { $0 = max($0, last) }
        await pace.waitForRoom()
        for (index, input) in inputs.enumerated() {
            if case .enqueued = input.yield(entries) { pace.queued(index) }
        }
    }

    /// Closes the input and waits until `run` has returned: every sink has handled what was committed (or given up
    /// for this run, leaving it in the journal). The owner must be running `run`.
    public func finish() async -> [SinkReport] {
        closeInput()
        return await reports.wait() ?? []
    }

    /// Says the owner is stopping (SIGTERM): healthy sinks still get everything committed, but a failing sink is
    /// tried once more without waiting and then gives up for this run, so a sink that keeps failing never holds
    /// the process. What it missed stays in the journal. Call `finish` next.
    public func stop() {
        stopping.set(())
    }

    /// One sink's consumer: its cursor, its retries, its report.
    private struct Consumer {
        let sink: any EventSink
        let lane: Int
        let bus: EventBus
        var journal: JournalStore { bus.journal }
        var policy: Policy { bus.policy }
        var pace: Pace { bus.pace }
        var cursor: Int64 = 0
        var delay: Duration
        /// Failures since the last delivery that worked.
        var streak = 0
        /// Time spent in retry delays since the input closed.
        var waited: Duration = .zero
        /// The last failure is one that waiting does not mend (`SinkError.lasting`).
        var lasting = false
        /// How long the sink's receiver last asked to be left alone (`SinkError.retryAfter`), while it fails.
        var askedToWait: Duration?
        var report: SinkReport

        init(sink: any EventSink, lane: Int, bus: EventBus) {
            self.sink = sink
            self.lane = lane
            self.bus = bus
            delay = bus.policy.retryDelay
            report = SinkReport(name: sink.name)
        }

        mutating func run(_ stream: AsyncStream<[JournalStore.Entry]>) async -> SinkReport {
            do {
                cursor = try await journal.cursor(for: sink.name)
                // What an earlier run left in the journal counts in the backlog too.
                let last = try await journal.lastSequence()
                bus.newest.withLock { $0 = max($0, last) }
            } catch {
                failed("cannot read its cursor from the journal: \(error)")
            }
            _ = await catchUp(through: nil)
            await retryWhileFailing()
            for await batch in stream {
                pace.taken(lane)
                if report.closed { continue }
                // Stopping and failing: what is queued is in the journal; one catch-up below tries it all.
                if streak > 0 && bus.stopping.isSet { continue }
                guard let first = batch.first?.sequence else { continue }
                // A gap: batches beyond the queue, or ones that failed. The journal has them.
                if first > cursor + 1, await !catchUp(through: first - 1) {
                    await retryWhileFailing()
                    continue
                }
                let fresh = batch.drop { $0.sequence <= cursor }
                if !fresh.isEmpty, await !deliver(Array(fresh), fromJournal: false) { await retryWhileFailing() }
            }
            waited = .zero
            var attempts = 0
            while !report.closed, await !catchUp(through: nil) {
                attempts += 1
                // Only a sink that worked in this run, or whose receiver asked to be tried later (Retry-After), is
                // waited for (a broker restarting); one that never did has a wrong address or password, and
                // waiting would only delay saying so.
                let waitedEnough =
                    lasting || (report.delivered == 0 && askedToWait == nil) || waited >= policy.finalWait
                if bus.stopping.isSet || (attempts >= policy.finalAttempts && waitedEnough) { break }
            }
            if !report.closed, let last = try? await journal.lastSequence() {
                report.undelivered = max(0, last - cursor)
            }
            return report
        }

        /// A failing sink is tried again from the journal on its own timer (the delay doubling to
        /// `maxRetryDelay`), not when the next event comes, which may be hours later; what is published meanwhile
        /// is in the journal, and the queue it skips is never waited for. Ends when a delivery works, or the owner
        /// stops or finishes.
        mutating func retryWhileFailing() async {
            while streak > 0, !report.closed, !bus.stopping.isSet, !bus.inputClosed.isSet {
                if await catchUp(through: nil) { return }
            }
        }

        /// Delivers what the journal holds after the cursor, up to `last` (everything when `nil`). `false` when a
        /// delivery failed.
        mutating func catchUp(through last: Int64?) async -> Bool {
            while !report.closed {
                let rows: [JournalStore.Journaled]
                do {
                    rows = try await journal.events(after: cursor, limit: policy.catchUpChunk)
                } catch {
                    failed("cannot read the journal: \(error)")
                    await pause()
                    return false
                }
                let wanted = rows.prefix { row in last.map { row.sequence <= $0 } ?? true }
                if wanted.isEmpty { return true }
                let entries = wanted.map(bus.entry)
                guard await deliver(entries, fromJournal: true) else { return false }
            }
            return true
        }

        /// Delivers one batch and moves the cursor past it; on failure reports it and waits before the next try.
        mutating func deliver(_ entries: [JournalStore.Entry], fromJournal: Bool) async -> Bool {
            guard let last = entries.last?.sequence else { return true }
            do {
                try await sink.deliver(entries)
            } catch is DescriptorWriter.Closed {
                report.closed = true
                pace.set(lane, .closed)
                return false
            } catch {
                lasting = (error as? SinkError)?.lasting ?? false
                askedToWait = (error as? SinkError)?.retryAfter
                failed((error as? SinkError)?.reason ?? "\(error)")
                await pause()
                return false
            }
            askedToWait = nil
            if streak > 0 {
                bus.logger.notice(
                    "\(sink.name): delivering again after \(streak) failed attempts",
                    metadata: ["sink.name": "\(sink.name)", "sink.failures": "\(streak)"])
                streak = 0
                delay = policy.retryDelay
                pace.set(lane, .delivering)
            }
            cursor = last
            report.delivered += entries.count
            CalwatchMetrics.delivered(entries.count, sink: sink.name, backlog: backlog)
            if fromJournal { report.fromJournal += entries.count }
            do {
                try await journal.setCursor(last, for: sink.name)
            } catch {
                // Delivered: a stale cursor can only mean a duplicate after a crash, never a loss.
                failed("cannot record its cursor in the journal: \(error)")
            }
            return true
        }

        /// Events published that the sink has not handled.
        var backlog: Int64 { max(0, bus.newest.withLock { $0 } - cursor) }

        mutating func failed(_ reason: String) {
            CalwatchMetrics.failed(sink: sink.name, backlog: backlog)
            report.failures += 1
            report.lastFailure = reason
            // The first failure of a run of them is told; the rest only counted.
            if streak == 0 {
                bus.logger.warning(
                    "\(sink.name): \(reason) (retrying)",
                    metadata: ["sink.name": "\(sink.name)", "sink.error": "\(reason)"])
                pace.set(lane, .failing)
            }
            streak += 1
        }

        /// Waits before the next try, on the bus's clock, at least as long as the receiver asked; a stop ends the
        /// wait at once. Once the input has closed (a replay finishing), no longer than `finalWait` is left.
        mutating func pause() async {
            var wanted = max(delay, askedToWait ?? .zero)
            if bus.inputClosed.isSet, askedToWait != nil {
                wanted = min(wanted, max(policy.finalWait - waited, .milliseconds(1)))
            }
            let (clock, delay, stopping) = (bus.clock, wanted, bus.stopping)
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await clock.sleep(for: delay) }
                group.addTask { _ = await stopping.wait() }
                await group.next()
                group.cancelAll()
            }
            waited += delay
            self.delay = Backoff(first: policy.retryDelay, most: policy.maxRetryDelay).delay(after: self.delay)
        }
    }
}
