import Foundation
import Testing

/// `calwatch watch` as a user runs it, in real time: the built executable following a folder, with a JSON Lines
/// sink and a hook, and the signals a service manager sends.
@Suite struct WatchCommandTests {
    /// `calwatch watch --config config.yml` started in `folder`, logging into `log.txt` there.
    static func watch(in folder: String, environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.executableURL = CommandLineTests.executable
        process.arguments = ["watch", "--config", folder + "/config.yml", "--log-level", "info"]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        _ = FileManager.default.createFile(atPath: folder + "/log.txt", contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/log.txt"))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test func eventsArriveAtTheirInstantsAndSignalsAreHandled() async throws {
        let folder = TestFolders.path("calwatch-watch-e2e")
        try FileManager.default.createDirectory(atPath: folder + "/cal/work", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let configuration = """
            calendars: [cal]
            timezone: UTC
            state: state/journal.db
            reminders:
              offsets: [6s, 3s]
            liveActivity: { lead: 4s, updateEvery: 2s, maxDuration: 1h }
            metrics: { textfile: metrics.prom, every: 1s }
            sinks:
              - type: jsonl
                path: events.jsonl
              - type: hook
                run: [/bin/sh, -c, 'printf "%s %s\\n" "$CE_TYPE" "$CALWATCH_SUMMARY" >> "$0"', hooks.log]
                on: [reminderDue]
            """
        try configuration.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)

        let process = try Self.watch(in: folder)
        defer { if process.isRunning { process.terminate() } }
        func log() -> String { (try? String(contentsOfFile: folder + "/log.txt", encoding: .utf8)) ?? "" }
        func waitFor(_ text: String, seconds: Double) async throws -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while !log().contains(text) {
                if Date() > deadline { return false }
                try await Task.sleep(for: .milliseconds(50))
            }
            return true
        }
        #expect(try await waitFor("watching", seconds: 60), "\(log())")

        // A meeting 20 s ahead, written the way vdirsyncer writes: a temporary name, then a rename. Its first
        // reminder is 14 s away, time enough for the daemon to read it on a busy machine.
        let now = Int(Date().timeIntervalSince1970)
        let start = now + 20
        let end = start + 6
        func stamp(_ seconds: Int) -> String {
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
        }
        let item = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT", "UID:e2e",
            "DTSTAMP:20270101T000000Z", "DTSTART:\(stamp(start))", "DTEND:\(stamp(end))",
            "SUMMARY:Standup $(touch pwned)",
            "END:VEVENT", "END:VCALENDAR",
        ].joined(separator: "\r\n")
        try item.write(toFile: folder + "/cal/work/e2e.ics8d0c1a2b", atomically: false, encoding: .utf8)
        #expect(rename(folder + "/cal/work/e2e.ics8d0c1a2b", folder + "/cal/work/e2e.ics") == 0)

        // SIGHUP with a broken configuration: reported, and the one in use stays.
        try await Task.sleep(for: .seconds(2))
        try (configuration + "\nreminder: typo\n").write(
            toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        #expect(try await waitFor("configuration not reloaded", seconds: 60), "\(log())")

        #expect(try await waitFor("liveActivityEnd 1", seconds: Double(end - now) + 60), "\(log())")
        kill(process.processIdentifier, SIGTERM)
        try await offCooperativePool { process.waitUntilExit() }
        #expect(process.terminationStatus == 0, "\(log())")
        #expect(log().contains("stopping"))

        let lines = try String(contentsOfFile: folder + "/events.jsonl", encoding: .utf8).split(separator: "\n")
        func milliseconds(_ line: Substring, _ field: String) -> Int {
            eventDate(line, field).map { Int(($0.timeIntervalSince1970 * 1000).rounded()) } ?? Int.min
        }
        let timeline = lines.map { line in
            let type = line.firstMatch(of: /"type":"calwatch\.(\w+)"/).map { String($0.1) } ?? "?"
            return "\(type) \(milliseconds(line, "time") / 1000 - start)"
        }
        #expect(
            timeline == [
                "reminderDue -6", "liveActivityStart -4", "reminderDue -3", "liveActivityUpdate -2",
                "liveActivityUpdate 0", "liveActivityUpdate 2", "liveActivityUpdate 4", "liveActivityEnd 6",
            ])
        // Each arrived at its instant, never before it; recordedtime says how late, to the millisecond (within a
        // second when the machine is quiet; generous here, for a busy one).
        for line in lines {
            #expect(line.firstMatch(of: /"recordedtime":"[^"]*T..:..:..\.\d{3}Z"/) != nil, "\(line)")
            let lateness = milliseconds(line, "recordedtime") - milliseconds(line, "time")
            #expect(lateness >= 0 && lateness < 10_000, "\(line)")
        }
        let hooks = try String(contentsOfFile: folder + "/hooks.log", encoding: .utf8)
        #expect(hooks == String(repeating: "calwatch.reminderDue Standup $(touch pwned)\n", count: 2))
        #expect(!FileManager.default.fileExists(atPath: folder + "/pwned"))

        // The metrics file written as the daemon stopped: the same eight events, each timed against its instant,
        // and the two hook runs.
        let metrics = folder + "/metrics.prom"
        #expect(try await MetricsTests.promtoolProblems(metrics) == nil)
        let values = try MetricsTests.samples(metrics)
        let emitted = values.filter { $0.key.hasPrefix("calwatch_events_emitted_total{") }.values.reduce(0, +)
        #expect(emitted == 8, "\(values)")
        // By what woke the daemon: its timer for these (a file read late would make some `change`).
        func total(_ prefix: String) -> Double { values.filter { $0.key.hasPrefix(prefix) }.values.reduce(0, +) }
        #expect(total("calwatch_emit_lateness_seconds_count{") == 8, "\(values)")
        #expect((values["calwatch_emit_lateness_seconds_count{cause=\"timer\"}"] ?? 0) >= 5, "\(values)")
        #expect(
            values.filter {
                $0.key.hasPrefix("calwatch_emit_lateness_seconds_bucket{") && $0.key.contains("le=\"10.0\"")
            }
            .values.reduce(0, +) == 8, "\(values)")
        #expect(
            values.filter { $0.key.hasPrefix("calwatch_hook_runs_total{") && $0.key.contains("success") }.values.first
                == 2)
        #expect(values.filter { $0.key.hasPrefix("calwatch_sink_backlog_events{") }.values.allSatisfy { $0 == 0 })
    }

    @Test func aReloadWhileAHookRunsDoesNotRunItAgain() async throws {
        let folder = TestFolders.path("calwatch-watch-reload")
        try FileManager.default.createDirectory(atPath: folder + "/cal/work", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A meeting a minute ahead: its 5-minute reminder is due (late) at once, and the hook takes 3 s.
        let now = Int(Date().timeIntervalSince1970)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        formatter.timeZone = TimeZone(identifier: "UTC")
        func stamp(_ seconds: Int) -> String { formatter.string(from: Date(timeIntervalSince1970: Double(seconds))) }
        try [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT", "UID:reload",
            "DTSTAMP:20270101T000000Z", "DTSTART:\(stamp(now + 60))", "DTEND:\(stamp(now + 120))", "SUMMARY:Review",
            "END:VEVENT", "END:VCALENDAR",
        ].joined(separator: "\r\n").write(toFile: folder + "/cal/work/reload.ics", atomically: true, encoding: .utf8)
        try """
        calendars: [cal]
        timezone: UTC
        state: state/journal.db
        reminders:
          offsets: [5m]
        sinks:
          - type: hook
            run: [/bin/sh, -c, 'echo "$CE_ID" >> "$0.started"; sleep 3; echo "$CE_ID" >> "$0"', hooks.log]
            on: [reminderDue]
        """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)

        let process = try Self.watch(in: folder)
        defer { if process.isRunning { process.terminate() } }
        func log() -> String { (try? String(contentsOfFile: folder + "/log.txt", encoding: .utf8)) ?? "" }

        // SIGHUP while the hook is in the middle of its run.
        try await eventually("the hook to start") { !SinkFixtures.lines(folder + "/hooks.log.started").isEmpty }
        kill(process.processIdentifier, SIGHUP)
        try await eventually("the reload") { log().contains("configuration read again") }
        try await eventually("the hook to finish") { !SinkFixtures.lines(folder + "/hooks.log").isEmpty }
        // Time for a second run, had the new watch's bus delivered the event again.
        try await Task.sleep(for: .seconds(4))
        kill(process.processIdentifier, SIGTERM)
        try await offCooperativePool { process.waitUntilExit() }
        #expect(process.terminationStatus == 0, "\(log())")
        #expect(SinkFixtures.lines(folder + "/hooks.log.started").count == 1, "\(log())")
        #expect(SinkFixtures.lines(folder + "/hooks.log").count == 1)
    }
}
