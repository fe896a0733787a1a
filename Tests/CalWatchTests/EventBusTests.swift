import Foundation
import Logging
import Synchronization
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The bus: every sink at its own pace, nothing lost, memory bounded, failures retried.
/// The time limit catches a sink or a stop that waits for hours; it is generous because the whole test run starts
/// at once and on two busy cores a test may wait most of a minute for its first turn.
@Suite(.timeLimit(.minutes(3))) struct EventBusTests {
    /// A sink that waits at a gate before its first delivery, so that it lags as far as the others let it.
    actor GatedSink: EventSink {
        nonisolated let name = "gated"
        var lines: [String] = []
        private var open = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func deliver(_ batch: [JournalStore.Entry]) async {
            if !open { await withCheckedContinuation { waiting.append($0) } }
            lines += batch.map(\.json)
        }

        func openGate() {
            open = true
            for continuation in waiting { continuation.resume() }
            waiting = []
        }
    }

    /// A sink that tells when it has received a number of events.
    actor CountingSink: EventSink {
        nonisolated let name = "fast"
        var lines: [String] = []
        private var target = Int.max
        private var reached: CheckedContinuation<Void, Never>?

        func deliver(_ batch: [JournalStore.Entry]) {
            lines += batch.map(\.json)
            if lines.count >= target, let reached {
                self.reached = nil
                reached.resume()
            }
        }

        func waitFor(_ count: Int) async {
            if lines.count >= count { return }
            target = count
            await withCheckedContinuation { reached = $0 }
        }
    }

    /// A sink whose deliveries fail `failures` times (a full disk, a broker restarting) once it has taken
    /// `workingFirst` batches, then work again.
    actor FlakySink: EventSink {
        nonisolated let name = "flaky"
        var lines: [String] = []
        var failuresLeft: Int
        var workingLeft: Int
        /// How many deliveries have begun that will fail, readable from outside the actor without waiting.
        nonisolated let failing = Mutex(0)
        init(failures: Int, workingFirst: Int = 0) {
            failuresLeft = failures
            workingLeft = workingFirst
        }

        func deliver(_ batch: [JournalStore.Entry]) throws {
            if workingLeft > 0 {
                workingLeft -= 1
            } else if failuresLeft > 0 {
                failing.withLock { $0 += 1 }
                failuresLeft -= 1
                throw SinkError(sink: name, reason: "No space left on device")
            }
            lines += batch.map(\.json)
        }
    }

    static var quickRetries: Replay.Options {
        var options = Replay.Options.small
        options.bus.queueLimit = 2
        options.bus.retryDelay = .milliseconds(1)
        options.bus.maxRetryDelay = .milliseconds(4)
        return options
    }

    static func expectedLines() async throws -> [String] {
        let sink = ReplayTests.CollectingSink()
        try await ReplayTests.replay(
            journal: try ReplayTests.journal(), sinks: [sink], from: "2027-03-01", to: "2027-03-03")
        return await sink.lines
    }

    /// Also with a replay's own journal, which writes a row only when a sink may read it back (`HeldRows`).
    @Test(arguments: [false, true])
    func aSlowSinkNeverDelaysAnotherAndGetsEverythingFromTheJournal(throwaway: Bool) async throws {
        let expected = try await Self.expectedLines()
        let fast = CountingSink()
        let slow = GatedSink()
        let journal = try JournalStore(path: JournalTests.temporaryPath(), throwaway: throwaway)
        let replay = Task {
            try await ReplayTests.replay(
                journal: journal, sinks: [slow, fast], from: "2027-03-01", to: "2027-03-03", options: Self.quickRetries)
        }
        // The fast sink gets every event while the slow one is still stuck on its first batch: if the bus
        // delivered to the sinks in turn, this would never return.
        await fast.waitFor(expected.count)
        #expect(await fast.lines == expected)
        #expect(await slow.lines.isEmpty)
        await slow.openGate()
        let summary = try await replay.value
        #expect(await slow.lines == expected)
        let slowReport = try #require(summary.sinks.first { $0.name == "gated" })
        // Its queue held two batches; the rest it read back from the journal.
        #expect(slowReport.fromJournal >= expected.count - 3 * Replay.Options.small.batchSize)
        #expect(slowReport.delivered == expected.count && slowReport.undelivered == 0)
    }

    @Test(arguments: [false, true]) func aFailingSinkIsRetriedWhileTheOthersGoOn(throwaway: Bool) async throws {
        let expected = try await Self.expectedLines()
        let fast = CountingSink()
        let flaky = FlakySink(failures: 3)
        let log = LogRecorder()
        let replay = Replay(
            occurrences: ReplayTests.occurrences, configuration: PlannerConfiguration(),
            journal: try JournalStore(path: JournalTests.temporaryPath(), throwaway: throwaway), sinks: [flaky, fast],
            recordedTime: { Timestamp(millisecondsSinceEpoch: 0) },
            options: Self.quickRetries, logger: log.logger)
        let summary = try await replay.run(
            from: try ReplayTests.instant("2027-03-01"), to: try ReplayTests.instant("2027-03-03"))
        #expect(await fast.lines == expected)
        #expect(await flaky.lines == expected)
        let report = try #require(summary.sinks.first { $0.name == "flaky" })
        #expect(report.failures == 3 && report.undelivered == 0)
        let told = log.messages
        #expect(told.first == "flaky: No space left on device (retrying)")
        #expect(log.metadata.first?["sink.name"] == "flaky")
        #expect(told.contains { $0.hasPrefix("flaky: delivering again after 3 failed attempts") })
    }

    /// SIGTERM on a long replay with a sink that keeps failing: it once tried every queued batch with a pause
    /// after each (up to 5 s) and ignored the signal for hours. Now the healthy sink still gets everything
    /// committed, the failing one one more try, and the replay ends at once (the suite's time limit would catch a
    /// wait: these pauses are ten seconds each on the real clock).
    @Test func aStopEndsAFailingSinksRetriesAndKeepsTheHealthyOnesWhole() async throws {
        let fast = CountingSink()
        let failing = FlakySink(failures: .max)
        var options = Replay.Options.small
        options.bus.retryDelay = .seconds(10)
        options.bus.maxRetryDelay = .seconds(10)
        let batches = Mutex(0)
        // The failing sink's failures when the stop came: the run may be slow (a busy machine), so the sink may
        // have been retried any number of times before it; after it, the try under way then, and one more at most.
        let failedAtStop = Mutex<Int?>(nil)
        let journal = try ReplayTests.journal()
        let replay = Replay(
            occurrences: ReplayTests.occurrences, configuration: PlannerConfiguration(), journal: journal,
            sinks: [failing, fast], recordedTime: { Timestamp(millisecondsSinceEpoch: 0) }, options: options,
            logger: LogRecorder().logger)
        let summary = try await replay.run(
            from: try ReplayTests.instant("2027-03-01"), to: try ReplayTests.instant("2027-03-08"),
            shouldStop: {
                let stop = batches.withLock {
                    $0 += 1
                    return $0 > 20
                }
                if stop { failedAtStop.withLock { $0 = $0 ?? failing.failing.withLock { $0 } } }
                return stop
            })
        #expect(summary.stopped)
        let committed = try await journal.lastSequence()
        #expect(committed > 100)
        #expect(Int64(await fast.lines.count) == committed)
        let report = try #require(summary.sinks.first { $0.name == "flaky" })
        let failedBeforeTheStop = try #require(failedAtStop.withLock { $0 })
        #expect(report.undelivered == committed, "\(report)")
        #expect(report.failures <= failedBeforeTheStop + 2, "\(report), \(failedBeforeTheStop) before the stop")
    }

    /// A sink that failed (a database restarting, a full disk) gets the event on its retry timer, though nothing
    /// more is published: the next event may be hours away. Before, it waited for that event (4 min 57 s in one run
    /// against a restarted PostgreSQL).
    @Test func aFailingSinkIsRetriedOnItsTimerWithoutANewEvent() async throws {
        let bench = try WatchTests.Bench()
        let flaky = FlakySink(failures: 3)
        bench.otherSinks = [flaky]
        try bench.writeRenamed(
            "work/m.ics", WatchTests.event(uid: "m", start: "20270301T100000Z", end: "20270301T110000Z"))
        try await bench.start(at: "2027-03-01T09:00:00Z")
        try await bench.advance(to: "2027-03-01T09:30:00Z")
        // Nothing is committed after the 30-minute reminder until 09:45; the retries (100, 200, 400 ms) bring it.
        try await eventually("the reminder delivered on a retry") {
            await flaky.lines.contains { $0.contains("calwatch.reminderDue") }
        }
        #expect(await flaky.failuresLeft == 0)
        _ = await bench.received()
    }

    /// A finishing replay waits (`finalWait`, `--wait-for-sinks`) for a sink that worked earlier in the run and then
    /// failed, so a broker restarting loses nothing; one that never worked is not waited for.
    @Test func aFinishingReplayWaitsForASinkThatHadWorkedAndNotForOneThatNeverDid() async throws {
        let expected = try await Self.expectedLines()
        var options = Self.quickRetries
        // Two hundred failures at 4 ms apart are 0.8 s of nominal delays: within the wait.
        options.bus.finalWait = .seconds(2)
        let restarting = FlakySink(failures: 200, workingFirst: 1)
        let waited = try await ReplayTests.replay(
            journal: try ReplayTests.journal(), sinks: [restarting], from: "2027-03-01", to: "2027-03-03",
            options: options)
        #expect(await restarting.lines == expected)
        #expect(waited.sinks.first?.undelivered == 0 && waited.sinks.first?.failures == 200)
        // Never delivered (a wrong address): five more tries, not an hour of them.
        options.bus.finalWait = .seconds(3600)
        let broken = FlakySink(failures: .max)
        let gaveUp = try await ReplayTests.replay(
            journal: try ReplayTests.journal(), sinks: [broken], from: "2027-03-01", to: "2027-03-03",
            options: options)
        #expect(gaveUp.sinks.first?.undelivered == Int64(expected.count))
        #expect((gaveUp.sinks.first?.failures ?? 0) < 1000, "\(gaveUp.sinks.first?.failures ?? 0) attempts")
    }

    @Test func whatASinkCouldNotTakeWaitsInTheJournalForTheNextRun() async throws {
        let expected = try await Self.expectedLines()
        let journal = try ReplayTests.journal()
        let broken = FlakySink(failures: .max)
        let fast = CountingSink()
        let first = try await ReplayTests.replay(
            journal: journal, sinks: [broken, fast], from: "2027-03-01", to: "2027-03-03", options: Self.quickRetries)
        #expect(await fast.lines == expected)
        #expect(first.sinks.first { $0.name == "flaky" }?.undelivered == Int64(expected.count))
        // Repaired: the next run delivers it all, and plans nothing new.
        let repaired = FlakySink(failures: 0)
        let second = try await ReplayTests.replay(
            journal: journal, sinks: [repaired], from: "2027-03-01", to: "2027-03-03", options: Self.quickRetries)
        #expect(await repaired.lines == expected)
        #expect(second.total == 0)
    }
}
