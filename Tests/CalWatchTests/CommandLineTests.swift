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

    func calwatch(_ arguments: [String], input: String? = nil, shellPipe: String? = nil) throws -> Run {
        let process = Process()
        let output = Pipe()
        let errors = Pipe()
        if let shellPipe {
            // Only for the `| head` test: the shell is ours, the arguments are fixed strings.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = [
                "-c", "'\(Self.executable.path)' " + arguments.joined(separator: " ") + " | " + shellPipe,
            ]
        } else {
            process.executableURL = Self.executable
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

    @Test func scanPrintsSortedJSONLinesWithTheDocumentedKeys() throws {
        let run = try calwatch([
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

    @Test func exitCode65OnlyWhenNothingCouldBeRead() throws {
        let bad = try calwatch(["scan", fixture("not-a-calendar.ics"), "--from", "2025-03-01", "--to", "2025-04-01"])
        #expect(bad.status == 65)
        #expect(bad.errors.contains("not-a-calendar.ics:1: error: not iCalendar data"))
        let mixed = try calwatch([
            "scan", fixture("not-a-calendar.ics"), fixture("minimal.ics"), "--from", "2025-03-01", "--to", "2025-04-01",
        ])
        #expect(mixed.status == 0)
        #expect(mixed.output.contains("\"uid\":\"bare-lf\""))
        #expect(mixed.errors.contains("not-a-calendar.ics:1: error"))
    }

    @Test func usageErrorsExit64WithAnExplanation() throws {
        let reversed = try calwatch(["scan", fixture("minimal.ics"), "--from", "2025-03-02", "--to", "2025-03-01"])
        #expect(reversed.status == 64)
        #expect(reversed.errors.contains("--to (2025-03-01T00:00:00Z) must be after --from"))
        let zone = try calwatch(["scan", fixture("minimal.ics"), "--tz", "Mars/Olympus"])
        #expect(zone.status == 64)
        #expect(zone.errors.contains("'Mars/Olympus' is not a known zone"))
        let time = try calwatch(["scan", fixture("minimal.ics"), "--from", "yesterday-ish"])
        #expect(time.status == 64)
        #expect(time.errors.contains("write 2027-03-01"))
    }

    @Test func emptyDirectoryIsExplainedAndExits65() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("calwatch-empty-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try calwatch(["scan", directory.path, "--from", "2025-03-01", "--to", "2025-04-01"])
        #expect(run.status == 65)
        #expect(run.errors.contains("\(directory.path): warning: no calendar files here"))
        let alarmsTable = try calwatch(["scan", directory.path, "--alarms", "--format", "table"])
        #expect(alarmsTable.status == 64)
    }

    @Test func standardInputAndTable() throws {
        let text = try String(contentsOfFile: fixture("minimal.ics"), encoding: .utf8)
        let run = try calwatch(
            ["scan", "-", "--from", "2025-03-01", "--to", "2025-04-01", "--tz", "UTC", "--format", "table"], input: text
        )
        #expect(run.status == 0)
        #expect(run.output.contains("Wed 2025-03-05  10:00  stdin     (no title)"))
        #expect(run.output.hasSuffix("1 occurrence\n"))
    }

    @Test func aConsumerThatStopsReadingEndsTheScanQuietly() throws {
        let run = try calwatch(
            ["scan", fixture("pathological.ics"), "--from", "2025-03-01T00:00Z", "--to", "2025-03-01T12:00Z"],
            shellPipe: "head -n 2")
        #expect(run.output.split(separator: "\n").count == 2)
        #expect(run.errors.isEmpty)
    }

    @Test func alarmsFlagPrintsTriggers() throws {
        let run = try calwatch([
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
    func killedAndStartedAgainLosesNothingAndRepeatsAtMostTheBatchInFlight(killAfter: Int) throws {
        let full = try Self.replay(state: nil).map(Self.id)
        #expect(full.count > 4000)
        let state = JournalTests.temporaryPath()
        let first = try Self.replay(state: state, killAfter: killAfter)
        #expect(first.count >= killAfter && first.count < full.count, "the kill came too late to test anything")
        let second = try Self.replay(state: state)
        let all = (first + second).map(Self.id)
        #expect(Set(all) == Set(full))
        let duplicates = all.count - Set(all).count
        #expect(duplicates <= 512, "\(duplicates) events printed twice")
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func stoppedBySignalAndStartedAgainPrintsEveryEventOnce(signal: Int32) throws {
        // Five years, so that the signal comes while the planner is still at work.
        let window = ["--from", "2027-01-01", "--to", "2032-01-01", "--tz", "Europe/Berlin"]
        let full = try Self.replay(state: nil, window: window).map(Self.id)
        let state = JournalTests.temporaryPath()
        let first = try Self.replay(state: state, window: window, killAfter: 1000, signal: signal)
        #expect(first.count >= 1000 && first.count < full.count, "the signal came too late to test anything")
        let second = try Self.replay(state: state, window: window)
        #expect((first + second).map(Self.id) == full)
    }
}
