import CalWatchCore
import Foundation
import Logging
import Testing

@testable import CalWatchRemote
@testable import CalWatchRuntime

/// A local HTTP server for feeds (`scripts/feed-server.py`, Debian's python3), on loopback, for one test; or, with
/// `script: "hostile-server.py"`, one that means harm.
struct FeedServer: Sendable {
    let folder: String
    let port: Int
    let process: Process

    static func with<T>(
        script: String = "feed-server.py", arguments: [String] = [], _ body: (FeedServer) async throws -> T
    ) async throws -> T {
        let folder = SinkFixtures.folder()
        try FeedTests.calendar(["one"]).write(toFile: folder + "/feed.ics", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", ConfigurationTests.repository + "/scripts/" + script, folder] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let port = try await offCooperativePool { () -> Int in
            var line = Data()
            while !line.contains(10) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                line.append(chunk)
            }
            return Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        let server = FeedServer(folder: folder, port: port, process: process)
        defer {
            // SIGKILL: a child of the test process may have SIGTERM ignored, as the runner's signal handling left it.
            process.signalIfRunning(SIGKILL)
            try? FileManager.default.removeItem(atPath: folder)
        }
        return try await body(server)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The lines of the server's request log.
    var log: [String] {
        ((try? String(contentsOfFile: folder + "/requests.log", encoding: .utf8)) ?? "").split(separator: "\n")
            .map(String.init)
    }

    /// The requests the server answered: path, status, body bytes.
    var requests: [(path: String, status: Int, bytes: Int)] {
        ((try? String(contentsOfFile: folder + "/requests.log", encoding: .utf8)) ?? "").split(separator: "\n").map {
            let fields = $0.split(separator: " ")
            return (String(fields[1]), Int(fields[2]) ?? 0, Int(fields[3]) ?? 0)
        }
    }
}

/// ICS feeds fetched as a subscribing calendar app would: conditional GET, gzip, redirects, and every way a server
/// fails leaving the last good copy in use.
@Suite(.timeLimit(.minutes(2))) struct FeedTests {
    static func calendar(_ summaries: [String]) -> String {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN"]
        for (index, summary) in summaries.enumerated() {
            lines += [
                "BEGIN:VEVENT", "UID:feed-\(index)", "DTSTAMP:20270101T000000Z", "DTSTART:20270301T09\(index)000Z",
                "DTEND:20270301T10\(index)000Z", "SUMMARY:\(summary)", "END:VEVENT",
            ]
        }
        return (lines + ["END:VCALENDAR", ""]).joined(separator: "\r\n")
    }

    @Test func anUnchangedFeedCostsOneConditionalRequestAndNoCopy() async throws {
        try await FeedServer.with { server in
            let feed = try #require(ICSFeed(address: server.url("/feed.ics")))
            let cache = FeedCache(root: SinkFixtures.folder(), feed: feed)
            let fetcher = FeedFetcher()
            guard case .changed = await fetcher.fetch(feed, into: cache) else {
                Issue.record("the first fetch stored nothing")
                return
            }
            let kept = try String(contentsOfFile: cache.calendarPath, encoding: .utf8)
            #expect(kept == Self.calendar(["one"]))
            let attributes = try FileManager.default.attributesOfItem(atPath: cache.calendarPath)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            func modified() throws -> Date? {
                try FileManager.default.attributesOfItem(atPath: cache.calendarPath)[.modificationDate] as? Date
            }
            let written = try modified()

            // Again: one request, answered 304 with no body; the copy is not touched.
            #expect(await fetcher.fetch(feed, into: cache) == .unchanged)
            #expect(server.requests.map(\.status) == [200, 304])
            #expect(server.requests.last?.bytes == 0)
            #expect(try modified() == written)
            // It came gzipped: fewer bytes on the wire than the calendar has.
            #expect((server.requests.first?.bytes ?? .max) < kept.utf8.count)

            // Changed on the server: stored.
            try Self.calendar(["one", "two"]).write(
                toFile: server.folder + "/feed.ics", atomically: true, encoding: .utf8)
            guard case .changed = await fetcher.fetch(feed, into: cache) else {
                Issue.record("the change was not stored")
                return
            }
            #expect(try String(contentsOfFile: cache.calendarPath, encoding: .utf8).contains("SUMMARY:two"))
        }
    }

    @Test func failuresLeaveTheLastGoodCopyAndSayWhatToDo() async throws {
        try await FeedServer.with { server in
            let good = try #require(ICSFeed(address: server.url("/feed.ics")))
            let root = SinkFixtures.folder()
            var fetcher = FeedFetcher()
            // Generous, for a busy machine: only /slow/60 takes longer.
            fetcher.timeout = .seconds(10)
            let cases: [(path: String, says: String, retryAfter: Duration?)] = [
                ("/truncated", "the answer was cut off", nil),
                ("/cut", "cut off before END:VCALENDAR", nil),
                ("/signin", "an HTML page (a sign-in page?)", nil),
                ("/unavailable", "HTTP 503", .seconds(120)),
                ("/gone", "no calendar at this address any more", nil),
                ("/slow/60", "no answer in time", nil),
                ("/redirect/9", "more than 5 redirects", nil),
            ]
            guard case .changed = await fetcher.fetch(good, into: FeedCache(root: root, feed: good)) else {
                Issue.record("the good feed was not stored")
                return
            }
            for (path, says, retryAfter) in cases {
                // Each case's cache holds a good copy first.
                let feed = try #require(ICSFeed(address: server.url(path)))
                let cache = FeedCache(root: root, feed: feed)
                try FileManager.default.createDirectory(atPath: cache.folder, withIntermediateDirectories: true)
                try Self.calendar(["kept"]).write(toFile: cache.calendarPath, atomically: true, encoding: .utf8)
                let outcome = await fetcher.fetch(feed, into: cache)
                guard case .failed(let reason, let after) = outcome else {
                    Issue.record("\(path): \(outcome)")
                    continue
                }
                #expect(reason.contains(says) && reason.hasPrefix(server.url(path)), "\(path): \(reason)")
                #expect(after == retryAfter, "\(path)")
                #expect(try String(contentsOfFile: cache.calendarPath, encoding: .utf8).contains("SUMMARY:kept"))
            }
            // A chain of five redirects is followed (six answers: a minute for them on a busy machine).
            fetcher.timeout = .seconds(60)
            let redirected = try #require(ICSFeed(address: server.url("/redirect/5")))
            let outcome = await fetcher.fetch(redirected, into: FeedCache(root: root, feed: redirected))
            guard case .changed = outcome else {
                Issue.record("five redirects were not followed: \(outcome)")
                return
            }
        }
    }

    @Test func addressesAndRetryAfter() {
        #expect(
            ICSFeed(address: "webcal://calendar.example.org/secret/basic.ics")?.url.absoluteString
                == "https://calendar.example.org/secret/basic.ics")
        #expect(ICSFeed(address: "ftp://example.org/x.ics") == nil)
        #expect(ICSFeed(address: "https://me:pw@example.org/cal.ics")?.shownURL == "https://example.org/cal.ics")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(FeedFetcher.retryAfter("90", now: now) == .seconds(90))
        #expect(FeedFetcher.retryAfter("Fri, 15 Jan 2027 08:02:00 GMT", now: now) == .seconds(120))
        #expect(FeedFetcher.retryAfter("soon", now: now) == nil)
    }
}

@Suite struct FeedScheduleTests {
    @Test func pollsEveryIntervalWithJitterAndBacksOffOnFailure() {
        var schedule = FeedSchedule(every: .seconds(600))
        #expect(schedule.next(after: .unchanged, jitter: 0) == .seconds(600))
        #expect(schedule.next(after: .changed(bytes: 10), jitter: 1) == .seconds(660))
        #expect(schedule.next(after: .unchanged, jitter: -1) == .seconds(540))
        // Failures double the wait, up to six hours; a success goes back to the interval.
        let failed = FeedFetcher.Outcome.failed("down", retryAfter: nil)
        let waits = (0..<8).map { _ in schedule.next(after: failed, jitter: 0) }
        #expect(waits.prefix(5) == [.seconds(1200), .seconds(2400), .seconds(4800), .seconds(9600), .seconds(19_200)])
        #expect(waits.suffix(3).allSatisfy { $0 == .seconds(21_600) })
        #expect(schedule.next(after: .unchanged, jitter: 0) == .seconds(600))
        // Retry-After is honoured when it asks for longer.
        #expect(schedule.next(after: .failed("busy", retryAfter: .seconds(7200)), jitter: 0) == .seconds(7200))
        #expect(schedule.next(after: .failed("busy", retryAfter: .seconds(10)), jitter: 0) == .seconds(2400))
    }
}

@Suite(.timeLimit(.minutes(2))) struct FeedSyncTests {
    @Test func aFeedIsReadAsACollectionNamedAfterItAndItsCopyServesOffline() async throws {
        let root = SinkFixtures.folder()
        let settings = try await FeedServer.with { server in
            let settings = [
                SourceSettings(ICSFeedSettings(address: server.url("/feed.ics")), name: "Work (Google)"),
                SourceSettings(ICSFeedSettings(address: server.url("/gone"))),
            ]
            let result = await FeedSync.fetch(settings, root: root)
            #expect(result.folders.count == 1)
            #expect(result.problems.count == 1 && result.problems[0].contains("no calendar at this address"))
            let scan = CalendarScan(
                paths: result.folders,
                options: ExpansionOptions(
                    window: InstantWindow(start: utc("2027-03-01T00:00:00Z"), end: utc("2027-03-02T00:00:00Z")),
                    defaultZone: .utc)
            ).run()
            #expect(scan.occurrences.map(\.calendar) == ["Work (Google)"])
            #expect(scan.occurrences.map(\.summary) == ["one"])
            return settings
        }
        // The server is gone: the copy is read, and the failure said.
        let offline = await FeedSync.fetch(Array(settings.prefix(1)), root: root)
        #expect(offline.folders.count == 1)
        #expect(offline.problems.first?.contains("its copy from before is read") == true, "\(offline.problems)")
    }
}

/// `calwatch next` in a status bar asks a feed's server no more often than its `every:`.
@Suite(.timeLimit(.minutes(2))) struct FeedFreshnessTests {
    @Test func aCopyAskedWithinItsPeriodIsReadWithoutAskingAgain() async throws {
        let root = SinkFixtures.folder()
        try await FeedServer.with { server in
            let feed = [SourceSettings(ICSFeedSettings(address: server.url("/feed.ics")), name: "Team", every: 600)]
            func asked() -> Int { server.requests.filter { $0.path == "/feed.ics" }.count }
            let first = await FeedSync.fetch(feed, root: root, freshAt: Date())
            #expect(asked() == 1 && first.folders.count == 1)
            // Within its ten minutes: the copy, and no request.
            let again = await FeedSync.fetch(feed, root: root, freshAt: Date().addingTimeInterval(300))
            #expect(asked() == 1 && again.folders == first.folders && again.problems.isEmpty)
            // Past them: asked again. And a command that wants the latest (scan, replay, check) always asks.
            _ = await FeedSync.fetch(feed, root: root, freshAt: Date().addingTimeInterval(601))
            #expect(asked() == 2)
            _ = await FeedSync.fetch(feed, root: root)
            #expect(asked() == 3)
            // A feed never fetched has no copy to read: it is asked whatever the time.
            let other = [SourceSettings(ICSFeedSettings(address: server.url("/feed.ics?other")), every: 600)]
            _ = await FeedSync.fetch(other, root: root, freshAt: Date())
            #expect(server.requests.count == 4, "\(server.requests.map(\.path))")
        }
    }
}

/// Feeds in `calendars:` as the commands read them.
@Suite(.timeLimit(.minutes(2))) struct FeedCommandTests {
    let cli = CommandLineTests()

    @Test func replayAndCheckReadAFeedFromTheConfiguration() async throws {
        let cache = SinkFixtures.folder()
        try await FeedServer.with { server in
            let folder = SinkFixtures.folder()
            try """
            calendars:
              - url: \(server.url("/feed.ics"))
                name: Team
              - url: \(server.url("/gone"))
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let run = try await cli.calwatch(
                [
                    "replay", "--config", folder + "/config.yml", "--from", "2027-03-01", "--to", "2027-03-02", "--tz",
                    "UTC",
                ], environment: ["XDG_CACHE_HOME": cache])
            #expect(run.status == 0, "\(run.errors)")
            let reminders = run.output.split(separator: "\n").filter { $0.contains("calwatch.reminderDue") }
            #expect(
                reminders.count == 3 && reminders.allSatisfy { $0.contains(#""calendar":"Team""#) }, "\(run.output)")
            #expect(run.errors.contains("warning: \(server.url("/gone")): HTTP 410"), "\(run.errors)")
            // The copy is private.
            let attributes = try FileManager.default.attributesOfItem(
                atPath: cache + "/calwatch/feeds/" + ICSFeed(address: server.url("/feed.ics"))!.cacheName)
            #expect((attributes[.posixPermissions] as? Int) == 0o700)

            let check = try await cli.calwatch(
                ["check", "--config", folder + "/config.yml"], environment: ["XDG_CACHE_HOME": cache])
            // The feed that is gone is an error to `check` (replay reads the rest and warns).
            #expect(check.status == 65, "\(check.errors)")
            #expect(check.errors.contains("error: \(server.url("/gone")): HTTP 410"), "\(check.errors)")
            #expect(check.output.contains("  Team (\(server.url("/feed.ics"))): 1 source read"), "\(check.output)")
            #expect(check.output.contains("  \(server.url("/gone")): not read"), "\(check.output)")
        }
    }
}

@Suite(.timeLimit(.minutes(2))) struct FeedPollerTests {
    @Test func aFeedIsFetchedAtStartThenOnItsScheduleOnTheInjectedClock() async throws {
        try await FeedServer.with { server in
            let root = SinkFixtures.folder()
            let clock = ManualClock()
            let settings = SourceSettings(ICSFeedSettings(address: server.url("/feed.ics")), name: "Team", every: 300)
            let folder = try #require(FeedPoller<ManualClock>.folders([settings], root: root).first)
            let poller = FeedPoller(feeds: [settings], root: root, clock: clock, logger: Logger(label: "test")) { 0 }
            let task = Task { try await poller.run() }
            defer { task.cancel() }
            func kept() -> String { (try? String(contentsOfFile: folder + "/calendar.ics", encoding: .utf8)) ?? "" }
            // The calendar, then its name beside it.
            try await eventually("the first fetch, named") {
                kept().contains("SUMMARY:one")
                    && (try? String(contentsOfFile: folder + "/displayname", encoding: .utf8)) == "Team"
            }

            // Changed on the server: nothing happens until the interval has passed on the clock.
            try FeedTests.calendar(["one", "two"]).write(
                toFile: server.folder + "/feed.ics", atomically: true, encoding: .utf8)
            try await clock.waitForSleeper(.seconds(300))
            #expect(server.requests.count == 1)
            clock.advance(by: .seconds(300))
            try await eventually("the second fetch") { kept().contains("SUMMARY:two") }
            #expect(server.requests.map(\.status) == [200, 200])
            // Unchanged the next time: one conditional request answered 304.
            try await clock.waitForSleeper(.seconds(300))
            clock.advance(by: .seconds(300))
            try await eventually("the third fetch") { server.requests.count == 3 }
            #expect(server.requests.last?.status == 304)
        }
    }

    /// A poller stopped while a fetch is in flight ends at once (within a second, by libcurl's progress callback),
    /// not when the server answers, and stores nothing.
    @Test func aPollerStoppedMidFetchEndsAtOnceAndStoresNothing() async throws {
        try await FeedServer.with { server in
            let root = SinkFixtures.folder()
            let settings = SourceSettings(ICSFeedSettings(address: server.url("/slow/60")), every: 300)
            let folder = try #require(FeedPoller<ManualClock>.folders([settings], root: root).first)
            let poller = FeedPoller(feeds: [settings], root: root, clock: ManualClock(), logger: Logger(label: "test"))
            let task = Task { try await poller.run() }
            try await eventually("the request is made") { !server.requests.isEmpty || Self.asked(server) }
            let start = ContinuousClock.now
            task.cancel()
            try await task.value
            // The server answers after 60 s; a busy machine (the whole suite on two cores took 12 s) gets 30 s to
            // notice the cancellation.
            #expect(ContinuousClock.now - start < .seconds(30))
            #expect(!FileManager.default.fileExists(atPath: folder + "/calendar.ics"))
        }
    }

    /// Whether the server has begun a request (`/slow` logs only when it answers).
    static func asked(_ server: FeedServer) -> Bool {
        FileManager.default.fileExists(atPath: server.folder + "/asked")
    }
}

/// A running daemon follows the calendars on servers its configuration names across reloads, and says which
/// settings wait for a restart.
@Suite(.timeLimit(.minutes(3))) struct FeedReloadTests {
    @Test func aFeedAddedOnReloadIsFetchedAndOneRemovedIsNoLongerPolledAndAStartOnlySettingIsSaid() async throws {
        let cache = SinkFixtures.folder()
        try await FeedServer.with { server in
            let folder = SinkFixtures.folder()
            try FileManager.default.createDirectory(atPath: folder + "/cal", withIntermediateDirectories: true)
            // A meeting two minutes ahead: its 30- and 15-minute reminders are due (late) once it is read.
            let start = Date().addingTimeInterval(120)
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
            formatter.timeZone = TimeZone(identifier: "UTC")
            try [
                "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT", "UID:added",
                "DTSTAMP:20270101T000000Z", "DTSTART:\(formatter.string(from: start))", "DURATION:PT30M",
                "SUMMARY:Planning", "END:VEVENT", "END:VCALENDAR", "",
            ].joined(separator: "\r\n").write(toFile: server.folder + "/team.ics", atomically: true, encoding: .utf8)
            let base = """
                timezone: UTC
                state: state/journal.db
                sinks: [{ type: jsonl, path: events.jsonl }]
                calendars:
                  - cal

                """
            try base.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let process = try WatchCommandTests.watch(in: folder, environment: ["XDG_CACHE_HOME": cache])
            defer { if process.isRunning { process.terminate() } }
            func log() -> String { (try? String(contentsOfFile: folder + "/log.txt", encoding: .utf8)) ?? "" }
            func fetches() -> Int { server.requests.filter { $0.path == "/f/team.ics" }.count }
            try await eventually("the daemon to watch") { log().contains("watching") }
            #expect(fetches() == 0)

            // Added: fetched at once, read from the cache, planned and delivered.
            try (base + "  - { url: \"\(server.url("/f/team.ics"))\", name: Team, every: 2s }\n").write(
                toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            kill(process.processIdentifier, SIGHUP)
            func events() -> [String] { SinkFixtures.lines(folder + "/events.jsonl") }
            try await eventually("the added feed's reminder") {
                events().contains { $0.contains("calwatch.reminderDue") }
            }
            // Its first events too are the calendar's by its name: the name is in place before the calendar is.
            #expect(events().allSatisfy { $0.contains(#""calendar":"Team""#) }, "\(events())")
            try await eventually("a second fetch, on its schedule") { fetches() >= 2 }

            // Removed: no longer polled. A setting only a start takes is said to wait for one.
            try (base + "metrics: { textfile: calwatch.prom }\n").write(
                toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            kill(process.processIdentifier, SIGHUP)
            try await eventually("the second reload") {
                log().components(separatedBy: "configuration read again").count == 3
            }
            try await Task.sleep(for: .seconds(1))
            let after = fetches()
            // Three of its periods, and more.
            try await Task.sleep(for: .seconds(7))
            #expect(fetches() == after, "\(server.requests.map(\.path))")
            #expect(process.isRunning, "\(log())")
            #expect(log().contains("metrics: changed; read at start only"), "\(log())")
            #expect(!FileManager.default.fileExists(atPath: folder + "/calwatch.prom"))
        }
    }
}

/// A daemon given many calendars on servers fetches a few at a time.
@Suite(.timeLimit(.minutes(2))) struct PolledCalendarsTests {
    /// Fetches that wait until the test lets one through, counting those in flight.
    final class Gate: Sendable {
        private struct State {
            var inFlight = 0
            var most = 0
            var done = 0
            var waiting: [CheckedContinuation<Void, Never>] = []
            /// The threads fetches came to the gate on, by name.
            var threads: Set<String> = []
        }
        private let state = Locked(State())
        var inFlight: Int { state.withLock { $0.inFlight } }
        var most: Int { state.withLock { $0.most } }
        var done: Int { state.withLock { $0.done } }
        var threads: Set<String> { state.withLock { $0.threads } }

        func pass() async {
            let thread = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
            state.withLock { _ = $0.threads.insert(thread.trimmingCharacters(in: .whitespacesAndNewlines)) }
            await withCheckedContinuation { continuation in
                state.withLock {
                    $0.inFlight += 1
                    $0.most = max($0.most, $0.inFlight)
                    $0.waiting.append(continuation)
                }
            }
        }

        /// Lets the longest waiting fetch end; `false` when none waits.
        func releaseOne() -> Bool {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.waiting.isEmpty else { return nil }
                state.inFlight -= 1
                state.done += 1
                return state.waiting.removeFirst()
            }
            next?.resume()
            return next != nil
        }
    }

    /// A kind of calendar that is never in config.yml: its fetch passes the gate.
    struct GatedSource: SourceDriver {
        static let type = "gated"
        static let title = "a gated calendar"
        static let keys: [String] = []
        static let schemes = ["gated"]
        static let example = "gated://1"
        var address: String
        let gate: Gate
        var identity: String { address }

        init(address: String, gate: Gate) {
            self.address = address
            self.gate = gate
        }

        init?(address: String, entry: ConfigurationSection) { nil }

        static func == (left: Self, right: Self) -> Bool { left.address == right.address }
        func hash(into hasher: inout Hasher) { hasher.combine(address) }

        func open(_ settings: SourceSettings, root: String, fetcher: FeedFetcher) -> (any RemoteCalendar)? {
            Calendar(gate: gate, folder: root + "/" + address.dropFirst(8))
        }

        struct Calendar: RemoteCalendar {
            let gate: Gate
            let folder: String
            var shownURL: String { folder }
            var every: Duration { .seconds(600) }
            var hasCopy: Bool { false }
            func fetch() async -> FeedFetcher.Outcome {
                await gate.pass()
                return .unchanged
            }
        }
    }

    @Test func atMostSoManyAreFetchedAtOnceAndEachInTurn() async throws {
        let gate = Gate()
        let polled = PolledCalendars(logger: Logger(label: "test"), root: SinkFixtures.folder(), fetchingAtOnce: 2)
        let running = Task { try await polled.run() }
        defer { running.cancel() }
        await polled.follow((1...5).map { SourceSettings(GatedSource(address: "gated://\($0)", gate: gate)) })
        try await eventually("two fetches in flight") { gate.inFlight == 2 }
        // Each one let through lets the next in, and no more.
        while gate.done < 5 {
            try await eventually("a fetch in flight") { gate.inFlight > 0 }
            #expect(gate.releaseOne())
        }
        #expect(gate.most == 2)
        // Their steps (a copy written and synced, a token saved) never hold a thread of the pool reminders wake on.
        #expect(gate.threads == ["calwatch-remote"])
    }
}
