import CalWatchCore
import CalWatchRemote
import CalWatchRuntime
import Foundation
import Synchronization
import Testing

/// `flights.status`: the three services' documented answers read alike; a delay moves the time to leave and each
/// reminder once; a new gate and a cancellation arrive as `flightChanged`; the budget is never exceeded; a service
/// that times out changes nothing. The services are a stand-in (`scripts/flight-status-server.py`).
@Suite(.serialized) struct FlightStatusTests {
    /// A domestic flight (LHR → EDI) leaving at 12:00 UTC: the time to leave is 12:00 − 2 h − 45 min = 09:15.
    static let calendar = """
        BEGIN:VCALENDAR\r
        VERSION:2.0\r
        PRODID:-//flight-status//EN\r
        BEGIN:VEVENT\r
        UID:edinburgh\r
        DTSTAMP:20270101T000000Z\r
        DTSTART:20270301T120000Z\r
        DTEND:20270301T133000Z\r
        SUMMARY:Flight BA 1436 LHR → EDI\r
        END:VEVENT\r
        END:VCALENDAR\r

        """

    static let key = "fs-test-key-5e1f0c9a"

    /// What the stand-in says of BA1436: `expected` and `gate` as given.
    static func say(
        _ server: FeedServer, status: String = "scheduled", expected: String? = nil, gate: String? = nil,
        code: String = "BA1436", origin: String = "LHR", zone: String = "Europe/London",
        scheduled: String = "2027-03-01T12:00:00Z", divertedTo: String? = nil
    ) throws {
        let flight: [String: Any?] = [
            "code": code, "origin": origin, "destination": "EDI", "zone": zone, "scheduled": scheduled,
            "expected": expected, "gate": gate, "terminal": "5", "status": status, "divertedTo": divertedTo,
        ]
        let data = try JSONSerialization.data(withJSONObject: flight.mapValues { $0 ?? NSNull() })
        try data.write(to: URL(fileURLWithPath: server.folder + "/flight.json"))
    }

    static func settings(
        _ provider: FlightStatusSettings.Provider, server: FeedServer, key: String = key
    ) throws -> FlightStatusSettings {
        try key.write(toFile: server.folder + "/key", atomically: true, encoding: .utf8)
        return FlightStatusSettings(
            provider: provider, keyFile: server.folder + "/key", url: server.url("/" + provider.rawValue))
    }

    /// Each service's documented answer gives the same status: 35 minutes late, gate A7, terminal 5, from the field
    /// that said so. The flight leaves New York, so aviationstack's times (the airport's clock marked `+00:00`)
    /// would be five hours out if read as written.
    @Test(arguments: FlightStatusSettings.Provider.allCases)
    func eachServiceAnswersInItsDocumentedShape(_ provider: FlightStatusSettings.Provider) async throws {
        try await FeedServer.with(script: "flight-status-server.py") { server in
            try Self.say(
                server, status: "delayed", expected: "2027-03-01T17:35:00Z", gate: "A7", code: "DL2114",
                origin: "JFK", zone: "America/New_York", scheduled: "2027-03-01T17:00:00Z")
            let flight = FlightStatusCache.Tracked(
                key: .init(code: "DL2114", date: "2027-03-01"), scheduled: utc("2027-03-01T17:00:00Z"), origin: "JFK")
            let settings = try Self.settings(provider, server: server)
            let status = try await FlightStatusClient.status(
                of: flight, settings: settings, at: utc("2027-03-01T15:00:00Z")
            ).get()
            #expect(status.scheduled == utc("2027-03-01T17:00:00Z"), "\(status)")
            #expect(status.expected == utc("2027-03-01T17:35:00Z"), "\(status)")
            #expect(status.gate == "A7" && status.terminal == "5", "\(status)")
            #expect(status.state == .delayed, "\(status)")
            #expect(
                status.expectedField
                    == ["aerodatabox": "revisedTime", "aeroapi": "estimated_out", "aviationstack": "estimated"][
                        provider.rawValue])
            #expect(status.provider == provider.name)

            // A cancellation and a diversion as each says them.
            for (state, divertedTo) in [("cancelled", nil), ("diverted", "BOS")] {
                try Self.say(
                    server, status: state, code: "DL2114", origin: "JFK", zone: "America/New_York",
                    scheduled: "2027-03-01T17:00:00Z", divertedTo: divertedTo)
                let said = try await FlightStatusClient.status(
                    of: flight, settings: settings, at: utc("2027-03-01T15:00:00Z")
                ).get()
                #expect(said.state.rawValue == state, "\(said)")
                // AeroDataBox names no airport a flight is diverted to.
                #expect(said.divertedTo == (provider == .aerodatabox ? nil : divertedTo), "\(said)")
            }

            // A wrong key: the service's refusal and what to check, never the key.
            let wrong = try Self.settings(provider, server: server, key: "wrong-key-0000")
            let refused = await FlightStatusClient.status(of: flight, settings: wrong, at: .init(secondsSinceEpoch: 0))
            guard case .failure(let failure) = refused else { throw Failure("a wrong key was accepted") }
            #expect(failure.reason.contains("check the key in flights.status.keyFile"), "\(failure.reason)")
            #expect(!failure.reason.contains("wrong-key"), "\(failure.reason)")

            // Another number: none, said so.
            let other = FlightStatusCache.Tracked(
                key: .init(code: "DL9", date: "2027-03-01"), scheduled: utc("2027-03-01T17:00:00Z"), origin: "JFK")
            guard
                case .failure = await FlightStatusClient.status(
                    of: other, settings: settings, at: .init(secondsSinceEpoch: 0))
            else { throw Failure("a flight the service does not know was answered") }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The daemon's pipeline on a manual clock with the stand-in: the flight delayed 35 minutes three hours before
    /// it leaves moves the time to leave and the 30/15/5 reminders once each (a later answer two minutes off moves
    /// nothing); a new gate and then a cancellation arrive as `flightChanged`, and the cancellation ends the live
    /// activity.
    @Test func aDelayMovesTheTimeToLeaveAndEachReminderOnceAndChangesArriveAsFlightChanged() async throws {
        try await FeedServer.with(script: "flight-status-server.py") { server in
            let bench = try WatchTests.Bench()
            let settings = try Self.settings(.aerodatabox, server: server)
            bench.configuration.flights.status = settings
            bench.configuration.planner.liveActivityLead = 0
            let statuses = FlightStatusCache()
            bench.statuses = statuses
            try Self.calendar.write(toFile: bench.root + "/work/flight.ics", atomically: true, encoding: .utf8)
            let clock = Mutex(utc("2027-03-01T08:30:00Z"))
            let log = LogRecorder()
            let poller = FlightStatusPoller(
                settings: settings, cache: statuses, journal: bench.journalPath, replanAfter: 300,
                logger: log.logger, now: { clock.withLock { $0 } }, changed: {})
            func poll(at time: String) async throws -> Int {
                clock.withLock { $0 = utc(time) }
                let news = await poller.askDue()
                if !news.isEmpty { _ = try await bench.watch.travelTimesChanged(at: utc(time)) }
                return news.count
            }

            /// The planner woken minute by minute, as the daemon's sleeps would, up to `time`.
            var planned = utc("2027-03-01T08:30:00Z")
            func advance(through time: String) async throws {
                while planned < utc(time) {
                    planned = planned.adding(seconds: 60)
                    _ = try await bench.watch.advance(to: planned)
                }
            }

            try Self.say(server)
            try await bench.start(at: "2027-03-01T08:30:00Z")
            #expect(try await poll(at: "2027-03-01T08:30:00Z") == 1)
            try await advance(through: "2027-03-01T08:55:00Z")
            // 3 h before: 35 minutes late, gate A7.
            try Self.say(server, status: "delayed", expected: "2027-03-01T12:35:00Z", gate: "A7")
            #expect(try await poll(at: "2027-03-01T08:55:00Z") == 0, "asked again within the hour: \(server.log)")
            try await advance(through: "2027-03-01T09:02:00Z")
            #expect(try await poll(at: "2027-03-01T09:02:00Z") == 1)
            try await advance(through: "2027-03-01T09:40:00Z")
            // Two minutes earlier: within travel.replanAfter, the reminders stay where they are.
            try Self.say(server, status: "delayed", expected: "2027-03-01T12:33:00Z", gate: "A7")
            #expect(try await poll(at: "2027-03-01T09:40:00Z") == 1)
            try await advance(through: "2027-03-01T09:52:00Z")
            try Self.say(server, status: "delayed", expected: "2027-03-01T12:33:00Z", gate: "B3")
            #expect(try await poll(at: "2027-03-01T09:52:00Z") == 1)
            try await advance(through: "2027-03-01T10:02:00Z")
            try Self.say(server, status: "cancelled", expected: "2027-03-01T12:33:00Z", gate: "B3")
            #expect(try await poll(at: "2027-03-01T10:02:00Z") == 1)
            try await advance(through: "2027-03-01T12:40:00Z")
            #expect(try await poll(at: "2027-03-01T12:41:00Z") == 0)

            let events = await bench.sink.events.filter { $0.type == .reminderDue || $0.type == .flightChanged }
            let described = events.map { event -> String in
                var text = WatchTests.Bench.describe(event)
                if case .flightChanged(let change) = event.payload { text += " " + change.text }
                return text
            }
            #expect(
                described == [
                    "reminderDue 2027-03-01T08:45:00Z 30m",
                    "reminderDue 2027-03-01T09:00:00Z 15m",
                    "flightChanged 2027-03-01T09:02:00Z departure 2027-03-01T12:00:00Z → 2027-03-01T12:35:00Z, "
                        + "gate none → A7",
                    "reminderDue 2027-03-01T09:20:00Z 30m",
                    "reminderDue 2027-03-01T09:35:00Z 15m",
                    "reminderDue 2027-03-01T09:45:00Z 5m",
                    "flightChanged 2027-03-01T09:52:00Z gate A7 → B3",
                    "flightChanged 2027-03-01T10:02:00Z status delayed → cancelled",
                ], "\(described)")
            // The cards' and pushes' words for the last change, and their detail line.
            let scan = CalendarScan(
                paths: [bench.root + "/work/flight.ics"],
                options: ExpansionOptions(
                    window: InstantWindow(start: utc("2027-03-01T00:00:00Z"), end: utc("2027-03-02T00:00:00Z")),
                    defaultZone: .utc)
            ).run()
            let occurrence = try #require(scan.occurrences.first)
            let facts = Classifier(bench.configuration, statuses: statuses).facts(for: occurrence)
            let cancelled = try #require(events.last)
            let entry = JournalStore.Entry(
                sequence: 1, event: cancelled, occurrence: occurrence, facts: facts,
                recorded: Timestamp(millisecondsSinceEpoch: 0))
            #expect(ReminderText.flightChanged(entry) == "BA1436: cancelled")
            #expect(
                ReminderText.details(entry).starts(with: [
                    "12:00–13:30", "LHR → EDI", "Terminal 5", "Gate B3", "Cancelled",
                ]),
                "\(ReminderText.details(entry))")
            // Asked hourly until 3 h before, then every 10 minutes; not after it was to leave.
            #expect(server.log.count == 5, "\(server.log)")
            #expect(server.log.allSatisfy { !$0.contains(Self.key) })
            #expect(log.messages.contains { $0.contains("flight BA1436 2027-03-01: gate A7 → B3") }, "\(log.messages)")
            // The cancellation ends the live activity that the time to leave started.
            let ended = await bench.sink.events.filter { $0.type == .liveActivityEnd }.map(WatchTests.Bench.describe)
            #expect(ended == ["liveActivityEnd 2027-03-01T10:02:00Z cancelled"], "\(ended)")

            // The answers are kept beside the journal, 0600, without the key; a restart reads them.
            let file = FlightStatusFile.path(journal: bench.journalPath)
            defer { try? FileManager.default.removeItem(atPath: file) }
            let kept = try String(contentsOfFile: file, encoding: .utf8)
            #expect(!kept.contains(Self.key) && kept.contains("\"spent\":5"), "\(kept)")
            #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
            let reloaded = FlightStatusFile.load(journal: bench.journalPath)
            let live = try #require(reloaded.live(for: .init(code: "BA1436", date: "2027-03-01")))
            #expect(live.cancelled && live.departure == utc("2027-03-01T12:35:00Z") && live.changes.count == 3)
            #expect(reloaded.spent(at: utc("2027-03-20T00:00:00Z")) == 5)
        }
    }

    /// `why` and the events' `data.flight` say where the departure came from and what the service said, checked
    /// against the schema.
    @Test func whyAndTheEventsSayWhereTheDepartureCameFrom() async throws {
        try await FeedServer.with(script: "flight-status-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try Self.calendar.write(toFile: folder + "/cal.ics", atomically: true, encoding: .utf8)
            let settings = try Self.settings(.aeroapi, server: server)
            try """
            calendars: [cal.ics]
            timezone: UTC
            state: journal.db
            flights:
              status: { provider: aeroapi, keyFile: "\(settings.keyFile!)", url: "\(settings.url)", budget: 100/month }
            sinks:
              - { type: jsonl, path: "-" }
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            // What a daemon of that journal asked and kept.
            try Self.say(server, status: "delayed", expected: "2027-03-01T12:35:00Z", gate: "A7")
            let cache = FlightStatusCache()
            let scheduled = utc("2027-03-01T12:00:00Z")
            let key = FlightStatusCache.Key(code: "BA1436", date: "2027-03-01")
            _ = cache.live(for: key, scheduled: scheduled, origin: "LHR")
            let poller = FlightStatusPoller(
                settings: settings, cache: cache, journal: folder + "/journal.db", replanAfter: 300,
                logger: LogRecorder().logger, now: { utc("2027-03-01T09:00:00Z") }, changed: {})
            #expect(await poller.askDue() == [key])

            let cli = CommandLineTests()
            let why = try await cli.calwatch([
                "why", "edinburgh", "--config", folder + "/config.yml", "--at", "2027-03-01T09:10:00Z",
            ])
            #expect(why.status == 0, "\(why.errors)")
            #expect(
                why.output.contains(
                    "flight status: departure 2027-03-01 12:35:00, +35 min, AeroAPI estimated_out, "
                        + "asked 2027-03-01 09:00:00; delayed, gate A7, terminal 5"), "\(why.output)")
            #expect(why.output.contains("leave by 2027-03-01 09:50:00"), "\(why.output)")
            #expect(why.output.contains("flightChanged, flight changed: departure"), "\(why.output)")

            let next = try await cli.calwatch([
                "next", "--config", folder + "/config.yml", "--at", "2027-03-01T09:10:00Z",
            ])
            // check reads the key and counts the month's requests without spending one; a key file gone is an error.
            let asked = server.log.count
            let check = try await cli.calwatch(["check", "--config", folder + "/config.yml"])
            #expect(check.output.contains("flights.status (AeroAPI at "), "\(check.output)\(check.errors)")
            #expect(check.output.contains("requests spent this month"), "\(check.output)")
            #expect(server.log.count == asked)
            try FileManager.default.removeItem(atPath: settings.keyFile!)
            let broken = try await cli.calwatch(["check", "--config", folder + "/config.yml"])
            #expect(broken.status != 0)
            #expect(
                broken.errors.contains("flights.status: the key file")
                    || broken.output.contains("flights.status: the key file"), "\(broken.output)\(broken.errors)")
            try Self.key.write(toFile: settings.keyFile!, atomically: true, encoding: .utf8)
            #expect(next.output.contains("(BA1436 12:35, +35 min, gate A7)"), "\(next.output)")

            // A replay continuing that journal: every event carries what the service said, in the schema's shape.
            let replay = try await cli.calwatch([
                "replay", "--config", folder + "/config.yml", "--from", "2027-03-01T09:00:00Z", "--to",
                "2027-03-01T10:00:00Z",
            ])
            #expect(replay.status == 0, "\(replay.errors)")
            let lines = replay.output.split(separator: "\n").map(String.init)
            let changed = try #require(lines.first { $0.contains("calwatch.flightChanged") }, "\(replay.output)")
            #expect(
                changed.contains(
                    #""changes":[{"field":"departure","from":"2027-03-01T12:00:00Z","to":"2027-03-01T12:35:00Z"}"#),
                "\(changed)")
            let reminder = try #require(lines.first { $0.contains("calwatch.reminderDue") })
            #expect(reminder.contains(#""time":"2027-03-01T09:20:00Z""#), "\(reminder)")
            #expect(reminder.contains(#""live":{"status":"delayed","provider":"AeroAPI""#), "\(reminder)")
            #expect(reminder.contains(#""sources":{"departure":"AeroAPI","gate":"AeroAPI""#), "\(reminder)")
            let validator = EventSchemaTests.Validator(root: EventSchemaTests.schema)
            for line in lines {
                let errors = validator.validate(try EventSchemaTests.JSON.parse(line), EventSchemaTests.schema)
                #expect(errors.isEmpty, "\(errors) in \(line)")
            }
        }
    }

    /// The month's budget is never exceeded, across restarts: what was not asked is said once, and the calendar's
    /// times stay in force; a new month asks again.
    @Test func theBudgetIsNeverExceeded() async throws {
        try await FeedServer.with(script: "flight-status-server.py") { server in
            try Self.say(server)
            var settings = try Self.settings(.aviationstack, server: server)
            settings.budget = 3
            let journal = server.folder + "/journal.db"
            let clock = Mutex(utc("2027-03-01T09:00:00Z"))
            let log = LogRecorder()
            func poller(_ cache: FlightStatusCache) -> FlightStatusPoller {
                FlightStatusPoller(
                    settings: settings, cache: cache, journal: journal, replanAfter: 300, logger: log.logger,
                    now: { clock.withLock { $0 } }, changed: {})
            }
            let cache = FlightStatusCache()
            for code in ["BA1436", "BA1438", "BA1440"] {
                _ = cache.live(
                    for: .init(code: code, date: "2027-03-01"), scheduled: utc("2027-03-01T12:00:00Z"), origin: "LHR")
            }
            _ = await poller(cache).askDue()
            #expect(server.log.count == 3)
            // Ten minutes on, restarted: the file says the month's three are spent.
            clock.withLock { $0 = utc("2027-03-01T09:10:00Z") }
            let restarted = FlightStatusFile.load(journal: journal)
            for code in ["BA1436", "BA1438", "BA1440"] {
                _ = restarted.live(
                    for: .init(code: code, date: "2027-03-01"), scheduled: utc("2027-03-01T12:00:00Z"), origin: "LHR")
            }
            let again = poller(restarted)
            _ = await again.askDue()
            clock.withLock { $0 = utc("2027-03-01T09:30:00Z") }
            _ = await again.askDue()
            #expect(server.log.count == 3, "\(server.log)")
            let said = log.messages.filter { $0.contains("budget is spent") }
            #expect(said.count == 1, "\(log.messages)")
            #expect(said.first?.contains("BA1436 2027-03-01, BA1438 2027-03-01, BA1440 2027-03-01 not asked") == true)
            #expect(restarted.spent(at: clock.withLock { $0 }) == 3)
            // April: a new month's budget.
            clock.withLock { $0 = utc("2027-04-01T09:00:00Z") }
            _ = restarted.live(
                for: .init(code: "BA1436", date: "2027-04-01"), scheduled: utc("2027-04-01T12:00:00Z"), origin: "LHR")
            _ = await again.askDue()
            #expect(server.log.count == 4, "\(server.log)")
        }
    }

    /// A service that does not answer in time changes nothing: the flight keeps the calendar's time, said once.
    @Test func aServiceThatTimesOutChangesNothing() async throws {
        try await FeedServer.with(script: "flight-status-server.py") { server in
            try Self.say(server, status: "delayed", expected: "2027-03-01T12:35:00Z")
            try "slow".write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
            // aviationstack takes its key in the address: neither is ever logged.
            let settings = try Self.settings(.aviationstack, server: server)
            let cache = FlightStatusCache()
            let key = FlightStatusCache.Key(code: "BA1436", date: "2027-03-01")
            _ = cache.live(for: key, scheduled: utc("2027-03-01T12:00:00Z"), origin: "LHR")
            let clock = Mutex(utc("2027-03-01T09:00:00Z"))
            let log = LogRecorder()
            let poller = FlightStatusPoller(
                settings: settings, cache: cache, journal: server.folder + "/journal.db", replanAfter: 300,
                logger: log.logger, now: { clock.withLock { $0 } }, deadline: .seconds(1), changed: {})
            #expect(await poller.askDue().isEmpty)
            clock.withLock { $0 = utc("2027-03-01T09:10:00Z") }
            #expect(await poller.askDue().isEmpty)
            #expect(cache.live(for: key) == nil)
            let said = log.messages.filter { $0.contains("gave no status") }
            #expect(said.count == 1 && said[0].contains("the calendar's time stays in force"), "\(log.messages)")
            #expect(log.messages.allSatisfy { !$0.contains(Self.key) })
            #expect(log.metadata.allSatisfy { !"\($0)".contains(Self.key) })
        }
    }
}
