import Foundation
import Logging
import Synchronization
import Testing

@testable import CalWatchCore
@testable import CalWatchRemote

/// The routing engine: OSRM's and Valhalla's documented answers and errors, from `scripts/routing-server.py` (the
/// engines themselves are not in Debian), and the poller that asks for the ways planning lacks.
@Suite struct RoutingTests {
    static let home = GeoPoint(latitude: 52.52, longitude: 13.40)!
    static let dentist = GeoPoint(latitude: 52.54, longitude: 13.41)!
    static let key = RouteCache.Key(
        origin: home, destination: dentist, mode: .driving, at: Instant(secondsSinceEpoch: 1_804_000_000))

    static func routing(_ engine: TravelSettings.Routing.Engine, _ server: FeedServer) -> TravelSettings.Routing {
        TravelSettings.Routing(engine: engine, url: server.url("/"))
    }

    @Test(arguments: [TravelSettings.Routing.Engine.osrm, .valhalla])
    func anEngineAnswersInItsOwnShape(_ engine: TravelSettings.Routing.Engine) async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            // 0.03 degrees apart: 180 s by car, 270 s by bike in the stand-in.
            let car = await RoutingClient.seconds(Self.key, routing: Self.routing(engine, server))
            #expect(car == .success(180))
            var cycling = Self.key
            cycling.mode = .cycling
            let bike = await RoutingClient.seconds(cycling, routing: Self.routing(engine, server))
            #expect(bike == .success(270))
            #expect(
                server.log.first?.hasPrefix(
                    engine == .osrm ? "GET /route/v1/car/13.4,52.52;13.41,52.54" : "POST /route") == true)
        }
    }

    @Test(arguments: [TravelSettings.Routing.Engine.osrm, .valhalla])
    func noRouteABusyEngineAndAnAbsurdAnswerGiveNoTime(_ engine: TravelSettings.Routing.Engine) async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            for (mode, words) in [
                ("noroute", engine == .osrm ? "NoRoute" : "No path"), ("busy", "HTTP 429"), ("absurd", "absurd"),
            ] {
                try mode.write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
                let result = await RoutingClient.seconds(Self.key, routing: Self.routing(engine, server))
                guard case .failure(let failure) = result else {
                    Issue.record("\(mode): \(result)")
                    continue
                }
                #expect(failure.reason.contains(words), "\(mode): \(failure.reason)")
            }
        }
    }

    @Test func anAnswerInTheCacheGivesTheTimeToLeaveWithTheBuffer() throws {
        let (occurrence, _) = try LeaveTests.facts(LeaveTests.office, places: [])
        var home = PlaceSettings(name: "Home")
        home.at = Self.home
        home.hours = .init(from: 0, to: 24 * 60 - 1)
        var office = PlaceSettings(name: "Office")
        office.match = ["HQ *"]
        var travel = TravelSettings()
        travel.routing = .init(engine: .osrm, url: "http://127.0.0.1:5000")
        travel.buffer = .percent(10)
        let routes = RouteCache()
        let times = TravelTimes(places: [home, office], travel: travel, routes: routes)
        // No answer yet: the straight line (3 km) at 30 km/h and 20%, said to be an estimate; the way is wanted.
        let estimate = try #require(times.leave(for: occurrence))
        #expect(estimate.estimated && estimate.confidence == .straightLine && estimate.source == .routing)
        #expect((420...440).contains(estimate.travelSeconds), "\(estimate.travelSeconds)")
        #expect(estimate.explanation.contains("estimated from the straight-line distance"), "\(estimate.explanation)")
        let wanted = routes.takeWanted()
        #expect(wanted.count == 1 && wanted.first?.origin == Self.home)
        routes.store(600, for: try #require(wanted.first))
        let leave = try #require(times.leave(for: occurrence))
        #expect(leave.source == .routing && leave.mode == .driving && leave.travelSeconds == 660)
        #expect(!leave.estimated && leave.confidence == .answered)
        #expect(leave.by == occurrence.start.adding(seconds: -660) && leave.origin?.name == "Home")
    }

    @Test func thePollerAsksWhatPlanningLacksWithinItsBudget() async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            var routing = Self.routing(.osrm, server)
            routing.requestsPerHour = 1
            let routes = RouteCache()
            let changes = Mutex(0)
            let poller = RoutePoller(
                routing: routing, cache: routes, logger: Logger(label: "test"),
                changed: { changes.withLock { $0 += 1 } })
            var other = Self.key
            other.destination = GeoPoint(latitude: 52.60, longitude: 13.40)!
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await poller.run() }
                #expect(routes.seconds(for: Self.key) == nil)
                #expect(routes.seconds(for: other) == nil)
                try await eventually("the first way answered") { routes.seconds(for: Self.key) == 180 }
                #expect(changes.withLock { $0 } >= 1)
                // The hour's one request is spent: the other way waits, asked no more than once.
                try await Task.sleep(for: .milliseconds(300))
                #expect(server.log.count == 1, "\(server.log)")
                group.cancelAll()
            }
        }
    }

    /// The poller keeps every answer in the way's history beside the journal; a history that cannot be written is
    /// said once, not at every answer, and the answers are still planned.
    @Test func thePollerKeepsTheHistoryAndSaysOnceWhenItCannot() async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            for (journal, writable) in [(folder + "/journal.db", true), (folder + "/missing/journal.db", false)] {
                let routes = RouteCache()
                let log = LogRecorder()
                let poller = RoutePoller(
                    routing: Self.routing(.osrm, server), cache: routes, logger: log.logger,
                    history: RouteHistoryFile(journal: journal), changed: {})
                var other = Self.key
                other.destination = GeoPoint(latitude: 52.60, longitude: 13.40)!
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await poller.run() }
                    _ = routes.seconds(for: Self.key)
                    try await eventually("the first way answered") { routes.seconds(for: Self.key) == 180 }
                    _ = routes.seconds(for: other)
                    try await eventually("the second way answered") { routes.seconds(for: other) != nil }
                    try await Task.sleep(for: .milliseconds(200))
                    group.cancelAll()
                }
                let said = log.messages.filter { $0.contains("cannot keep the routing engine's answers") }
                #expect(said.count == (writable ? 0 : 1), "\(log.messages)")
                #expect(RouteHistoryFile(journal: journal).load().usual(for: Self.key) != nil || !writable)
            }
        }
    }

    /// A way answered hours ahead is asked again when its hour nears; a new answer beyond `replanAfter` moves the
    /// time to leave and the log says so (one within it is kept: `WhereTheWayStartsTests`).
    @Test func thePollerAsksAWayAgainAsItsHourNearsAndSaysWhenTheTimeMoves() async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            let routing = Self.routing(.osrm, server)
            let routes = RouteCache()
            let recorder = LogRecorder()
            let changes = Mutex(0)
            let now = Mutex(Self.key.departure.adding(seconds: -5 * 3600))
            let poller = RoutePoller(
                routing: routing, replanAfter: 120, cache: routes, logger: recorder.logger,
                now: { now.withLock { $0 } }, changed: { changes.withLock { $0 += 1 } })
            var other = Self.key
            other.destination = GeoPoint(latitude: 52.60, longitude: 13.40)!
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await poller.run() }
                #expect(routes.seconds(for: Self.key) == nil)
                try await eventually("the way answered") { routes.seconds(for: Self.key) == 180 }
                // Rush hour: every way takes twice as long. Five hours ahead nothing is asked again.
                try "traffic".write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
                now.withLock { $0 = Self.key.departure.adding(seconds: -50 * 60) }
                // The next word to the poller (here, planning asking another way) asks the near one again too.
                _ = routes.seconds(for: other)
                try await eventually("asked again, and moved") { routes.seconds(for: Self.key) == 360 }
                try await eventually("said") { recorder.messages.contains { $0.contains("now takes 6m, not 3m") } }
                #expect(changes.withLock { $0 } >= 2)
                #expect(server.log.count == 3, "\(server.log)")
                group.cancelAll()
            }
        }
    }

    /// A way the engine failed on is asked again 30 s later, without waiting for a change to the calendars.
    @Test func aWayTheEngineFailedOnIsAskedAgainLater() async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            let routes = RouteCache()
            let recorder = LogRecorder()
            let now = Mutex(Self.key.departure.adding(seconds: -5 * 3600))
            let poller = RoutePoller(
                routing: Self.routing(.osrm, server), cache: routes, logger: recorder.logger,
                now: { now.withLock { $0 } }, changed: {})
            var other = Self.key
            other.destination = GeoPoint(latitude: 52.60, longitude: 13.40)!
            try "busy".write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await poller.run() }
                #expect(routes.seconds(for: Self.key) == nil)
                try await eventually("the failure said") { recorder.messages.contains { $0.contains("HTTP 429") } }
                try "".write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
                // Half a minute on, the next word to the poller asks the failed way again.
                now.withLock { $0 = $0.adding(seconds: 31) }
                _ = routes.seconds(for: other)
                try await eventually("asked again and answered") { routes.seconds(for: Self.key) == 180 }
                group.cancelAll()
            }
        }
    }

    @Test func checkSaysWhetherTheEngineAnswers() async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let cli = CommandLineTests()
            for (url, answers) in [(server.url("/"), true), ("http://anna:Rout1ng-pa55@127.0.0.1:9/", false)] {
                try "calendars: []\ntravel:\n  routing: { engine: osrm, url: \"\(url)\" }\n".write(
                    toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
                let run = try await cli.calwatch(["check", "--config", folder + "/config.yml"])
                #expect((run.status == 0) == answers, "\(run.errors)")
                #expect(run.errors.contains("travel.routing") != answers, "\(run.errors)")
                // A password written in the engine's address is never shown.
                #expect(!(run.output + run.errors).contains("Rout1ng-pa55"), "\(run.errors)")
            }
        }
    }

    /// A first configuration as a new user writes it: one place and no hours. `check` counts the week's times to
    /// leave, a replay routes the way from that place, and a configuration that gives none is warned about.
    @Test func aFirstConfigurationOfOnePlaceGivesTimesToLeaveAndCheckSaysWhenNoneCome() async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            // The day after tomorrow, in the week `check` looks at.
            let midnight = (Int(Date().timeIntervalSince1970) / 86_400 + 2) * 86_400
            try """
            BEGIN:VCALENDAR\r
            VERSION:2.0\r
            PRODID:-//routing//EN\r
            BEGIN:VEVENT\r
            UID:dentist\r
            DTSTAMP:20270101T000000Z\r
            DTSTART:\(NextCommandTests.stamp(midnight + 8 * 3600))\r
            DTEND:\(NextCommandTests.stamp(midnight + 9 * 3600))\r
            SUMMARY:Dentist\r
            GEO:52.62;13.40\r
            END:VEVENT\r
            BEGIN:VEVENT\r
            UID:call\r
            DTSTAMP:20270101T000000Z\r
            DTSTART:\(NextCommandTests.stamp(midnight + 13 * 3600))\r
            DTEND:\(NextCommandTests.stamp(midnight + 14 * 3600))\r
            SUMMARY:Call\r
            END:VEVENT\r
            END:VCALENDAR\r

            """.write(toFile: folder + "/cal.ics", atomically: true, encoding: .utf8)
            func configure(_ places: String) throws {
                try """
                calendars: [cal.ics]
                timezone: UTC
                places:
                  \(places)
                travel:
                  routing: { engine: osrm, url: "\(server.url("/"))" }
                sinks:
                  - { type: jsonl, path: "-" }
                """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            }
            let cli = CommandLineTests()
            try configure("- { name: Home, at: { lat: 52.52, lon: 13.40 } }")
            let check = try await cli.calwatch(["check", "--config", folder + "/config.yml"])
            #expect(check.status == 0, "\(check.errors)")
            #expect(check.output.contains("travel: 1 of 2 timed occurrences in the next 7 days get a time to leave"))
            #expect(check.output.contains("1 is at no known point"), "\(check.output)")
            #expect(!check.errors.contains("warning"), "\(check.errors)")
            func date(_ seconds: Int) -> String {
                let digits = Array(NextCommandTests.stamp(seconds))
                return String(digits[0..<4]) + "-" + String(digits[4..<6]) + "-" + String(digits[6..<8])
            }
            let replay = try await cli.calwatch([
                "replay", "--config", folder + "/config.yml", "--from", date(midnight), "--to",
                date(midnight + 86_400),
            ])
            #expect(replay.status == 0, "\(replay.errors)")
            let leave = replay.output.split(separator: "\n").first { $0.contains(#""type":"calwatch.reminderDue""#) }
            #expect(leave?.contains(#""source":"routing""#) == true, "\(replay.output)")
            #expect(leave?.contains(#""origin":{"name":"Home""#) == true, "\(leave ?? "")")

            // An office with hours, and the morning's way: nothing says where it starts.
            try configure("- { name: Office, at: { lat: 52.50, lon: 13.37 }, hours: \"09:00-17:00\" }")
            let warned = try await cli.calwatch(["check", "--config", folder + "/config.yml"])
            #expect(warned.status == 0, "\(warned.errors)")
            #expect(
                warned.errors.contains("warning: places: no occurrence in the next 7 days gets a time to leave"),
                "\(warned.errors)")
            #expect(warned.errors.contains("1 has nowhere for the way to start"), "\(warned.errors)")
        }
    }

    /// The first `yaml` block after `heading` in a document of the repository.
    static func yamlBlock(in document: String, after heading: String) throws -> String {
        let text = try String(contentsOfFile: ConfigurationTests.repository + "/" + document, encoding: .utf8)
        let rest = try #require(text.range(of: heading)).upperBound
        let start = try #require(text.range(of: "```yaml\n", range: rest..<text.endIndex)).upperBound
        let end = try #require(text.range(of: "```", range: start..<text.endIndex)).lowerBound
        return String(text[start..<end])
    }

    /// The `places:` a new user copies from the documents, and the variants people write first (one place, no
    /// hours; "always" as 00:00-24:00; Home and Office without hours): each passes `check` and gives the week's
    /// placed visit a time to leave, with no warning.
    @Test func thePlacesOfTheDocsAndTheirNaturalVariantsGiveTimesToLeave() async throws {
        let documented = try Self.yamlBlock(in: "docs/configuration.md", after: "## Places and when to leave")
        let readme = try Self.yamlBlock(in: "README.md", after: "give your places and count reminders back")
        let variants = [
            documented, readme,
            "places:\n  - name: Home\n    at: { lat: 52.52, lon: 13.40 }\n",
            "places:\n  - { name: Home, at: { lat: 52.52, lon: 13.40 }, hours: \"00:00-24:00\" }\n",
            "places:\n  - { name: Office, at: { lat: 52.50, lon: 13.37 } }\n  - { name: home, at: { lat: 52.52, lon: 13.40 } }\n",
        ]
        try await FeedServer.with(script: "routing-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            // Tomorrow at 07:30 UTC: leaving in the small hours, within the documents' "18:00-08:00".
            let today: Int = Int(Date().timeIntervalSince1970) / 86_400
            let morning: Int = (today + 1) * 86_400 + 27_000
            try """
            BEGIN:VCALENDAR\r
            VERSION:2.0\r
            PRODID:-//routing//EN\r
            BEGIN:VEVENT\r
            UID:visit\r
            DTSTAMP:20270101T000000Z\r
            DTSTART:\(NextCommandTests.stamp(morning))\r
            DTEND:\(NextCommandTests.stamp(morning + 3600))\r
            SUMMARY:Client visit\r
            GEO:52.62;13.40\r
            END:VEVENT\r
            END:VCALENDAR\r

            """.write(toFile: folder + "/cal.ics", atomically: true, encoding: .utf8)
            for places in variants {
                try """
                calendars: [cal.ics]
                timezone: UTC
                \(places)
                travel:
                  routing: { engine: osrm, url: "\(server.url("/"))" }
                """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
                let check = try await CommandLineTests().calwatch(["check", "--config", folder + "/config.yml"])
                #expect(check.status == 0, "\(places)\n\(check.errors)")
                #expect(
                    check.output.contains("travel: 1 of 1 timed occurrence in the next 7 days get a time to leave"),
                    "\(places)\n\(check.output)")
                #expect(!check.errors.contains("warning"), "\(places)\n\(check.errors)")
            }
        }
    }

    /// The way's history: answers kept by hour of the week beside the journal; with the engine down a week later,
    /// the usual time plus the margin, flagged as estimated in the events, in `why` and on the cards' line.
    @Test func anEngineDownAllDayGivesTheWaysUsualTimeFlaggedEverywhere() async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try """
            BEGIN:VCALENDAR\r
            VERSION:2.0\r
            PRODID:-//routing//EN\r
            BEGIN:VEVENT\r
            UID:weekly-visit\r
            DTSTAMP:20270101T000000Z\r
            DTSTART:20270301T090000Z\r
            DTEND:20270301T100000Z\r
            RRULE:FREQ=WEEKLY\r
            SUMMARY:Client visit\r
            GEO:52.62;13.40\r
            END:VEVENT\r
            END:VCALENDAR\r

            """.write(toFile: folder + "/cal.ics", atomically: true, encoding: .utf8)
            try """
            calendars: [cal.ics]
            timezone: UTC
            places:
              - { name: Home, at: { lat: 52.52, lon: 13.40 } }
            travel:
              routing: { engine: osrm, url: "\(server.url("/"))" }
            reminders: { offsets: [15m], anchor: { event: leaveBy } }
            liveActivity: { lead: 5m, updateEvery: 1h }
            sinks:
              - { type: jsonl, path: "-" }
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let cli = CommandLineTests()
            func replay(_ from: String, _ to: String) async throws -> (String, String) {
                let run = try await cli.calwatch([
                    "replay", "--config", folder + "/config.yml", "--state", folder + "/journal.db", "--from", from,
                    "--to", to,
                ])
                #expect(run.status == 0, "\(run.errors)")
                return (run.output, run.errors)
            }
            // A Monday with the engine up: 600 s, and the answer kept for Mondays at 08:00.
            let (answered, _) = try await replay("2027-03-01", "2027-03-02")
            #expect(answered.contains(#""travelSeconds":600,"source":"routing""#) && answered.contains("answered"))
            let history = try String(contentsOfFile: folder + "/journal.db.routes.json", encoding: .utf8)
            #expect(history.contains("600"), "\(history)")
            #expect(
                (try FileManager.default.attributesOfItem(atPath: folder + "/journal.db.routes.json")[.posixPermissions]
                    as? Int) == 0o600)
            // The next Monday the engine is down all day: the way's usual time with 20%, flagged.
            try "busy".write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
            let (estimated, said) = try await replay("2027-03-08", "2027-03-09")
            let reminder = try #require(
                estimated.split(separator: "\n").first { $0.contains(#""type":"calwatch.reminderDue""#) })
            #expect(reminder.contains(#""travelSeconds":720"#), "\(reminder)")
            #expect(reminder.contains(#""confidence":"usual","estimated":true"#), "\(reminder)")
            #expect(reminder.contains(#""time":"2027-03-08T08:33:00Z""#), "\(reminder)")
            #expect(said.contains("estimated time to leave"), "\(said)")
            let why = try await cli.calwatch([
                "why", "weekly-visit", "--config", folder + "/config.yml", "--state", folder + "/journal.db", "--at",
                "2027-03-08T08:40:00Z",
            ])
            #expect(why.output.contains("estimated: the way's usual time"), "\(why.output)")
        }
    }

    /// The daemon as a user runs it: an item with a point and no travel time, the engine's answer planned as soon as
    /// it comes, once, with the buffer.
    @Test func theDaemonPlansTheTimeToLeaveTheEngineGives() async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try FileManager.default.createDirectory(atPath: folder + "/cal", withIntermediateDirectories: true)
            let start = Int(Date().timeIntervalSince1970 / 60 + 40) * 60
            try """
            BEGIN:VCALENDAR\r
            VERSION:2.0\r
            PRODID:-//routing//EN\r
            BEGIN:VEVENT\r
            UID:client-visit\r
            DTSTAMP:20270101T000000Z\r
            DTSTART:\(NextCommandTests.stamp(start))\r
            DTEND:\(NextCommandTests.stamp(start + 3600))\r
            SUMMARY:Client visit\r
            GEO:52.62;13.40\r
            END:VEVENT\r
            END:VCALENDAR\r

            """.write(toFile: folder + "/cal/visit.ics", atomically: true, encoding: .utf8)
            try """
            calendars: [cal]
            timezone: UTC
            state: journal.db
            places:
              - { name: Home, at: { lat: 52.52, lon: 13.40 }, hours: "00:00-23:59" }
            travel:
              buffer: 5m
              routing: { engine: osrm, url: "\(server.url("/"))" }
            reminders: { anchor: { event: leaveBy } }
            liveActivity: { lead: 1h, updateEvery: 5s }
            sinks:
              - { type: jsonl, path: events.jsonl }
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let process = try WatchCommandTests.watch(in: folder)
            defer { process.signalIfRunning(SIGKILL) }
            // 0.1 degrees: 600 s in the stand-in, 900 s with the buffer; the live activity starts an hour before.
            // Until the engine answers, the time to leave is an estimate, said as such.
            try await eventually("an event with the routed time to leave") {
                let lines = (try? String(contentsOfFile: folder + "/events.jsonl", encoding: .utf8)) ?? ""
                return lines.contains(#""source":"routing","mode":"driving""#)
                    && lines.contains(#""confidence":"answered""#)
            }
            process.terminate()
            try await offCooperativePool { process.waitUntilExit() }
            let lines = try String(contentsOfFile: folder + "/events.jsonl", encoding: .utf8)
            #expect(lines.contains(#""travelSeconds":900"#))
            #expect(lines.contains(#""by":""# + Instant(secondsSinceEpoch: Int64(start - 900)).description + "\""))
            #expect(server.log == ["GET /route/v1/car/13.4,52.52;13.4,52.62?overview=false&steps=false 200"])
        }
    }
}
