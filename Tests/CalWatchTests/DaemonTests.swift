import CalWatchDaemon
import Foundation
import Logging
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The daemon's wiring, built and run in process: the parts a configuration asks for, in the order they start and
/// stop, one daemon per journal, and a reminder through the whole of it.
@Suite struct DaemonTests {
    /// `calendar` with a meeting 20 minutes from now, and a configuration in `folder` that reads it.
    static func setUp(_ folder: NextTests.Folder, _ calendar: NextTests.Folder, extra: String = "") throws
        -> Configuration
    {
        let start = Date(timeIntervalSinceNow: 20 * 60)
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
        let stamp = format.string(from: start).replacingOccurrences(of: "-", with: "")
            .replacingOccurrences(of: ":", with: "")
        try calendar.write("review", ["SUMMARY:Design review", "DTSTART:\(stamp)", "DURATION:PT30M"])
        let text = """
            calendars: [\(calendar.path)]
            timezone: UTC
            state: journal.db
            sinks: [{ type: jsonl, path: events.jsonl }]
            \(extra)
            """
        return try ConfigurationLoader.parse(text, file: folder.path + "/config.yml", directory: folder.path)
    }

    static func options(_ configuration: Configuration) -> Daemon.Options {
        Daemon.Options { configuration }
    }

    @Test func thePartsStartInTheirOrderAndAReminderGoesThroughTheWhole() async throws {
        let (folder, calendar) = (try NextTests.Folder(), try NextTests.Folder())
        let configuration = try Self.setUp(
            folder, calendar,
            extra: """
                metrics: { textfile: \(folder.path)/calwatch.prom }
                """)
        let logger = Logger(label: "calwatch.test")
        do {
            let daemon = try await Daemon.build(
                configuration: configuration, options: Self.options(configuration), logger: logger)
            // The metrics file stops last, the server (its socket, its TCP listener) first: the order is the
            // parts', not the configuration's.
            var order: [Daemon.Part] = []
            for part in daemon.parts.map(\.part) where order.last != part { order.append(part) }
            #expect(order == [.metricsFile, .feeds, .passes, .watch, .server])
            // One daemon per journal.
            await #expect(throws: Daemon.Failure.self) {
                _ = try await Daemon.build(
                    configuration: configuration, options: Self.options(configuration), logger: logger)
            }
            let running = Task { try await daemon.run(gracefulShutdownSignals: [], logger: logger) }
            // The 30-minute reminder was due 10 minutes ago, before its meeting: it comes at once, marked late.
            try await eventually("the reminder in events.jsonl") {
                let text = (try? String(contentsOfFile: folder.path + "/events.jsonl", encoding: .utf8)) ?? ""
                return text.contains("calwatch.reminderDue") && text.contains("Design review")
            }
            running.cancel()
            try await running.value
        }
        // Gone, it gave the journal back.
        let again = try await Daemon.build(
            configuration: configuration, options: Self.options(configuration), logger: logger)
        #expect(again.parts.map(\.part).first == .metricsFile)
    }

    @Test func aWatcherOfAFleetWithDayIsRefusedBeforeAnythingStarts() async throws {
        let (folder, calendar) = (try NextTests.Folder(), try NextTests.Folder())
        let configuration = try Self.setUp(folder, calendar, extra: "day: {}\nme: [ada@example.org]")
        var options = Self.options(configuration)
        options.fleet = ("postgres:///calwatch?host=/nonexistent", 30)
        do {
            _ = try await Daemon.build(configuration: configuration, options: options, logger: Logger(label: "t"))
            Issue.record("built")
        } catch {
            #expect(error.kind == .configuration && error.description.contains("day:"), "\(error)")
        }
        // Nothing was locked or made.
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/journal.db"))
    }

    /// `calwatch check` in process: what it finds is returned, each problem naming the line of its sink.
    @Test func aCheckReturnsItsProblemsWithTheirLines() async throws {
        let (folder, calendar) = (try NextTests.Folder(), try NextTests.Folder())
        try calendar.write("standup", ["SUMMARY:Standup", "DTSTART:20270405T090000Z", "DURATION:PT15M"])
        let file = folder.path + "/blocker"
        try Data().write(to: URL(fileURLWithPath: file))
        let text = """
            calendars: [\(calendar.path)]
            timezone: UTC
            state: \(folder.path)/journal.db
            sinks:
              - { type: jsonl, path: \(file)/events.jsonl }
              - { type: hook, run: [calwatch-no-such-program] }
            serve: off
            """
        let configuration = try ConfigurationLoader.parse(
            text, file: folder.path + "/config.yml", directory: folder.path)
        let check = await ConfigurationCheck.run(
            configuration, source: "config.yml", configurationErrors: 0, zone: TimeZoneDatabase.rules(named: "UTC")!,
            now: Timestamp.now.instant, unsure: false, release: "test")
        #expect(check.configurationErrors == 2 && check.calendarErrors == 0, "\(check.messages)")
        #expect(
            check.messages.contains {
                $0.hasPrefix("config.yml:5: error: jsonl:\(file)/events.jsonl: ")
                    && $0.contains("is a file, not a folder")
            }, "\(check.messages)")
        #expect(
            check.messages.contains {
                $0.hasPrefix(
                    "config.yml:6: error: hook:calwatch-no-such-program: calwatch-no-such-program is not found in PATH")
            }, "\(check.messages)")
        #expect(
            check.report.hasPrefix("calwatch check: configuration config.yml: 2 errors; sinks: jsonl:"),
            "\(check.report)")
        #expect(check.report.contains("  serve: off"))
    }
}
