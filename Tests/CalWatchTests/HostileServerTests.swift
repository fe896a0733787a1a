import CalWatchCore
import Foundation
import Testing

@testable import CalWatchRemote
@testable import CalWatchRuntime

/// Feeds and CalDAV accounts against a server that means harm (`scripts/hostile-server.py`): it trickles, sends
/// without end, bombs, lies about lengths and redirects credentials elsewhere. calwatch gives up in time, holds little
/// memory, keeps its last good copy, stops at SIGTERM and sends a password only where it was given.
@Suite(.timeLimit(.minutes(5))) struct HostileServerTests {
    /// A fetcher whose deadline is short, so that a test of it is too; for the routes that do not test the
    /// deadline, a minute, so that a busy machine (the server gzipping its bomb, the suite around it) is no failure.
    static func fetcher(for path: String) -> FeedFetcher {
        var fetcher = FeedFetcher()
        fetcher.timeout = ["/trickle", "/slow-headers"].contains(path) ? .seconds(4) : .seconds(60)
        return fetcher
    }

    /// Fetches `path` into a cache that holds a good copy first; the outcome, and whether the copy is still there.
    static func fetch(_ path: String, on server: FeedServer) async throws -> (FeedFetcher.Outcome, Bool, Duration) {
        let feed = try #require(ICSFeed(address: server.url(path)))
        let cache = FeedCache(root: SinkFixtures.folder(), feed: feed)
        let good = Array(FeedTests.calendar(["kept"]).utf8)
        try cache.store(
            good, named: "kept",
            record: FeedCache.Record(url: feed.shownURL, sha256: SHA256.hex(good), bytes: good.count, fetched: Date()))
        let start = ContinuousClock.now
        let outcome = await fetcher(for: path).fetch(feed, into: cache)
        let elapsed = ContinuousClock.now - start
        let kept = FileManager.default.contents(atPath: cache.calendarPath).map { [UInt8]($0) } == good
        return (outcome, kept, elapsed)
    }

    static func reason(_ outcome: FeedFetcher.Outcome) -> String {
        if case .failed(let reason, _) = outcome { return reason }
        return "not a failure: \(outcome)"
    }

    @Test(arguments: [
        ("/trickle", "no answer in time (4 s)"),
        ("/slow-headers", "no answer in time (4 s)"),
        ("/endless", "an answer larger than 32 MiB; not read"),
        ("/huge", "an answer larger than 32 MiB (by its Content-Length); not read"),
        ("/bomb", "expands more than 100 times when decompressed"),
        ("/lying", "the answer was cut off"),
        ("/headers-forever", "more than 256 KiB of headers"),
        ("/not-modified", "HTTP 304 (not modified) though calwatch keeps no copy yet"),
        ("/html-calendar", "an HTML page inside BEGIN:VCALENDAR (line 2)"),
    ])
    func eachHostileAnswerFailsInTimeAndLeavesTheCopyKept(path: String, expected: String) async throws {
        try await FeedServer.with(script: "hostile-server.py") { server in
            let (outcome, kept, elapsed) = try await Self.fetch(path, on: server)
            #expect(Self.reason(outcome).contains(expected), "\(outcome)")
            #expect(Self.reason(outcome).hasPrefix(server.url(path)))
            #expect(kept, "the good copy was replaced")
            // The deadline is 4 s for the trickle and the slow headers, which would go on for days without it; a
            // minute more allows for a busy pool in this test process to resume the test late.
            #expect(elapsed < .seconds(120), "\(elapsed)")
        }
    }

    /// A 304 to a conditional request is "unchanged": the copy counts.
    @Test func aNotModifiedAnswerToAConditionalRequestKeepsTheCopy() async throws {
        try await FeedServer.with { server in
            let feed = try #require(ICSFeed(address: server.url("/feed.ics")))
            let cache = FeedCache(root: SinkFixtures.folder(), feed: feed)
            guard case .changed = await FeedFetcher().fetch(feed, into: cache) else {
                Issue.record("the first fetch stored nothing")
                return
            }
            #expect(await FeedFetcher().fetch(feed, into: cache) == .unchanged)
        }
    }

    /// A feed's `X-WR-CALNAME` of 200 KB names its calendar in 200 scalars, on disk and in every event.
    @Test func aHugeCalendarNameIsCut() async throws {
        try await FeedServer.with { server in
            let calendar = FeedTests.calendar(["one"]).replacingOccurrences(
                of: "VERSION:2.0", with: "VERSION:2.0\r\nX-WR-CALNAME:" + String(repeating: "ü", count: 200_000))
            try calendar.write(toFile: server.folder + "/big.ics", atomically: true, encoding: .utf8)
            let root = SinkFixtures.folder()
            let remote = try #require(
                SourceSettings(ICSFeedSettings(address: server.url("/f/big.ics"))).open(root: root))
            guard case .changed = await remote.fetch() else {
                Issue.record("not fetched")
                return
            }
            let name = try String(contentsOfFile: remote.folder + "/displayname", encoding: .utf8)
            #expect(name.unicodeScalars.count == 200 && name.hasSuffix("ü…"), "\(name.count)")
            let scan = CalendarScan(
                paths: [remote.folder],
                options: ExpansionOptions(
                    window: InstantWindow(start: utc("2027-03-01T00:00:00Z"), end: utc("2027-03-02T00:00:00Z")),
                    defaultZone: .utc)
            ).run()
            #expect(scan.occurrences.first?.calendar == name)
        }
    }

    /// Peak memory of `calwatch scan URL` (the whole process, the Swift runtime included) against each body that
    /// would be held whole by a client that checks only at the end.
    @Test(arguments: ["/endless", "/huge", "/bomb"])
    func aHostileBodyCostsLessThan100MB(path: String) async throws {
        try await FeedServer.with(script: "hostile-server.py") { server in
            let output = try await runProgram([
                "python3", ConfigurationTests.repository + "/scripts/peak-memory.py",
                CommandLineTests.executable.path, "scan", server.url(path), "--from", "2027-03-01", "--to",
                "2027-03-02", "--tz", "UTC",
            ])
            let run = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
            let peak = try #require(run["peakKiB"] as? Int)
            #expect(run["status"] as? Int == 65, "\(run)")
            #expect((run["errors"] as? String)?.contains(server.url(path)) == true, "\(run)")
            #expect(peak < 100 * 1024, "peak \(peak) KiB")
        }
    }

    /// SIGTERM during each transfer that would otherwise go on for minutes: `watch` ends within 2 s (3 s allowed
    /// on a busy machine).
    @Test(arguments: ["/trickle", "/slow-headers", "/endless"])
    func watchStopsAtOnceDuringAHostileTransfer(path: String) async throws {
        try await FeedServer.with(script: "hostile-server.py") { server in
            let folder = SinkFixtures.folder()
            try """
            calendars:
              - url: \(server.url(path))
            timezone: UTC
            state: journal.db
            sinks:
              - type: jsonl
                path: events.jsonl
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = CommandLineTests.executable
            process.arguments = ["watch", "--config", folder + "/config.yml"]
            process.environment = ["XDG_CACHE_HOME": folder + "/cache", "HOME": folder]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer { process.signalIfRunning(SIGKILL) }
            try await eventually("the server is asked") { server.log.contains { $0.contains(path) } }
            // Into the transfer: the headers or the body are on their way.
            try await Task.sleep(for: .seconds(1))
            #expect(process.isRunning)
            // Timed on a thread of its own, so that a busy cooperative pool in this test process does not count.
            let took = try await offCooperativePool { () -> Duration in
                let start = ContinuousClock.now
                process.terminate()
                process.waitUntilExit()
                return ContinuousClock.now - start
            }
            #expect(took < .seconds(3), "\(took)")
            #expect(process.terminationStatus == 0)
        }
    }

    /// A password in the address goes to its origin only: not to another host, another port, or a CalDAV home
    /// elsewhere.
    @Test func credentialsGoToTheirOriginOnly() async throws {
        try await FeedServer.with(script: "hostile-server.py") { server in
            try await FeedServer.with(script: "hostile-server.py") { other in
                let address = "http://me:hunter2@127.0.0.1:\(server.port)"
                for path in ["/to-other-host/echo", "/to-other-port/\(other.port)"] {
                    let feed = try #require(ICSFeed(address: address + path))
                    let cache = FeedCache(root: SinkFixtures.folder(), feed: feed)
                    guard case .changed = await FeedFetcher().fetch(feed, into: cache) else {
                        Issue.record("\(path) was not fetched")
                        continue
                    }
                }
                #expect(server.log.contains("GET /to-other-host/echo auth"), "\(server.log)")
                #expect(server.log.contains("GET /echo -"), "the other host was sent the password: \(server.log)")
                #expect(other.log == ["GET /echo -"], "the other port was sent the password: \(other.log)")

                // A CalDAV account whose discovery is sent elsewhere asks there without the password.
                let settings = CalDAVSettings(
                    address: "http://127.0.0.1:\(server.port)/to-other-port/\(other.port)", username: "me",
                    passwordCommand: ["/bin/echo", "hunter2"])
                let client = CalDAVClient(account: try #require(CalDAVAccount(settings)), root: SinkFixtures.folder())
                _ = await client.sync()
                #expect(server.log.last == "PROPFIND /to-other-port/\(other.port) auth", "\(server.log)")
                #expect(other.log.last == "PROPFIND /echo -", "\(other.log)")
            }
        }
    }

    /// Against a real https server (Python's, with a certificate made for the test): a certificate nobody vouches
    /// for is refused, and with its CA trusted, a redirect to plain http is refused before anything is sent there.
    @Test func tlsIsVerifiedAndADowngradeIsRefused() async throws {
        let folder = SinkFixtures.folder()
        _ = try await runProgram(
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem",
            ], discardOutput: true)
        try await FeedServer.with(script: "hostile-server.py") { plain in
            try await FeedServer.with(
                script: "hostile-server.py", arguments: ["--tls", folder + "/cert.pem", folder + "/key.pem"]
            ) { secure in
                let echo = URL(string: "https://127.0.0.1:\(secure.port)/echo")!
                var unknown = HTTPClient.Request(url: echo)
                unknown.certificateAuthorities = nil
                guard case .failure(let refused) = await HTTPClient.send(unknown) else {
                    Issue.record("a self-signed certificate was accepted")
                    return
                }
                #expect(refused.reason.hasPrefix("TLS failed"), "\(refused)")

                var trusted = HTTPClient.Request(url: echo)
                trusted.certificateAuthorities = folder + "/cert.pem"
                let status = try await HTTPClient.send(trusted).get().status
                #expect(status == 200)
                trusted.url = URL(string: "https://me:pw@127.0.0.1:\(secure.port)/to-plain/\(plain.port)")!
                guard case .failure(let downgrade) = await HTTPClient.send(trusted) else {
                    Issue.record("a redirect from https to http was followed")
                    return
                }
                #expect(downgrade.reason.hasPrefix("refused a redirect from https to http"), "\(downgrade)")
                #expect(plain.log.isEmpty, "\(plain.log)")
            }
        }
    }

    /// Redirects are checked as the first request was: never https to http, never another scheme; 303 turns into a
    /// GET.
    @Test func redirectsToPlainHTTPOrOtherSchemesAreRefused() throws {
        let request = HTTPClient.Request(method: "PROPFIND", url: URL(string: "https://dav.example.org/cal/")!)
        guard case .failure(let downgrade) = HTTPClient.redirect(request, status: 301, to: "http://dav.example.org/")
        else {
            Issue.record("https to http was followed")
            return
        }
        #expect(downgrade.reason.hasPrefix("refused a redirect from https to http (http://dav.example.org/)"))
        guard case .failure(let file) = HTTPClient.redirect(request, status: 302, to: "file:///etc/passwd") else {
            Issue.record("a redirect to a file was followed")
            return
        }
        #expect(file.reason.contains("not an http or https address"))
        let relative = try HTTPClient.redirect(request, status: 307, to: "/other/").get()
        #expect(relative.url.absoluteString == "https://dav.example.org/other/")
        #expect(relative.method == "PROPFIND")
        let seeOther = try HTTPClient.redirect(request, status: 303, to: "https://x:y@elsewhere.example/").get()
        #expect(seeOther.method == "GET")
        #expect(seeOther.url.absoluteString == "https://elsewhere.example/", "credentials in a Location are dropped")
    }
}

/// `check` against servers that cannot be read, and a CalDAV account one of whose calendars fails.
@Suite(.timeLimit(.minutes(5))) struct RemoteCheckTests {
    @Test func oneFailingCollectionIsSaidAndTheOthersAreRead() async throws {
        try await FeedServer.with(script: "hostile-server.py") { server in
            let root = SinkFixtures.folder()
            let settings = CalDAVSettings(address: server.url("/dav/"))
            let client = CalDAVClient(account: try #require(CalDAVAccount(settings)), root: root)
            guard case .failed(let reason, _) = await client.sync() else {
                Issue.record("a calendar answering 403 was not said")
                return
            }
            #expect(reason.contains("/dav/bad/: PROPFIND answered HTTP 403"), "\(reason)")
            #expect(reason.contains("the account's 1 other calendars are read"), "\(reason)")
            let folders = try FileManager.default.contentsOfDirectory(atPath: client.folder)
            #expect(folders.contains("good"), "\(folders)")
            #expect(
                (try? String(contentsOfFile: client.folder + "/good/displayname", encoding: .utf8)) == "good")
        }
    }

    /// A feed whose server is down with nothing kept, and a CalDAV account that refuses its password: `check`
    /// says each, gives each a line, and exits 65.
    @Test func checkFailsForAFeedOrAccountItCannotRead() async throws {
        try await RadicaleServer.with { radicale in
            let folder = SinkFixtures.folder()
            try """
            calendars:
              - url: http://127.0.0.1:9/team.ics
                name: Team
              - caldav: \(radicale.url("/"))
                username: anna
                passwordCommand: [printf, wrong]
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let run = try await CommandLineTests().calwatch(
                ["check", "--config", folder + "/config.yml"],
                environment: ["XDG_CACHE_HOME": folder + "/cache"])
            #expect(run.status == 65, "\(run)")
            #expect(run.errors.contains("error: http://127.0.0.1:9/team.ics: cannot connect"), "\(run.errors)")
            #expect(run.errors.contains("HTTP 401: the server refused the user anna"), "\(run.errors)")
            #expect(run.output.contains("  Team (http://127.0.0.1:9/team.ics): not read"), "\(run.output)")
            #expect(run.output.contains("  \(radicale.url("/")): not read"), "\(run.output)")
            #expect(!run.errors.contains("wrong") && !run.output.contains("wrong"))
        }
    }
}
