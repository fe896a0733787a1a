import CalWatchCore
import CalWatchRemote
import Foundation
import Testing

@testable import CalWatchRuntime

/// Passwords given in addresses (a CalDAV account's, a feed's, a database's) never leave their place: every file
/// calwatch writes (cache, cache state, journal, sinks, metrics), everything it prints and logs at debug level is
/// searched for them.
@Suite(.timeLimit(.minutes(5))) struct SecretTests {
    @Test func noPasswordInAnythingCalwatchWritesOrSays() async throws {
        try await RadicaleServer.with { radicale in
            try await radicale.makeCalendar("/anna/work/", name: "Work")
            try await radicale.put("/anna/work/a.ics", FeedTests.calendar(["Standup"]))
            try await FeedServer.with(script: "hostile-server.py") { hostile in
                let folder = SinkFixtures.folder()
                let feedPassword = "F33d-pa55"
                let databasePassword = "Db-pa55 word"
                try """
                calendars:
                  - caldav: http://anna:\(RadicaleServer.password)@127.0.0.1:\(radicale.port)/
                    every: 1m
                  - url: http://me:\(feedPassword)@127.0.0.1:\(hostile.port)/to-other-host/echo
                    every: 1m
                state: journal.db
                metrics: { textfile: metrics.prom, every: 1s }
                sinks:
                  - type: jsonl
                    path: events.jsonl
                  - type: postgres
                    url: "host=127.0.0.1 port=9 password='\(databasePassword)' dbname=calwatch"
                """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
                let environment = ["XDG_CACHE_HOME": folder + "/cache"]
                let cli = CommandLineTests()
                var said: [String] = []
                for arguments in [
                    ["scan", "--config", folder + "/config.yml", "--from", "2027-03-01", "--to", "2027-03-02"],
                    ["check", "--config", folder + "/config.yml"],
                    ["next", "--config", folder + "/config.yml", "--format", "json"],
                    [
                        "replay", "--config", folder + "/config.yml", "--from", "2027-03-01", "--to", "2027-03-02",
                        "--state", folder + "/replay.db",
                    ],
                ] {
                    let run = try await cli.calwatch(arguments, environment: environment)
                    said += [run.output, run.errors]
                }
                // The replay wrote events.jsonl from its own journal: kept aside (and searched with the rest), or the
                // daemon rightly refuses a sink whose records its journal does not hold, and stops before it polls.
                try FileManager.default.moveItem(atPath: folder + "/events.jsonl", toPath: folder + "/replay.jsonl")
                // The daemon at debug level, until it has polled both servers.
                let process = Process()
                process.executableURL = CommandLineTests.executable
                process.arguments = ["watch", "--config", folder + "/config.yml", "--log-level", "debug"]
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
                _ = FileManager.default.createFile(atPath: folder + "/watch.log", contents: nil)
                process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/watch.log"))
                process.standardOutput = FileHandle.nullDevice
                try process.run()
                defer { process.signalIfRunning(SIGKILL) }
                try await eventually("both servers polled") {
                    let log = (try? String(contentsOfFile: folder + "/watch.log", encoding: .utf8)) ?? ""
                    return log.components(separatedBy: "polled:").count > 2
                }
                #expect(
                    process.isRunning,
                    "the daemon stopped: \((try? String(contentsOfFile: folder + "/watch.log", encoding: .utf8)) ?? "")"
                )
                process.terminate()
                try await offCooperativePool { process.waitUntilExit() }

                // The feed's password went to its origin only, once per fetch.
                #expect(hostile.log.contains("GET /to-other-host/echo auth") && hostile.log.contains("GET /echo -"))
                let secrets = [
                    RadicaleServer.password, feedPassword, databasePassword, "Db-pa55",
                    Data("anna:\(RadicaleServer.password)".utf8).base64EncodedString(),
                    Data("me:\(feedPassword)".utf8).base64EncodedString(),
                ]
                for text in said {
                    for secret in secrets { #expect(!text.contains(secret), "\(secret) in \(text)") }
                }
                let files = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []
                var read = 0
                for file in files where file != "config.yml" {
                    var directory: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: folder + "/" + file, isDirectory: &directory),
                        !directory.boolValue
                    else { continue }
                    let bytes = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + file))
                    read += 1
                    for secret in secrets {
                        #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) in \(file)")
                    }
                }
                // The cache state, the feed's record, the journal, the sinks, the metrics and the log were read.
                #expect(read >= 8, "\(files)")
                #expect(files.contains { $0.hasSuffix(".calwatch-caldav.json") }, "\(files)")
                #expect(files.contains { $0.hasSuffix("feed.json") } && files.contains("metrics.prom"), "\(files)")
            }
        }
    }
}

/// A `passwordCommand` that does not finish is stopped at its timeout with everything it started.
@Suite struct PasswordCommandTests {
    @Test func aTimedOutCommandTakesItsChildrenWithIt() async throws {
        let folder = SinkFixtures.folder()
        let command = ["/bin/sh", "-c", "sleep 300 & echo $! > \(folder)/child; sleep 300"]
        do {
            _ = try await PasswordCommand.run(command, timeout: .seconds(1))
            Issue.record("a command that never printed gave a password")
        } catch {
            #expect(error.description == "passwordCommand /bin/sh did not finish within 1 s")
        }
        let child = try #require(
            Int32(
                try String(contentsOfFile: folder + "/child", encoding: .utf8).trimmingCharacters(
                    in: .whitespacesAndNewlines)))
        // The grandchild (a background `sleep`) is gone too, not left behind for 300 s.
        try await eventually("the child stopped") { kill(child, 0) != 0 }
    }

    /// The timeout limits the command's own running time: one that printed and exited in time is not a timeout
    /// because calwatch heard of its end only after the timeout (on a pool busy with other work, held here).
    @Test func aCommandThatEndedInTimeIsNotATimeoutHoweverLateItsEndIsHeardOf() async throws {
        let folder = SinkFixtures.folder()
        // It ends two seconds after it starts, well within its ten: its own running time, whatever the test's pace.
        let command = ["/bin/sh", "-c", "echo $$ > \(folder)/pid; sleep 2; echo S3cret"]
        let executor = ThreadExecutor()
        defer { executor.finish() }
        let started = ContinuousClock.now
        let run = Task(executorPreference: executor) { try await PasswordCommand.run(command, timeout: .seconds(10)) }
        let pid = try await writtenPID(at: folder + "/pid")
        // From here its end is heard of only once the timeout has passed.
        executor.hold()
        try await eventually("the command exited") { hasExited(pid) }
        try await Task.sleep(until: started + .seconds(11))
        executor.release()
        #expect(try await run.value == "S3cret")
    }
}

/// The tokens of answer buttons and the local server's token are base64url: one text for one token.
@Suite struct Base64URLTests {
    @Test func everyTokenHasOneTextOnly() {
        for count in [0, 1, 2, 3, 16, 31, 32, 33] {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes, "\(count) bytes")
        }
        // 32 bytes are 43 characters; the last holds 4 bits and 2 unused, which `encode` leaves zero. A text with
        // them set would decode to the same bytes: it is refused, as are padding and base64's own `+` and `/`.
        let token = Base64URL.encode([UInt8](repeating: 0, count: 32))
        #expect(token.hasSuffix("A") && Base64URL.decode(token) != nil)
        #expect(Base64URL.decode(token.dropLast() + "B") == nil)
        #expect(Base64URL.decode(token + "=") == nil)
        #expect(Base64URL.decode("+/8") == nil && Base64URL.decode("-_8") == [0xFB, 0xFF])
    }
}

/// Settings are logged whole by reflection (each service at debug level): a password in an address is not.
@Suite struct PrintedSettingsTests {
    @Test func aCalendarOnAServerPrintsWithoutItsPassword() {
        let feed = SourceSettings(ICSFeedSettings(address: "https://ada:hunter2@example.org/team.ics"), name: "Team")
        let account = SourceSettings(CalDAVSettings(address: "https://ada:hunter2@dav.example.org/", username: "ada"))
        for settings in [feed, account] {
            for printed in [
                "\(settings)", "\(settings.kind)", String(reflecting: settings), String(reflecting: settings.kind),
                "\([settings])",
            ] {
                #expect(!printed.contains("hunter2") && printed.contains("example.org"), "\(printed)")
            }
        }
    }
}
