import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRemote
@testable import CalWatchRuntime

/// Radicale's own answers (Fixtures/caldav-client) read as the CalDAV client reads them.
@Suite struct DAVMultistatusTests {
    static func fixture(_ name: String) throws -> DAVMultistatus {
        let path = ConfigurationTests.repository + "/Tests/CalWatchTests/Fixtures/caldav-client/" + name
        return try DAVMultistatus(data: try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func discoveryFindsThePrincipalAndItsCalendarHome() throws {
        #expect(try Self.fixture("principal.xml").responses.first?["current-user-principal"] == "/anna/")
        #expect(try Self.fixture("home.xml").responses.first?["calendar-home-set"] == "/anna/")
    }

    @Test func theHomeListsItsCalendarsWithTheirNamesColoursAndTokens() throws {
        let responses = try Self.fixture("collections.xml").responses
        #expect(responses.map(\.href) == ["/anna/", "/anna/work/"])
        // The principal's properties were answered 404: none is taken.
        #expect(!responses[0].isCalendar && responses[0].properties.isEmpty)
        let work = responses[1]
        #expect(work.isCalendar)
        #expect(work["displayname"] == "Work" && work["calendar-color"] == "#ff0000")
        #expect(work["getctag"]?.hasPrefix("\"41bc62c8") == true)
        #expect(work["sync-token"]?.hasPrefix("http://radicale.org/ns/sync/1513e572") == true)
    }

    @Test func aSyncAnswerGivesTheNewTokenChangedEtagsAndDeletions() throws {
        let sync = try Self.fixture("sync.xml")
        #expect(sync.syncToken?.hasPrefix("http://radicale.org/ns/sync/1513e572") == true)
        #expect(sync.responses.map(\.href) == ["/anna/work/a1.ics"])
        #expect(sync.responses[0]["getetag"]?.hasPrefix("\"ff240f25") == true && sync.responses[0].status == nil)
        let deleted = try Self.fixture("sync-deleted.xml")
        #expect(deleted.responses.map(\.status) == [404])
        #expect(deleted.syncToken?.hasPrefix("http://radicale.org/ns/sync/b2e9d8ae") == true)
    }

    @Test func aMultigetAnswerHoldsEachItemsCalendar() throws {
        let item = try #require(try Self.fixture("multiget.xml").responses.first)
        #expect(item.href == "/anna/work/a1.ics")
        #expect(item["calendar-data"]?.contains("BEGIN:VCALENDAR") == true)
        #expect(item["getetag"] != nil)
    }

    @Test func anErrorBodyOrBrokenXMLIsAnErrorWithItsLine() throws {
        #expect(throws: DAVMultistatus.Unreadable.self) { try Self.fixture("sync-token-invalid-403.xml") }
        do {
            _ = try DAVMultistatus(data: Data("<multistatus xmlns=\"DAV:\">\n<response>\n</wrong>".utf8))
            Issue.record("broken XML was read")
        } catch {
            #expect(error.line == 3)
        }
    }

    /// The record of what was copied is read back as written, whatever a server puts in its hrefs, etags and
    /// tokens: otherwise the next poll fetches everything again, or never fetches a changed item.
    @Test func theCopysRecordIsReadBackAsWritten() throws {
        typealias State = CalDAVClient.State
        let odd = "quote \" backslash \\ tab \t newline \n bell \u{7} é 日本 🛫 /slash"
        var state = State(url: "https://dav.example/cal/", home: "https://dav.example/cal/anna/", single: false)
        state.collections["/cal/anna/work/"] = State.Collection(
            folder: "work", syncToken: "http://radicale.org/ns/sync/\(odd)", ctag: nil,
            items: [
                "/cal/anna/work/a.ics": State.Item(file: "a.ics", etag: "\"e1\""),
                "/cal/anna/work/\(odd).ics": State.Item(file: "b.ics", etag: nil),
            ])
        state.collections["/cal/anna/empty/"] = State.Collection(folder: "empty", syncToken: nil, ctag: "3")
        let read = try JSONDecoder().decode(State.self, from: Data(state.json()))
        #expect(read == state)
        #expect(try JSONDecoder().decode(State.self, from: Data(State(url: "u").json())) == State(url: "u"))
    }
}

/// CalDAV against a real Radicale: discovery, sync tokens, changes, deletions, the fallback without sync, and a
/// refused password.
@Suite(.timeLimit(.minutes(3))) struct CalDAVSyncTests {
    static func settings(_ server: RadicaleServer, _ path: String = "/", password: String = RadicaleServer.password)
        -> CalDAVSettings
    {
        CalDAVSettings(
            address: server.url(path), username: RadicaleServer.user, passwordCommand: ["/bin/echo", password])
    }

    static func client(
        _ server: RadicaleServer, _ path: String = "/", root: String, password: String = RadicaleServer.password,
        sync: Bool = true
    ) throws -> CalDAVClient {
        let account = try #require(CalDAVAccount(settings(server, path, password: password)))
        return CalDAVClient(account: account, root: root, usesSyncCollection: sync)
    }

    static func event(_ uid: String, at hour: Int, summary: String = "Design review") -> String {
        WatchTests.event(
            uid: uid, start: "20270301T\(String(format: "%02d", hour))0000Z",
            end: "20270301T\(String(format: "%02d", hour))3000Z", summary: summary)
    }

    /// A server with anna's two calendars: Work (two events) and Home (one).
    static func filled(_ server: RadicaleServer) async throws {
        try await server.makeCalendar("/anna/work/", name: "Work", color: "#ff0000")
        try await server.makeCalendar("/anna/home/", name: "Home", color: "#00ff00")
        try await server.put("/anna/work/a.ics", event("a", at: 9))
        try await server.put("/anna/work/b.ics", event("b", at: 10))
        try await server.put("/anna/home/c.ics", event("c", at: 11))
    }

    /// Each collection folder's name and items, with each item's summary.
    static func copy(in folder: String) throws -> [String: [String: String]] {
        var found: [String: [String: String]] = [:]
        for collection in try FileManager.default.contentsOfDirectory(atPath: folder) where !collection.hasPrefix(".") {
            let path = folder + "/" + collection
            var entry: [String: String] = [:]
            for file in try FileManager.default.contentsOfDirectory(atPath: path) where !file.hasPrefix(".") {
                let text = try String(contentsOfFile: path + "/" + file, encoding: .utf8)
                entry[file] =
                    file.hasSuffix(".ics")
                    ? text.split(whereSeparator: \.isNewline).first { $0.hasPrefix("SUMMARY:") }.map(String.init) ?? ""
                    : text
            }
            found[collection] = entry
        }
        return found
    }

    @Test func discoveredFromTheRootEveryCalendarIsCopiedAndAnUnchangedPollIsOneRequest() async throws {
        try await RadicaleServer.with { server in
            try await Self.filled(server)
            let root = SinkFixtures.folder()
            let client = try Self.client(server, root: root)
            #expect(await client.sync() != .unchanged)
            let copy = try Self.copy(in: client.folder)
            #expect(
                copy == [
                    "work": [
                        "a.ics": "SUMMARY:Design review", "b.ics": "SUMMARY:Design review", "displayname": "Work",
                        "color": "#ff0000",
                    ],
                    "home": ["c.ics": "SUMMARY:Design review", "displayname": "Home", "color": "#00ff00"],
                ])
            // Private: only the user reads the copy.
            let attributes = try FileManager.default.attributesOfItem(atPath: client.folder + "/work/a.ics")
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            // Nothing changed: one PROPFIND of the home, no item fetched.
            let before = client.requests
            #expect(await client.sync() == .unchanged)
            #expect(client.requests - before == 1)
            // A new client on the same cache (calwatch restarted) knows the tokens too.
            let again = try Self.client(server, root: root)
            #expect(await again.sync() == .unchanged)
            #expect(again.requests == 1)
        }
    }

    @Test(arguments: [true, false])
    func onlyWhatChangedIsFetchedAndADeletedItemIsRemoved(syncCollection: Bool) async throws {
        try await RadicaleServer.with { server in
            try await Self.filled(server)
            let client = try Self.client(server, root: SinkFixtures.folder(), sync: syncCollection)
            _ = await client.sync()
            try await server.put("/anna/work/b.ics", Self.event("b", at: 10, summary: "Moved review"))
            try await server.put("/anna/work/d.ics", Self.event("d", at: 14, summary: "New one"))
            try await server.delete("/anna/work/a.ics")
            let before = client.requests
            guard case .changed(let bytes) = await client.sync() else {
                Issue.record("the changes were not seen")
                return
            }
            #expect(bytes > 0)
            let copy = try Self.copy(in: client.folder)
            #expect(
                copy["work"]?.filter { $0.key.hasSuffix(".ics") } == [
                    "b.ics": "SUMMARY:Moved review", "d.ics": "SUMMARY:New one",
                ])
            #expect(copy["home"]?["c.ics"] == "SUMMARY:Design review")
            // The home's listing, what changed in Work (by token or by etags), one multiget of b and d; Home,
            // unchanged, is not asked.
            #expect(client.requests - before == 3)
        }
    }

    @Test func aTokenTheServerNoLongerKnowsStartsAgainWithoutLosingADeletion() async throws {
        try await RadicaleServer.with { server in
            try await Self.filled(server)
            let client = try Self.client(server, root: SinkFixtures.folder())
            _ = await client.sync()
            var state = client.loadState()
            let work = try #require(state.collections.keys.first { $0.hasSuffix("/anna/work/") })
            state.collections[work]?.syncToken = "http://radicale.org/ns/sync/0000"
            try JSONEncoder().encode(state).write(to: URL(fileURLWithPath: client.folder + "/.calwatch-caldav.json"))
            try await server.delete("/anna/work/a.ics")
            #expect(await client.sync() != .unchanged)
            #expect(try Self.copy(in: client.folder)["work"]?.keys.sorted() == ["b.ics", "color", "displayname"])
            #expect(client.loadState().collections[work]?.syncToken?.hasSuffix("/0000") == false)
        }
    }

    @Test func aCollectionAddressIsFollowedAloneAndAGoneCollectionIsRemoved() async throws {
        try await RadicaleServer.with { server in
            try await Self.filled(server)
            let single = try Self.client(server, "/anna/home/", root: SinkFixtures.folder())
            _ = await single.sync()
            #expect(try Self.copy(in: single.folder).keys.sorted() == ["home"])
            let all = try Self.client(server, root: SinkFixtures.folder())
            _ = await all.sync()
            try await server.delete("/anna/home/")
            #expect(await all.sync() != .unchanged)
            #expect(try Self.copy(in: all.folder).keys.sorted() == ["work"])
        }
    }

    @Test func aRefusedPasswordIsSaidWithoutItAndTheCopyStays() async throws {
        try await RadicaleServer.with { server in
            try await Self.filled(server)
            let root = SinkFixtures.folder()
            _ = await (try Self.client(server, root: root)).sync()
            let wrong = try Self.client(server, root: root, password: "hunter2-wrong")
            guard case .failed(let reason, _) = await wrong.sync() else {
                Issue.record("a wrong password was taken")
                return
            }
            #expect(
                reason.contains("HTTP 401") && reason.contains("user anna") && reason.contains(server.url("/")),
                "\(reason)")
            #expect(!reason.contains("hunter2") && !reason.contains(RadicaleServer.password))
            #expect(try Self.copy(in: wrong.folder)["work"]?.count == 4)
            #expect(wrong.hasCopy)
        }
    }

    /// A CalDAV account pointed at a plain web server (a feed's address, say): the failure says what is wrong.
    @Test func anAddressThatIsNoCalDAVServerIsSaidSo() async throws {
        try await FeedServer.with { server in
            let settings = CalDAVSettings(address: server.url("/feed.ics"))
            let client = CalDAVClient(account: try #require(CalDAVAccount(settings)), root: SinkFixtures.folder())
            guard case .failed(let reason, _) = await client.sync() else {
                Issue.record("a web server was taken for CalDAV")
                return
            }
            #expect(reason.contains("PROPFIND answered HTTP 501; the server does not speak CalDAV there"), "\(reason)")
        }
    }

    @Test func aServerDownIsSaidWithItsAddress() async throws {
        let port = try RadicaleServer.freePort()
        let settings = CalDAVSettings(address: "http://anna:pw@127.0.0.1:\(port)/")
        let client = CalDAVClient(account: try #require(CalDAVAccount(settings)), root: SinkFixtures.folder())
        guard case .failed(let reason, _) = await client.sync() else {
            Issue.record("no failure")
            return
        }
        #expect(reason.hasPrefix("http://127.0.0.1:\(port)/: cannot connect"), "\(reason)")
        #expect(!reason.contains("pw"))
    }
}

/// One calendar read four ways gives the same occurrences: through a CalDAV source, from the folder vdirsyncer (Debian's)
/// syncs, as the ICS feed Radicale exports for a collection, and from Radicale's own storage folder.
@Suite(.timeLimit(.minutes(3))) struct SourceAgreementTests {
    let cli = CommandLineTests()

    @Test func caldavVdirsyncerAndAFeedGiveIdenticalScans() async throws {
        try await RadicaleServer.with { server in
            // The shipped samples' Work and Personal calendars, item by item, as a calendar app uploads them.
            for (collection, name) in [("work", "Work"), ("personal", "Personal")] {
                try await server.makeCalendar("/anna/\(collection)/", name: name)
                let folder = ConfigurationTests.repository + "/samples/calendars/" + collection
                for file in try FileManager.default.contentsOfDirectory(atPath: folder) where file.hasSuffix(".ics") {
                    let href = file.replacingOccurrences(of: "@", with: "%40")
                    try await server.put(
                        "/anna/\(collection)/\(href)", try String(contentsOfFile: folder + "/" + file, encoding: .utf8))
                }
            }
            let folder = SinkFixtures.folder()
            let window = ["--from", "2026-12-01", "--to", "2027-06-01", "--tz", "UTC"]
            func scan(_ arguments: [String]) async throws -> String {
                let run = try await cli.calwatch(
                    ["scan"] + arguments + window, environment: ["XDG_CACHE_HOME": folder + "/cache"])
                #expect(run.status == 0, "\(run.errors)")
                return run.output
            }
            func config(_ name: String, _ text: String) throws -> String {
                try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
                return folder + "/" + name
            }

            let caldav = try await scan([
                "--config",
                try config(
                    "caldav.yml",
                    """
                    calendars:
                      - caldav: \(server.url("/"))
                        username: anna
                        passwordCommand: [/bin/echo, \(RadicaleServer.password)]
                    """),
            ])
            let feeds = try await scan([
                "--config",
                try config(
                    "feeds.yml",
                    """
                    calendars:
                      - url: http://anna:\(RadicaleServer.password)@127.0.0.1:\(server.port)/anna/work/
                      - url: http://anna:\(RadicaleServer.password)@127.0.0.1:\(server.port)/anna/personal/
                    """),
            ])
            let vdirsyncerConfig = try config(
                "vdirsyncer.conf",
                """
                [general]
                status_path = "\(folder)/vdirsyncer-status/"

                [pair calendars]
                a = "server"
                b = "folder"
                collections = ["from a"]
                metadata = ["displayname", "color"]

                [storage server]
                type = "caldav"
                url = "\(server.url("/"))"
                username = "anna"
                password = "\(RadicaleServer.password)"

                [storage folder]
                type = "filesystem"
                path = "\(folder)/vdir/"
                fileext = ".ics"
                """)
            for command in ["discover", "sync", "metasync"] {
                _ = try await runProgram(
                    ["sh", "-c", "yes | vdirsyncer -c \(vdirsyncerConfig) \(command)"], discardOutput: true)
            }
            let vdirsyncer = try await scan([folder + "/vdir"])
            let radicale = try await scan([server.folder + "/collections/collection-root/anna"])

            // check tries the account once and says what it found: the seven items of its two calendars.
            let check = try await cli.calwatch(
                ["check", "--config", folder + "/caldav.yml"], environment: ["XDG_CACHE_HOME": folder + "/cache"])
            #expect(check.status == 0, "\(check.errors)")
            #expect(check.output.contains("  \(server.url("/")): 7 sources read"), "\(check.output)")

            let lines = caldav.split(separator: "\n")
            #expect(lines.count > 40)
            #expect(
                Set(lines.map { $0.contains(#""calendar":"Work""#) || $0.contains(#""calendar":"Personal""#) }) == [
                    true
                ])
            #expect(vdirsyncer == caldav)
            #expect(feeds == caldav)
            #expect(radicale == caldav)
        }
    }
}

/// `calwatch watch` following a Radicale collection in real time, polling every 2 s: what is PUT, moved and deleted
/// on the server reaches the sinks as it would from a folder.
@Suite(.timeLimit(.minutes(3))) struct CalDAVWatchTests {
    @Test func anItemPutMovedAndDeletedOnTheServerIsPlannedAgainWithinAPoll() async throws {
        try await RadicaleServer.with { server in
            try await server.makeCalendar("/anna/work/", name: "Work")
            let folder = SinkFixtures.folder()
            try """
            calendars:
              - caldav: \(server.url("/"))
                username: anna
                passwordCommand: [/bin/echo, \(RadicaleServer.password)]
                every: 2s
            timezone: UTC
            state: state/journal.db
            reminders:
              offsets: [15s]
            liveActivity: { lead: 2m, updateEvery: 1h, maxDuration: 1h }
            sinks:
              - type: jsonl
                path: events.jsonl
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = CommandLineTests.executable
            process.arguments = ["watch", "--config", folder + "/config.yml", "--log-level", "info"]
            process.currentDirectoryURL = URL(fileURLWithPath: folder)
            process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CACHE_HOME": folder + "/cache"]) {
                $1
            }
            _ = FileManager.default.createFile(atPath: folder + "/log.txt", contents: nil)
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/log.txt"))
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            defer { process.signalIfRunning(SIGKILL) }
            func log() -> String { (try? String(contentsOfFile: folder + "/log.txt", encoding: .utf8)) ?? "" }
            try await eventually("watching") { log().contains("watching") }

            /// The events received so far: type, uid, and the end reason when there is one.
            func received() -> [String] {
                SinkFixtures.lines(folder + "/events.jsonl").compactMap { line in
                    guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                        let type = (event["type"] as? String)?.dropFirst(9),
                        let data = event["data"] as? [String: Any],
                        let uid = (data["occurrence"] as? [String: Any])?["uid"] as? String
                    else { return nil }
                    let reason = (data["liveActivity"] as? [String: Any])?["reason"] as? String
                    return "\(type) \(uid)" + (reason.map { " \($0)" } ?? "")
                }
            }
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
            formatter.timeZone = TimeZone(identifier: "UTC")
            func item(_ uid: String, startingIn seconds: Double) -> String {
                let start = Date().addingTimeInterval(seconds)
                return [
                    "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT", "UID:\(uid)",
                    "DTSTAMP:20270101T000000Z", "DTSTART:\(formatter.string(from: start))",
                    "DTEND:\(formatter.string(from: start.addingTimeInterval(600)))", "SUMMARY:\(uid)", "END:VEVENT",
                    "END:VCALENDAR", "",
                ].joined(separator: "\r\n")
            }

            // Two meetings 60 s ahead: their live activities begin (the lead is 2 minutes) once a poll has seen
            // them; their 15-second reminders are 45 s away, time enough for the changes below on a busy machine.
            let put = Date()
            try await server.put("/anna/work/standup.ics", item("standup", startingIn: 60))
            try await server.put("/anna/work/review.ics", item("review", startingIn: 60))
            try await eventually("both live activities") {
                Set(received()) == ["liveActivityStart standup", "liveActivityStart review"]
            }
            // When the daemon emitted them (its own clock, so this test's turns on a busy pool do not count): within
            // one poll (2 s) and the debounce; generous, the machine is shared.
            let emitted = SinkFixtures.lines(folder + "/events.jsonl").compactMap {
                eventDate($0, "recordedtime")?.timeIntervalSince(put)
            }
            #expect(emitted.count == 2 && emitted.allSatisfy { $0 > 0 && $0 < 20 }, "emitted after \(emitted) s")

            // The standup moved ten minutes on, the review deleted: both end, for what happened.
            try await server.put("/anna/work/standup.ics", item("standup", startingIn: 600))
            try await server.delete("/anna/work/review.ics")
            try await eventually("both ends") {
                Set(received()).isSuperset(of: [
                    "liveActivityEnd standup rescheduled", "liveActivityEnd review removed",
                ])
            }
            // Past the instant the old reminders were due: neither comes.
            let due = put.addingTimeInterval(45 + 3)
            if due > Date() { try await Task.sleep(for: .seconds(due.timeIntervalSinceNow)) }
            kill(process.processIdentifier, SIGTERM)
            try await offCooperativePool { process.waitUntilExit() }
            #expect(process.terminationStatus == 0, "\(log())")
            #expect(
                received().sorted() == [
                    "liveActivityEnd review removed", "liveActivityEnd standup rescheduled",
                    "liveActivityStart review", "liveActivityStart standup",
                ], "\(log())")
            // The password never in the log.
            #expect(!log().contains(RadicaleServer.password))
        }
    }
}
