import Foundation
import Synchronization
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The real sinks together behind one bus: a slow or broken sink never holds the others back.
@Suite struct SinkPipelineTests {
    @Test(.timeLimit(.minutes(2)))
    func aSlowHookDoesNotDelayTheJSONLinesAndSQLiteSinks() async throws {
        let expected = try await SinkFixtures.wednesday()
        let reminders = expected.filter { $0.event.type == .reminderDue }.count
        let folder = SinkFixtures.folder()
        // The hook waits until the test lets it go.
        let script = SinkFixtures.script(
            """
            while [ ! -e "$(dirname "$0")/release" ]; do sleep 0.05; done
            echo "$CE_ID" >> "$(dirname "$0")/runs"
            """, in: folder)
        var hook = HookSettings(run: [script])
        hook.events = [.reminderDue]
        hook.timeout = .seconds(300)
        let sinks: [any EventSink] = [
            try JSONLinesSink.file(path: folder + "/events.jsonl"), try SQLiteSink(path: folder + "/events.db"),
            HookSink(settings: hook, now: { utc("2027-03-03T00:00:00Z") }, logger: LogRecorder().logger),
        ]
        let journal = try ReplayTests.journal()
        let replay = Task {
            try await ReplayTests.replay(journal: journal, sinks: sinks, from: "2027-03-03", to: "2027-03-04")
        }
        // Everything reaches the file and the database while the hook is still stuck on its first event.
        func databaseRows() throws -> [String] {
            try SinkFixtures.rows(folder + "/events.db", "SELECT count(*) FROM events")
        }
        while try SinkFixtures.lines(folder + "/events.jsonl").count < expected.count
            || databaseRows() != ["\(expected.count)"]
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(SinkFixtures.lines(folder + "/runs").isEmpty)
        _ = FileManager.default.createFile(atPath: folder + "/release", contents: nil)
        let summary = try await replay.value
        #expect(SinkFixtures.lines(folder + "/runs").count == reminders)
        #expect(summary.sinks.map(\.delivered) == Array(repeating: expected.count, count: 3))
    }

    @Test func aSinkOnAFullDiskIsReportedAndRetriedWhileTheOthersGoOn() async throws {
        let expected = try await SinkFixtures.wednesday()
        let folder = SinkFixtures.folder()
        // /dev/full fails every write with ENOSPC, as a full disk does.
        let sinks: [any EventSink] = [
            try JSONLinesSink.file(path: "/dev/full"), try SQLiteSink(path: folder + "/events.db"),
        ]
        let log = LogRecorder()
        var options = Replay.Options.small
        options.bus.retryDelay = .milliseconds(1)
        options.bus.maxRetryDelay = .milliseconds(5)
        let replay = Replay(
            occurrences: ReplayTests.occurrences, configuration: PlannerConfiguration(),
            journal: try ReplayTests.journal(), sinks: sinks, recordedTime: { Timestamp(millisecondsSinceEpoch: 0) },
            options: options, logger: log.logger)
        let summary = try await replay.run(
            from: try ReplayTests.instant("2027-03-03"), to: try ReplayTests.instant("2027-03-04"))
        #expect(try SinkFixtures.rows(folder + "/events.db", "SELECT count(*) FROM events") == ["\(expected.count)"])
        let full = summary.sinks[0]
        #expect(full.delivered == 0 && full.failures > 1 && full.undelivered == Int64(expected.count))
        let told = log.messages
        #expect(told.first == "jsonl:/dev/full: No space left on device (retrying)")
        // Told once for the whole streak of failures, not once per attempt.
        #expect(told.count == 1)
        #expect(summary.sinks[1].delivered == expected.count && summary.sinks[1].failures == 0)
    }
}
