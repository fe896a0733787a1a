import CalWatchCore
import CalWatchRuntime
import Foundation
import Testing

/// `calwatch scan` as a user runs it: the built executable in a child process.
@Suite struct CommandLineTests {
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    /// The `calwatch` binary that `swift test` built next to the test bundle.
    static var executable: URL {
        Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent("calwatch")
    }

    /// The front and its program linked (or copied) into `folder`, for a run as another user: a clone's build
    /// folder may be its owner's alone, and the front runs the program beside it.
    static func executable(in folder: String) throws -> URL {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in ["calwatch", "calwatch-commands"] {
            let source = executable.deletingLastPathComponent().appendingPathComponent(name).path
            if (try? FileManager.default.linkItem(atPath: source, toPath: folder + "/" + name)) == nil {
                try FileManager.default.copyItem(atPath: source, toPath: folder + "/" + name)
            }
        }
        return URL(fileURLWithPath: folder + "/calwatch")
    }

    /// `calwatch replay CALENDAR WINDOW --config FOLDER/config.yml --state FOLDER/journal.db` started in the
    /// background, its standard output dropped and its error output in FOLDER/errors.
    static func startReplay(_ calendar: String, window: [String], folder: String) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments =
            ["replay", calendar] + window + ["--config", folder + "/config.yml", "--state", folder + "/journal.db"]
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: folder + "/errors", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: folder + "/errors")
        try process.run()
        return process
    }

    /// Runs the binary on a thread of its own: waiting for a child process must not hold one of the few threads
    /// every other test's async work needs.
    /// `setpriv`: run it through util-linux's setpriv with these options (as another user). `environment`: variables
    /// added to the test's own. `executable`: another copy of the binary.
    func calwatch(
        _ arguments: [String], input: String? = nil, shellPipe: String? = nil, setpriv: [String]? = nil,
        environment: [String: String] = [:], executable: URL = executable
    ) async throws -> Run {
        try await offCooperativePool {
            try self.calwatchBlocking(
                arguments, input: input, shellPipe: shellPipe, setpriv: setpriv, environment: environment,
                executable: executable)
        }
    }

    func calwatchBlocking(
        _ arguments: [String], input: String? = nil, shellPipe: String? = nil, setpriv: [String]? = nil,
        environment: [String: String] = [:], executable: URL = executable
    ) throws -> Run {
        let process = Process()
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        let errors = Pipe()
        if let shellPipe {
            // Only for the `| head` test: the shell is ours, the arguments are fixed strings.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = [
                "-c", "'\(executable.path)' " + arguments.joined(separator: " ") + " | " + shellPipe,
            ]
        } else if let setpriv {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = setpriv + [executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        process.standardOutput = output
        process.standardError = errors
        let inputPipe = Pipe()
        process.standardInput = inputPipe
        try process.run()
        if let input { inputPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try inputPipe.fileHandleForWriting.close()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData, as: UTF8.self))
    }

    /// One hostile file cannot flood standard error (or the daemon's log, which reports the same way): 2,000
    /// unclosed `BEGIN:VEVENT` lines are 4,000 problems, of which the first 20 are shown and the rest counted on one
    /// line, marked an error because some of them are; a good file beside it is still read and its problem shown.
    @Test func aFileWithThousandsOfProblemsShowsTheFirstAndCountsTheRest() async throws {
        let folder = TestFolders.path("calwatch-many-problems")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let hostile = "BEGIN:VCALENDAR\r\n" + String(repeating: "BEGIN:VEVENT\r\n", count: 2000) + "END:VCALENDAR\r\n"
        try hostile.write(toFile: folder + "/hostile.ics", atomically: true, encoding: .utf8)
        try [
            "BEGIN:VCALENDAR", "VERSION:2.0", "BEGIN:VEVENT", "UID:good", "DTSTART:20270301T100000Z", "SUMMARY:Good",
            "X-BROKEN", "END:VEVENT", "END:VCALENDAR",
        ].joined(separator: "\r\n").write(toFile: folder + "/good.ics", atomically: true, encoding: .utf8)
        let run = try await calwatch(["scan", folder, "--from", "2027-03-01", "--to", "2027-03-02", "--tz", "UTC"])
        let lines = run.errors.split(separator: "\n")
        let hostileLines = lines.filter { $0.hasPrefix(folder + "/hostile.ics") }
        #expect(hostileLines.count == 21, "\(lines.count) lines")
        let counted = folder + "/hostile.ics: error: 3980 more problems in this file are not shown; the first 20 are"
        #expect(hostileLines.last.map(String.init) == counted, "\(hostileLines.last ?? "")")
        #expect(lines.contains { $0.hasPrefix(folder + "/good.ics:") }, "\(run.errors)")
        #expect(run.output.contains(#""uid":"good""#))
    }

    /// `END;X=1:VEVENT` is a boundary to libical, which then printed its own debug line
    /// (`icalparser.c:786: Encountered END before BEGIN`) and, for `BEGIN;…`, lost the whole file: every line on
    /// standard error is in calwatch's `FILE:LINE: error|warning:` shape, and every event is read.
    @Test func boundaryLinesWithParametersAreMendedAndEveryMessageHasTheFileAndLine() async throws {
        let text =
            [
                "BEGIN:VCALENDAR", "VERSION:2.0", "END;X-A=1:VEVENT", "BEGIN;X-B=\"a:b\":VEVENT", "UID:one",
                "DTSTART:20270301T100000Z", "SUMMARY:One", "BEGIN:VALARM", "TRIGGER:-PT5M", "ACTION:DISPLAY",
                "END;X=1:VALARM", "END;X=1:VEVENT", "BEGIN:VEVENT", "UID:two", "DTSTART:20270302T100000Z",
                "SUMMARY:Two",
                "END:VEVENT", "END:VCALENDAR",
            ].joined(separator: "\r\n") + "\r\n"
        let run = try await calwatch(
            ["scan", "-", "--from", "2027-03-01", "--to", "2027-03-03", "--tz", "UTC"], input: text)
        #expect(run.status == 0)
        #expect(run.output.split(separator: "\n").count == 2, "both events: \(run.output)")
        let lines = run.errors.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.wholeMatch(of: /-:\d+: (error|warning): .+/) != nil }, "\(lines)")
        #expect(lines.contains("-:4: warning: parameters on BEGIN:VEVENT are ignored"))
    }

    @Test func scanPrintsSortedJSONLinesWithTheDocumentedKeys() async throws {
        let run = try await calwatch([
            "scan", fixture("google-recurring.ics"), "--from", "2025-03-24", "--to", "2025-03-27", "--tz",
            "Europe/Berlin",
        ])
        #expect(run.status == 0)
        let objects = run.output.split(separator: "\n").map {
            try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(
            objects.map { $0["start"] as! String } == [
                "2025-03-24T08:30:00Z", "2025-03-25T15:00:00Z", "2025-03-26T13:00:00Z",
            ])
        let keys = [
            "uid", "recurrenceId", "calendar", "summary", "start", "end", "startLocal", "timeZone", "allDay",
            "status", "kind", "confidence", "flight", "meeting",
        ]
        for object in objects { #expect(keys.allSatisfy { object.keys.contains($0) }) }
        #expect(objects[0]["startLocal"] as? String == "2025-03-24T09:30:00+01:00")
        #expect(objects[0]["kind"] as? String == "event")
        #expect(objects[0]["flight"] is NSNull)
    }

    @Test func exitCode65OnlyWhenNothingCouldBeRead() async throws {
        let bad = try await calwatch([
            "scan", fixture("not-a-calendar.ics"), "--from", "2025-03-01", "--to", "2025-04-01",
        ])
        #expect(bad.status == 65)
        #expect(bad.errors.contains("not-a-calendar.ics:1: error: not iCalendar data"))
        let mixed = try await calwatch([
            "scan", fixture("not-a-calendar.ics"), fixture("minimal.ics"), "--from", "2025-03-01", "--to", "2025-04-01",
        ])
        #expect(mixed.status == 0)
        #expect(mixed.output.contains("\"uid\":\"bare-lf\""))
        #expect(mixed.errors.contains("not-a-calendar.ics:1: error"))
    }

    /// A `response` inside an `href` once trapped the multistatus reader (SIGILL): now it is data like any other.
    static let hrefHoldingAResponse =
        #"<D:multistatus xmlns:D="DAV:"><D:href><D:response/>x</D:href></D:multistatus>"# + "\n"

    @Test func aHostileCalDAVExportIsAnErrorAndTheOtherFilesAreRead() async throws {
        let path = TestFolders.path("calwatch-hostile", suffix: ".xml")
        try Self.hrefHoldingAResponse.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let alone = try await calwatch(["scan", path, "--from", "2025-03-01", "--to", "2025-04-01"])
        #expect(alone.status == 65)
        #expect(alone.errors.contains("\(path): error: the multistatus document holds no calendar-data"))
        let mixed = try await calwatch([
            "scan", path, fixture("minimal.ics"), "--from", "2025-03-01", "--to", "2025-04-01",
        ])
        #expect(mixed.status == 0)
        #expect(mixed.output.contains("\"uid\":\"bare-lf\""))
        #expect(mixed.errors.contains("\(path): error: the multistatus document holds no calendar-data"))
    }

    @Test func usageErrorsExit64WithAnExplanation() async throws {
        let reversed = try await calwatch([
            "scan", fixture("minimal.ics"), "--from", "2025-03-02", "--to", "2025-03-01",
        ])
        #expect(reversed.status == 64)
        #expect(reversed.errors.contains("--to (2025-03-01T00:00:00Z) must be after --from"))
        let zone = try await calwatch(["scan", fixture("minimal.ics"), "--tz", "Mars/Olympus"])
        #expect(zone.status == 64)
        #expect(zone.errors.contains("'Mars/Olympus' is not a known zone"))
        let time = try await calwatch(["scan", fixture("minimal.ics"), "--from", "yesterday-ish"])
        #expect(time.status == 64)
        #expect(time.errors.contains("write 2027-03-01"))
    }

    @Test func emptyDirectoryIsExplainedAndExits65() async throws {
        let directory = URL(fileURLWithPath: TestFolders.path("calwatch-empty"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await calwatch(["scan", directory.path, "--from", "2025-03-01", "--to", "2025-04-01"])
        #expect(run.status == 65)
        #expect(run.errors.contains("\(directory.path): warning: no calendar files here"))
        let alarmsTable = try await calwatch(["scan", directory.path, "--alarms", "--format", "table"])
        #expect(alarmsTable.status == 64)
    }

    @Test func standardInputAndTable() async throws {
        let text = try String(contentsOfFile: fixture("minimal.ics"), encoding: .utf8)
        let run = try await calwatch(
            ["scan", "-", "--from", "2025-03-01", "--to", "2025-04-01", "--tz", "UTC", "--format", "table"], input: text
        )
        #expect(run.status == 0)
        #expect(run.output.contains("Wed 2025-03-05  10:00  stdin     (no title)"))
        #expect(run.output.hasSuffix("1 occurrence\n"))
    }

    @Test func theTableSaysWhichAreFlightsAndMeetings() async throws {
        let samples = ConfigurationTests.repository + "/samples/calendars"
        let arguments = [
            "scan", samples, "--from", "2027-03-03", "--to", "2027-03-04", "--tz", "Europe/Berlin", "--format", "table",
        ]
        let run = try await calwatch(arguments)
        #expect(run.status == 0, "\(run.errors)")
        let lines = run.output.split(separator: "\n")
        #expect(lines.first?.contains("SUMMARY                    KIND") == true, "\(run.output)")
        #expect(lines.contains { $0.contains("BA987 BER to LHR") && $0.contains("flight BA987 BER→LHR") })
        #expect(lines.contains { $0.contains("1:1 Maya / me") && $0.contains("meeting meet") })
        let plain = try await calwatch(arguments + ["--no-classify"])
        #expect(!plain.output.contains("flight BA987"))
    }

    @Test func aConsumerThatStopsReadingEndsTheScanQuietly() async throws {
        let run = try await calwatch(
            ["scan", fixture("pathological.ics"), "--from", "2025-03-01T00:00Z", "--to", "2025-03-01T12:00Z"],
            shellPipe: "head -n 2")
        #expect(run.output.split(separator: "\n").count == 2)
        #expect(run.errors.isEmpty)
    }

    @Test func alarmsFlagPrintsTriggers() async throws {
        let run = try await calwatch([
            "scan", fixture("apple-all-day.ics"), "--alarms", "--from", "2025-03-18", "--to", "2025-03-19", "--tz",
            "Europe/Berlin",
        ])
        #expect(run.status == 0)
        let triggers = run.output.split(separator: "\n").map {
            (try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any])["trigger"] as! String
        }
        #expect(triggers == ["2025-03-18T08:10:00Z", "2025-03-18T08:15:00Z", "2025-03-18T08:20:00Z"])
    }
}

/// `calwatch replay` killed with SIGKILL part-way and started again over the same journal.
@Suite(.serialized) struct ReplayKillTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("samples/calendars").path
    static let window = ["--from", "2027-01-01", "--to", "2027-07-01", "--tz", "Europe/Berlin"]

    /// Runs a replay; with `killAfter`, sends `signal` once that many lines have been printed.
    static func replay(
        state: String?, window: [String] = window, killAfter: Int? = nil, signal: Int32 = SIGKILL
    ) async throws -> [String] {
        try await offCooperativePool {
            try replayBlocking(state: state, window: window, killAfter: killAfter, signal: signal)
        }
    }

    static func replayBlocking(
        state: String?, window: [String], killAfter: Int?, signal: Int32
    ) throws -> [String] {
        let process = Process()
        process.executableURL = CommandLineTests.executable
        process.arguments = ["replay", samples] + window + (state.map { ["--state", $0] } ?? [])
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var data = Data()
        let reader = output.fileHandleForReading
        while true {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            data.append(chunk)
            if let killAfter, data.reduce(0, { $1 == 10 ? $0 + 1 : $0 }) >= killAfter {
                kill(process.processIdentifier, signal)
                data.append(reader.readDataToEndOfFile())
                break
            }
        }
        process.waitUntilExit()
        // A line cut by the kill is not an event the sink finished printing.
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).filter {
            $0.hasSuffix("}")
        }
    }

    static func id(_ line: String) -> String {
        String(line[line.range(of: "\"id\":\"")!.upperBound...].prefix(32))
    }

    @Test(arguments: [600, 1700, 3300])
    func killedAndStartedAgainLosesNothingAndRepeatsAtMostTheBatchInFlight(killAfter: Int) async throws {
        let full = try await Self.replay(state: nil).map(Self.id)
        #expect(full.count > 4000)
        let state = JournalTests.temporaryPath()
        let first = try await Self.replay(state: state, killAfter: killAfter)
        #expect(first.count >= killAfter && first.count < full.count, "the kill came too late to test anything")
        let second = try await Self.replay(state: state)
        let all = (first + second).map(Self.id)
        #expect(Set(all) == Set(full))
        let duplicates = all.count - Set(all).count
        #expect(duplicates <= CalWatchRuntime.Replay.Options().batchSize, "\(duplicates) events printed twice")
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func stoppedBySignalAndStartedAgainPrintsEveryEventOnce(signal: Int32) async throws {
        // Five years, so that the signal comes while the planner is still at work.
        let window = ["--from", "2027-01-01", "--to", "2032-01-01", "--tz", "Europe/Berlin"]
        let full = try await Self.replay(state: nil, window: window).map(Self.id)
        let state = JournalTests.temporaryPath()
        let first = try await Self.replay(state: state, window: window, killAfter: 1000, signal: signal)
        #expect(first.count >= 1000 && first.count < full.count, "the signal came too late to test anything")
        let second = try await Self.replay(state: state, window: window)
        #expect((first + second).map(Self.id) == full)
    }
}

/// `calwatch replay` with the file and database sinks of a configuration, killed with SIGKILL part-way.
@Suite(.serialized) struct SinkKillTests {
    static let window = ["--from", "2027-01-01", "--to", "2032-01-01", "--tz", "Europe/Berlin"]

    /// Runs a replay into `folder`'s sinks; with `killAfter`, SIGKILL once the JSONL file has that many lines.
    static func replay(folder: String, killAfter: Int? = nil) async throws -> Int32 {
        try await offCooperativePool { try replayBlocking(folder: folder, killAfter: killAfter) }
    }

    static func replayBlocking(folder: String, killAfter: Int?) throws -> Int32 {
        let process = try CommandLineTests.startReplay(ReplayKillTests.samples, window: window, folder: folder)
        if let killAfter {
            while process.isRunning {
                let lines =
                    (try? Data(contentsOf: URL(fileURLWithPath: folder + "/events.jsonl")))?
                    .reduce(0) { $1 == 10 ? $0 + 1 : $0 } ?? 0
                if lines >= killAfter {
                    kill(process.processIdentifier, SIGKILL)
                    break
                }
                usleep(500)
            }
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func afterSIGKILLTheDatabaseHoldsEveryEventOnceAndTheFileAtMostOneTwice() async throws {
        let full = try await ReplayKillTests.replay(state: nil, window: Self.window).map(ReplayKillTests.id)
        #expect(full.count > 20_000)
        for killAfter in [Int.random(in: 1000..<6000), Int.random(in: 6000..<15_000)] {
            let folder = SinkFixtures.folder()
            try "sinks:\n  - type: jsonl\n    path: events.jsonl\n  - type: sqlite\n    path: events.db\n"
                .write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            _ = try await Self.replay(folder: folder, killAfter: killAfter)
            let before = SinkFixtures.lines(folder + "/events.jsonl").count
            #expect(before >= killAfter && before < full.count, "killed at \(killAfter): too late to test anything")
            #expect(try await Self.replay(folder: folder) == 0)

            let stored = try SinkFixtures.rows(folder + "/events.db", "SELECT id FROM events")
            let missing = Set(full).subtracting(stored).count
            #expect(stored.count == full.count && missing == 0, "killed at \(killAfter): \(missing) missing")
            let written = SinkFixtures.lines(folder + "/events.jsonl")
            #expect(written.allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") }, "a broken line was left")
            let ids = written.map(ReplayKillTests.id)
            let missingLines = Set(full).subtracting(ids).count
            #expect(
                missingLines == 0 && Set(ids).count == full.count, "killed at \(killAfter): \(missingLines) missing")
            #expect(ids.count - Set(ids).count <= 1, "killed at \(killAfter): \(ids.count - Set(ids).count) duplicates")
        }
    }
}

/// `calwatch check`: every problem at once, and an exit status that says which kind.
@Suite struct CheckCommandTests {
    let cli = CommandLineTests()

    @Test func theShippedConfigurationChecksClean() async throws {
        let run = try await cli.calwatch(["check", "--config", ConfigurationTests.repository + "/config.yml"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("configuration \(ConfigurationTests.repository)/config.yml: OK"))
        #expect(run.output.contains("samples/calendars: "))
        // What classification finds shows too (the sample week is in 2027, beyond the horizon from today, so the
        // counts themselves depend on the day the test runs).
        #expect(run.output.contains(" flight") && run.output.contains(" meeting"), "\(run.output)")
    }

    @Test func aBrokenConfigurationListsEveryProblemAndExits64() async throws {
        let folder = SinkFixtures.folder()
        try
            "timezone: Nowhere/Else\nreminders:\n  offsets: [15]\nsinks:\n  - type: hook\n    run: [/nonexistent/hook]\n"
            .write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let run = try await cli.calwatch(["check", "--config", folder + "/config.yml", fixture("minimal.ics")])
        #expect(run.status == 64)
        let problems = run.errors.split(separator: "\n").filter { $0.contains(": error: ") }
        #expect(problems.count == 2, "\(run.errors)")
        #expect(problems.first?.hasPrefix(folder + "/config.yml:1: error: timezone:") == true)
    }

    @Test func aMissingHookProgramIsAProblem() async throws {
        let folder = SinkFixtures.folder()
        try "sinks:\n  - type: hook\n    run: [/nonexistent/hook, \"{summary}\"]\n"
            .write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let run = try await cli.calwatch(["check", "--config", folder + "/config.yml", fixture("minimal.ics")])
        #expect(run.status == 64)
        #expect(run.errors.contains("/nonexistent/hook is not found"))
    }

    /// A bug report quotes `--version`: it must say which release, and which airports, airlines and zone names
    /// it uses (the same tables the classifier uses, with their data versions), not a constant.
    @Test func versionNamesTheReleaseAndTheDataItCarries() async throws {
        let run = try await cli.calwatch(["--version"])
        #expect(run.status == 0, "\(run.errors)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.wholeMatch(of: /calwatch \d+\.\d+\.\d+/) != nil, "\(run.output)")
        let rows = Dictionary(
            lines.dropFirst().map { line in
                let parts = line.trimmingCharacters(in: .whitespaces).split(separator: "  ", maxSplits: 1)
                return (String(parts[0]), parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
            }, uniquingKeysWith: { first, _ in first })
        #expect(rows["airports"]?.hasSuffix(", \(AirportDatabase.shared.count) airports") == true, "\(run.output)")
        #expect(rows["airports"]?.hasPrefix("airportsdata-20260905, MIT") == true)
        #expect(rows["airlines"]?.hasSuffix(", \(AirlineTable.shared.count) designators") == true)
        #expect(rows["time-zone names"]?.hasSuffix(", \(WindowsZones.count) Windows names") == true)
        #expect(rows["time-zone rules"]?.hasPrefix("tz \(TimeZone.timeZoneDataVersion)") == true)
        #expect(rows["libical"]?.hasPrefix("3.") == true)
        #expect(rows["SQLite"]?.hasPrefix("3.") == true)
    }

    @Test func aMissingConfigurationFileSaysSoAndExits64() async throws {
        let run = try await cli.calwatch(["check", "--config", "/nonexistent/config.yml"])
        #expect(run.status == 64)
        #expect(run.errors.contains("/nonexistent/config.yml: error: does not exist; check the path given to --config"))
        // /dev/null is an empty configuration: every default.
        let empty = try await cli.calwatch(["check", "--config", "/dev/null", fixture("minimal.ics")])
        #expect(empty.status == 0, "\(empty.errors)")
    }

    @Test func unreadableCalendarDataExits65() async throws {
        let empty = SinkFixtures.folder() + "/config.yml"
        _ = FileManager.default.createFile(atPath: empty, contents: nil)
        let run = try await cli.calwatch(["check", fixture("not-a-calendar.ics"), "--config", empty])
        #expect(run.status == 65, "\(run.errors)")
        #expect(run.errors.contains("not-a-calendar.ics"))
    }
}

/// `calwatch explain`: the kind of each item and the rules behind it, for people.
@Suite struct ExplainCommandTests {
    let cli = CommandLineTests()

    @Test func explainsTheSampleFlightRuleByRule() async throws {
        let run = try await cli.calwatch([
            "explain", ConfigurationTests.repository + "/samples/calendars/travel", "--config", "/dev/null", "--tz",
            "UTC",
        ])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("\"BA987 BER to LHR\""))
        // Sure of it: the fitted weights put it far above the line.
        let confidence = run.output.firstMatch(of: /kind: flight, confidence ([0-9.]+), tier 1/).flatMap {
            Double($0.1)
        }
        #expect(try #require(confidence) >= 0.95)
        #expect(run.output.contains("+ flight number of British Airways: SUMMARY \"BA987\""))
        #expect(run.output.contains("+ route between two airports: SUMMARY \"BER → LHR\""))
        #expect(run.output.contains("leave by 2027-03-03T02:25:00Z"))
        // The all-day trip beside it is a plain event, and says why.
        #expect(run.output.contains("\"London, March 2027\""))
        #expect(run.output.contains("kind: event, confidence 0.90"))
    }

    @Test func aVetoIsShownAgainstTheRuleItOverrules() async throws {
        let run = try await cli.calwatch(
            ["explain", fixture("corpus/not-flights.ics"), "--uid", "n04@x", "--config", "/dev/null"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("+ flight number of Lufthansa: SUMMARY \"LH 3412\""))
        #expect(run.output.contains("− veto: train: SUMMARY \"Rail\""))
        #expect(run.output.contains("kind: event"))
    }

    /// The user settles what the judgement got wrong: an item's own X-CALWATCH-KIND, or a `classify:` entry of
    /// config.yml; `explain` says which settled it, and `check --unsure` lists the close decisions left to settle.
    @Test func anItemOrAnEntrySettlesItsKindAndCloseDecisionsAreListed() async throws {
        let folder = SinkFixtures.folder()
        func item(_ uid: String, _ summary: String, _ extra: String = "", hours: Int = 2) -> String {
            "BEGIN:VEVENT\r\nUID:\(uid)\r\nDTSTAMP:20270101T000000Z\r\nDTSTART:20270310T0800\(hours > 9 ? "" : "0")0Z\r\n"
                + "DTEND:20270310T\(String(format: "%02d", 8 + hours))0000Z\r\nSUMMARY:\(summary)\r\n\(extra)END:VEVENT\r\n"
        }
        let calendar =
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n"
            + item("quiz", "LH 400 FRA-JFK quiz night", "X-CALWATCH-KIND:event\r\n", hours: 8)
            + item("hop", "Hop to the island", "X-CALWATCH-KIND: Flight\r\n")
            + item("retreat", "SFO-LAX leadership retreat")
            + item("maybe", "Flight")
            + item("typo", "Lunch", "X-CALWATCH-KIND:plane\r\n")
            + "END:VCALENDAR\r\n"
        try calendar.write(toFile: folder + "/items.ics", atomically: true, encoding: .utf8)
        // (The items are in March 2027: within a horizon of 500 days.)
        try "classify:\n  - summary: (?i)retreat\n    kind: flight\nhorizon: 500d\n"
            .write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let run = try await cli.calwatch(["explain", folder + "/items.ics", "--config", folder + "/config.yml"])
        #expect(run.status == 0, "\(run.errors)")
        let sections = run.output.components(separatedBy: "\n\"").map { "\"" + $0 }
        let quiz = try #require(sections.first { $0.contains("quiz night") })
        #expect(quiz.contains("kind: event, confidence 1.00"))
        #expect(quiz.contains("· settled as event by the item: X-CALWATCH-KIND \"event\""))
        let hop = try #require(sections.first { $0.contains("Hop to the island") })
        #expect(hop.contains("kind: flight"))
        let retreat = try #require(sections.first { $0.contains("leadership retreat") })
        #expect(retreat.contains("kind: flight"))
        #expect(retreat.contains("settled as flight by the classify: entry on line 2"))
        #expect(retreat.contains("flight: no number, SFO → LAX"))
        let maybe = try #require(sections.first { $0.contains("\"Flight\"") })
        #expect(maybe.contains("a close decision: weights"))
        let check = try await cli.calwatch([
            "check", "--unsure", "--config", folder + "/config.yml", folder + "/items.ics",
        ])
        #expect(check.status == 0, "\(check.errors)")
        // A value that is none of the three is a warning naming the item's line, and the judgement decides.
        #expect(
            check.errors.contains("items.ics:34: warning: X-CALWATCH-KIND 'plane' is not flight, meeting or event"),
            "\(check.errors)")
        let unsure = check.output.split(separator: "\n").filter { $0.contains("unsure:") }
        #expect(unsure.count == 1, "\(check.output)")
        #expect(unsure.first?.contains("\"Flight\"") == true)
        #expect(unsure.first?.contains("tipped by") == true)
        // An entry that would settle every item is refused, with its line.
        try "classify:\n  - kind: event\n".write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let refused = try await cli.calwatch(["check", "--config", folder + "/config.yml", folder + "/items.ics"])
        #expect(refused.status == 64)
        #expect(
            refused.errors.contains("config.yml:2: error: classify[0]: would settle every item"), "\(refused.errors)")
    }

    @Test func anUnknownUIDIsAnErrorThatNamesIt() async throws {
        let run = try await cli.calwatch(["explain", fixture("minimal.ics"), "--uid", "nope", "--config", "/dev/null"])
        #expect(run.status == 65)
        #expect(run.errors.contains("no item with UID nope"))
    }
}

/// Calendar text in the reports for people: a summary's newline cannot forge a line of `explain` or `why`, and a
/// calendar's name cannot send escape sequences through `scan --format table`.
@Suite struct ReportTextTests {
    let cli = CommandLineTests()

    @Test func reportsKeepCalendarTextOnItsLine() async throws {
        let folder = SinkFixtures.folder()
        try FileManager.default.createDirectory(atPath: folder + "/work", withIntermediateDirectories: true)
        try "Work\u{1B}]52;c;cm0gLXJmIH4=\u{07}\u{1B}[2J".write(
            toFile: folder + "/work/displayname", atomically: true, encoding: .utf8)
        try [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT", "UID:forged",
            "DTSTAMP:20270101T000000Z", "DTSTART:20270301T090000Z", "DTEND:20270301T100000Z",
            "SUMMARY:Lunch\\n  kind: flight\\, confidence 1.00\\n  leave by now",
            "END:VEVENT", "END:VCALENDAR", "",
        ].joined(separator: "\r\n").write(toFile: folder + "/work/forged.ics", atomically: true, encoding: .utf8)

        let explain = try await cli.calwatch(["explain", folder, "--tz", "UTC"])
        #expect(explain.status == 0, "\(explain)")
        let lines = explain.output.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("  kind:") }.count == 1, "\(explain.output)")
        #expect(lines.first?.contains("Lunch␊  kind: flight, confidence 1.00␊  leave by now") == true, "\(lines)")

        try "calendars: [\(folder)]\n".write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let why = try await cli.calwatch(
            ["why", "forged", "--config", folder + "/config.yml", "--tz", "UTC", "--at", "2027-03-01T08:00"])
        #expect(why.status == 0, "\(why)")
        #expect(why.output.contains("Lunch␊  kind: flight"), "\(why.output)")
        #expect(!why.output.split(separator: "\n").contains { $0.hasPrefix("  leave by now") }, "\(why.output)")

        let table = try await cli.calwatch(
            ["scan", folder, "--from", "2027-03-01", "--to", "2027-03-02", "--tz", "UTC", "--format", "table"])
        #expect(table.status == 0, "\(table)")
        #expect(!table.output.contains("\u{1B}") && !table.output.contains("\u{07}"), "\(table.output)")
        #expect(table.output.contains("Work␛]52;c;cm0gLXJmIH4=␇␛[2J"), "\(table.output)")
    }
}
