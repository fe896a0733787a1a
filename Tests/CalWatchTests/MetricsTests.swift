import Foundation
import Testing

/// The metrics file (`metrics: { textfile: … }`) as an operator scrapes it: valid for Prometheus' own checker
/// (`promtool check metrics`, from Debian's `prometheus` package), with the numbers the run had.
@Suite struct MetricsTests {
    let cli = CommandLineTests()

    /// What `promtool check metrics` says of a file: `nil` when it passes.
    static func promtoolProblems(_ path: String) async throws -> String? {
        do {
            _ = try await runProgram(["bash", "-c", #"promtool check metrics < "$0" 2>&1"#, path])
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Each sample line's value, by its name and labels as written (`calwatch_events_emitted_total{type="reminderDue"}`).
    static func samples(_ path: String) throws -> [String: Double] {
        var values: [String: Double] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") where !line.hasPrefix("#")
        {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            values[String(line[..<space])] = value
        }
        return values
    }

    @Test func aReplayLeavesAFilePromtoolAcceptsWithItsCounts() async throws {
        let folder = SinkFixtures.folder()
        let hook = SinkFixtures.script("exit 0", in: folder)
        try """
        metrics:
          textfile: metrics/calwatch.prom
        sinks:
          - type: jsonl
            path: events.jsonl
          - type: hook
            run: [\(hook)]
            on: [reminderDue]
        """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let broken = folder + "/broken.ics"
        try "not a calendar\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let run = try await cli.calwatch([
            "replay", ReplayKillTests.samples, broken, "--from", "2027-03-01", "--to", "2027-03-08", "--tz",
            "Europe/Berlin", "--config", folder + "/config.yml",
        ])
        #expect(run.status == 0, "\(run.errors)")
        let file = folder + "/metrics/calwatch.prom"
        #expect(try await Self.promtoolProblems(file) == nil)
        let values = try Self.samples(file)

        // Events by type, as the JSON Lines file has them; every sink caught up.
        let lines = SinkFixtures.lines(folder + "/events.jsonl")
        for type in ["reminderDue", "liveActivityStart", "liveActivityUpdate", "liveActivityEnd", "flightDetected"] {
            let written = lines.filter { $0.contains(#""type":"calwatch.\#(type)""#) }.count
            #expect(values["calwatch_events_emitted_total{type=\"\(type)\"}"] == Double(written), "\(type)")
        }
        let sink = "jsonl:" + folder + "/events.jsonl"
        #expect(values["calwatch_sink_delivered_events_total{sink=\"\(sink)\"}"] == Double(lines.count))
        #expect(values["calwatch_sink_backlog_events{sink=\"\(sink)\"}"] == 0)
        // One hook run per reminder, each timed.
        let reminders = Double(lines.filter { $0.contains(#""type":"calwatch.reminderDue""#) }.count)
        #expect(reminders > 0)
        #expect(values["calwatch_hook_runs_total{sink=\"hook:\(hook)\",outcome=\"success\"}"] == reminders)
        #expect(values["calwatch_hook_run_duration_seconds_count{sink=\"hook:\(hook)\"}"] == reminders)
        // The calendars read, the broken file's error among them, and the journal's rows.
        #expect((values["calwatch_calendar_files_parsed_total"] ?? 0) >= 4)
        #expect((values["calwatch_calendar_parse_errors_total"] ?? 0) >= 1)
        #expect((values["calwatch_journal_rows"] ?? 0) > 0)
        let planned = values["calwatch_last_plan_timestamp_seconds"] ?? 0
        #expect(abs(planned - Date().timeIntervalSince1970) < 600)
    }

    @Test func aTextfileNotEndingInPromIsAProblemWithTheFix() async throws {
        let folder = SinkFixtures.folder()
        try "metrics:\n  textfile: calwatch.txt\n".write(
            toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let run = try await cli.calwatch(["check", "--config", folder + "/config.yml", fixture("minimal.ics")])
        #expect(run.status == 64)
        #expect(
            run.errors.contains(
                "config.yml:2: error: metrics.textfile: node_exporter reads only files ending in .prom"),
            "\(run.errors)")
    }
}
