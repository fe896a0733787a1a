import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// A fleet run as operators run it: a real PostgreSQL cluster, 2,000 calendars in folders, watchers as child
/// processes of the calwatch binary, reminders due throughout. One watcher is killed with SIGKILL, a fifth joins,
/// one is stopped with SIGTERM, the database is stopped for 20 seconds; at the end every reminder is in
/// `event_log` exactly once, with who sent it and how late. Real time, so the lease is short (6 s) and the
/// bounds have margins for a busy machine; the figures it prints go in BENCHMARKS.md.
@Suite(.serialized, .timeLimit(.minutes(8))) struct FleetRunTests {
    static let calendars = 2_000
    static let lease: Int64 = 6

    /// One watcher: `calwatch watch --fleet` with a journal of its own, its log in `folder/<name>.log`.
    final class Watcher {
        let name: String
        let process = Process()

        init(_ name: String, folder: String, database: String, environment: [String: String] = [:]) throws {
            self.name = name
            process.executableURL = CommandLineTests.executable
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
            process.arguments = [
                "watch", "--fleet", database, "--instance", name, "--state", folder + "/\(name).journal",
                "--config", folder + "/config.yml", "--lease", "\(FleetRunTests.lease)s",
            ]
            process.standardOutput = FileHandle.nullDevice
            _ = FileManager.default.createFile(atPath: folder + "/\(name).log", contents: nil)
            process.standardError = FileHandle(forWritingAtPath: folder + "/\(name).log")
            try process.run()
        }

        func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

        /// Waits for the process to end; its exit status.
        func exit() async throws -> Int32 {
            try await PostgresRecoveryTests.wait(process)
        }
    }

    /// `count` folders of one event each, starting so that the 5-minute reminders are due from `first` on, one
    /// every `spacing` seconds; the same UID in every other calendar (one invitation in many people's calendars).
    static func writeCalendars(in folder: String, first: Instant, spacing: Double) throws -> [String] {
        func text(_ instant: Instant) -> String {
            instant.description.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        }
        return try (0..<calendars).map { index in
            let path = folder + String(format: "/calendars/c%04d", index)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let start = first.adding(seconds: 300 + Int64(Double(index) * spacing))
            let lines = [
                "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT",
                "UID:\(index % 2 == 0 ? "all-hands" : "one-to-one-\(index)")@example.org", "DTSTAMP:20270101T000000Z",
                "DTSTART:\(text(start))", "DTEND:\(text(start.adding(seconds: 1800)))", "SUMMARY:Meeting \(index)",
                "END:VEVENT", "END:VCALENDAR",
            ]
            try (lines.joined(separator: "\r\n") + "\r\n").write(
                toFile: path + "/event.ics", atomically: true, encoding: .utf8)
            return path
        }
    }

    /// Polls `query` (one integer) until `done` holds or `seconds` pass; the last value.
    static func wait(
        for query: String, in server: PostgresServer, seconds: Double, until done: (Int) -> Bool
    ) async throws -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        var value = -1
        while Date() < deadline {
            value = Int((try? await server.value(query)) ?? "") ?? -1
            if done(value) { return value }
            try await Task.sleep(for: .milliseconds(250))
        }
        return value
    }

    @Test func killedStoppedAndJoiningWatchersAndADatabaseRestartSendEveryReminderOnce() async throws {
        try await PostgresServer.with { server in
            let folder = TestFolders.path("calwatch-fleet-run")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            // The fleet's database named as a sink of config.yml: the watchers hand over by that sink's progress.
            try """
            reminders:
              offsets: [5m]
            sinks:
              - type: postgres
                name: fleet-database
                url: "\(server.url)"
            fleet:
              roots: ["\(folder)/calendars"]

            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            // Reminders due from 40 s from now, one every 70 ms, for 140 s.
            let now = Timestamp.now.instant
            let paths = try Self.writeCalendars(in: folder, first: now.adding(seconds: 40), spacing: 0.07)
            let cli = CommandLineTests()
            let added = try await cli.calwatch(["fleet", "add", "--database", server.url] + paths)
            #expect(added.status == 0, "\(added.errors)")

            var watchers = try (1...4).map { try Watcher("w\($0)", folder: folder, database: server.url) }
            defer { for watcher in watchers where watcher.process.isRunning { watcher.signal(SIGKILL) } }
            // The four share the calendars: 500 each.
            let balanced = try await Self.wait(
                for: "SELECT count(*) FROM (SELECT watcher FROM calendars GROUP BY watcher HAVING count(*) = 500) AS w",
                in: server, seconds: 90, until: { $0 == 4 })
            #expect(balanced == 4, "the four watchers did not come to 500 calendars each")

            // Reminders are due now: w1 dies without a word.
            while Timestamp.now.instant < now.adding(seconds: 50) { try await Task.sleep(for: .milliseconds(100)) }
            let killedAt = Timestamp.now
            watchers[0].signal(SIGKILL)
            _ = try await watchers[0].exit()
            let orphans = try await Self.wait(
                for: "SELECT count(*) FROM calendars WHERE watcher = 'w1'", in: server, seconds: 60,
                until: { $0 == 0 })
            #expect(orphans == 0, "w1's calendars were not taken over")

            // A fifth joins and gets a share; w2 is stopped gracefully and gives its calendars back at once.
            watchers.append(try Watcher("w5", folder: folder, database: server.url))
            let joined = try await Self.wait(
                for: "SELECT count(*) FROM calendars WHERE watcher = 'w5'", in: server, seconds: 60,
                until: { $0 >= 400 })
            #expect(joined >= 400)
            watchers[1].signal(SIGTERM)
            #expect(try await watchers[1].exit() == 0)
            #expect(try await server.value("SELECT count(*) FROM calendars WHERE watcher = 'w2'") == "0")
            #expect(
                try await server.value("SELECT stopped IS NOT NULL FROM fleet_watchers WHERE watcher = 'w2'") == "t")
            let free = try await Self.wait(
                for: "SELECT count(*) FROM calendars WHERE watcher IS NULL", in: server, seconds: 30,
                until: { $0 == 0 })
            #expect(free == 0, "w2's calendars were not taken")

            // The database goes away for 20 seconds while reminders keep coming due.
            try await server.halt()
            try await Task.sleep(for: .seconds(20))
            try await server.startAgain()

            // Every reminder due: stored once each, by whichever watcher held its calendar.
            while Timestamp.now.instant < now.adding(seconds: 185) { try await Task.sleep(for: .milliseconds(250)) }
            let query = """
                SELECT count(*) FROM event_log WHERE type = 'reminderDue'
                """
            let stored = try await Self.wait(for: query, in: server, seconds: 90, until: { $0 >= Self.calendars })
            for watcher in watchers where watcher.process.isRunning { watcher.signal(SIGTERM) }
            for watcher in watchers.dropFirst(2) { #expect(try await watcher.exit() == 0) }

            #expect(stored == Self.calendars)
            #expect(
                try await server.psql(
                    "SELECT count(DISTINCT watcher), count(DISTINCT (watcher, id)) FROM event_log WHERE type = 'reminderDue'"
                ) == ["\(Self.calendars)|\(Self.calendars)"])
            // Senders: only the fleet's watchers; w1 sent nothing due after it died.
            let senders = try await server.psql(
                "SELECT DISTINCT sender FROM event_log WHERE type = 'reminderDue' ORDER BY 1")
            #expect(Set(senders).isSubset(of: ["w1", "w2", "w3", "w4", "w5"]))
            let killedSeconds = Double(killedAt.millisecondsSinceEpoch) / 1000
            #expect(
                try await server.value(
                    "SELECT count(*) FROM event_log WHERE sender = 'w1' AND time > to_timestamp(\(killedSeconds + 1))")
                    == "0")
            // Live activities went on across every hand-over: one start per calendar, none ended as removed.
            #expect(
                try await server.value(
                    "SELECT count(*) = count(DISTINCT watcher) FROM event_log WHERE type = 'liveActivityStart'") == "t")
            #expect(
                try await server.value(
                    "SELECT count(*) FROM event_log WHERE details #>> '{liveActivity,endReason}' = 'removed'") == "0")

            // Lateness: a reminder due while its calendar changed hands waited at most a lease and the heartbeat
            // that found it free (with margin for a busy machine); one due before its watcher took the calendar over
            // says it was late. (A watcher's own wake, late by a second or two on a busy machine, is within the grace.)
            // Instants are whole seconds to the planner: a reminder due in the second the calendar was claimed is
            // not due before the hand-over, and on a busy machine it can be stored 2 s later without being late.
            let lateness =
                try await server.psql(
                    """
                    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM recorded - time)),
                           percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM recorded - time)),
                           max(extract(epoch FROM recorded - time)),
                           count(*) FILTER (WHERE extract(epoch FROM recorded - time) >= 2
                                              AND (details #>> '{reminder,late}')::boolean IS NOT TRUE
                                              AND EXISTS (SELECT 1 FROM fleet_handovers h
                                                          WHERE 'fleet:' || h.calendar = e.watcher
                                                            AND h.watcher = e.sender AND h.previous IS NOT NULL
                                                            AND e.time < date_trunc('second', h.claimed_at)))
                    FROM event_log e WHERE type = 'reminderDue'
                    """
                ).first?.split(separator: "|").map { Double($0) ?? -1 } ?? []
            #expect(lateness.count == 4)
            #expect(lateness[2] <= Double(Self.lease) * 4 / 3 + 10, "max lateness \(lateness[2]) s")
            // Only the killed watcher's calendars were taken after a lease expired: the database's restart took
            // none from the watchers that were cut off with it.
            #expect(
                try await server.psql("SELECT DISTINCT previous FROM fleet_handovers WHERE reason = 'expired'")
                    == ["w1"])
            #expect(lateness[3] == 0, "reminders due before a hand-over, late by 2 s or more, not marked late")
            let handover =
                try await server.psql(
                    """
                    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM claimed_at) - \(killedSeconds)),
                           max(extract(epoch FROM claimed_at) - \(killedSeconds)), count(*)
                    FROM fleet_handovers WHERE previous = 'w1' AND reason = 'expired'
                    """
                ).first ?? ""
            let handovers = try await server.psql(
                "SELECT reason, count(*) FROM fleet_handovers GROUP BY reason ORDER BY reason")
            print(
                """
                fleet run: \(Self.calendars) calendars, lease \(Self.lease) s; reminders \(stored), \
                lateness p50/p99/max \(lateness.prefix(3).map { String(format: "%.3f", $0) }.joined(separator: "/")) s; \
                after the SIGKILL, w1's calendars taken (p50|max s after the kill|count): \(handover); \
                hand-overs by reason: \(handovers.joined(separator: ", "))
                """)
        }
    }

    /// A meeting whose 5-minute reminder is due 15 seconds from now.
    static func meetingSoon(_ uid: String) -> String {
        let start = Timestamp.now.instant.adding(seconds: 315)
        func text(_ instant: Instant) -> String {
            instant.description.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        }
        return [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT", "UID:\(uid)@example.org",
            "DTSTAMP:20270101T000000Z", "DTSTART:\(text(start))", "DTEND:\(text(start.adding(seconds: 1800)))",
            "SUMMARY:Team sync", "END:VEVENT", "END:VCALENDAR", "",
        ].joined(separator: "\r\n")
    }

    @Test func aCalDAVAccountInTheFleetSignsInWithItsCredentialAndKeepsTheSecretOut() async throws {
        try await RadicaleServer.with { radicale in
            try await PostgresServer.with { server in
                let folder = SinkFixtures.folder()
                defer { try? FileManager.default.removeItem(atPath: folder) }
                // The password lives on the watcher's machine, named in the fleet by its credential's name.
                try RadicaleServer.password.write(toFile: folder + "/secret", atomically: true, encoding: .utf8)
                try "reminders:\n  offsets: [5m]\nfleet:\n  credentials:\n    dav-anna: [cat, \(folder)/secret]\n"
                    .write(
                        toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
                try await radicale.makeCalendar("/anna/work/", name: "Work")
                try await radicale.put("/anna/work/sync.ics", Self.meetingSoon("anna-sync"))
                let added = try await CommandLineTests().calwatch([
                    "fleet", "add", "--database", server.url, "--caldav", radicale.url("/anna/"), "--user",
                    RadicaleServer.user, "--name", "anna", "--person", "anna@example.org", "--credential", "dav-anna",
                ])
                #expect(added.status == 0, "\(added.errors)")
                let watcher = try Watcher(
                    "w1", folder: folder, database: server.url, environment: ["XDG_CACHE_HOME": folder + "/cache"])
                defer { if watcher.process.isRunning { watcher.signal(SIGKILL) } }
                let sent = try await Self.wait(
                    for: "SELECT count(*) FROM event_log WHERE watcher = 'fleet:anna' AND type = 'reminderDue'",
                    in: server, seconds: 90, until: { $0 > 0 })
                #expect(sent == 1, "\((try? String(contentsOfFile: folder + "/w1.log", encoding: .utf8)) ?? "")")
                watcher.signal(SIGTERM)
                #expect(try await watcher.exit() == 0)
                // The secret is in no row of any table calwatch wrote, and in none of its log lines.
                let tables = ["calendars", "fleet_watchers", "fleet_handovers", "event_log", "occurrences", "watchers"]
                for table in tables {
                    #expect(
                        try await server.value(
                            "SELECT count(*) FROM \(table) AS t WHERE t::text LIKE '%\(RadicaleServer.password)%'")
                            == "0", "\(table)")
                }
                let log = (try? String(contentsOfFile: folder + "/w1.log", encoding: .utf8)) ?? ""
                #expect(!log.contains(RadicaleServer.password))
            }
        }
    }

    @Test func aFeedInTheFleetIsPolledByTheWatcherThatHoldsIt() async throws {
        try await FeedServer.with { feed in
            try await PostgresServer.with { server in
                let folder = SinkFixtures.folder()
                defer { try? FileManager.default.removeItem(atPath: folder) }
                try "reminders:\n  offsets: [5m]\n".write(
                    toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
                // A meeting whose 5-minute reminder is due 15 seconds from now, on the server only.
                try Self.meetingSoon("team-sync").write(
                    toFile: feed.folder + "/feed.ics", atomically: true, encoding: .utf8)
                let cli = CommandLineTests()
                let added = try await cli.calwatch([
                    "fleet", "add", "--database", server.url, "--feed", feed.url("/feed.ics"), "--name", "team",
                ])
                #expect(added.status == 0, "\(added.errors)")
                let watcher = try Watcher(
                    "w1", folder: folder, database: server.url, environment: ["XDG_CACHE_HOME": folder + "/cache"])
                defer { if watcher.process.isRunning { watcher.signal(SIGKILL) } }
                let sent = try await Self.wait(
                    for: "SELECT count(*) FROM event_log WHERE watcher = 'fleet:team' AND type = 'reminderDue' "
                        + "AND sender = 'w1'", in: server, seconds: 90, until: { $0 > 0 })
                #expect(sent == 1, "\((try? String(contentsOfFile: folder + "/w1.log", encoding: .utf8)) ?? "")")
                #expect(feed.requests.first?.status == 200)
                // A second watcher of the same name is refused while the first lives: it would renew its leases.
                let twin = folder + "/twin"
                try FileManager.default.createDirectory(atPath: twin, withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: folder + "/config.yml", toPath: twin + "/config.yml")
                #expect(try await Watcher("w1", folder: twin, database: server.url).exit() == 75)
                let refused = (try? String(contentsOfFile: twin + "/w1.log", encoding: .utf8)) ?? ""
                #expect(refused.contains("a watcher named w1 runs on"), "\(refused)")
                let show = try await cli.calwatch(["fleet", "show", "team", "--database", server.url])
                #expect(show.output.contains("watcher:  w1") && show.output.contains("reminderDue"), "\(show.output)")
                watcher.signal(SIGTERM)
                #expect(try await watcher.exit() == 0)
                #expect(try await server.value("SELECT watcher IS NULL FROM calendars WHERE name = 'team'") == "t")
            }
        }
    }

    /// A Microsoft 365 account as a fleet calendar: signed in once with `fleet sign-in`, its tokens sealed in the
    /// database, read and refreshed by the watcher holding it and, after a hand-over, by the next one with the
    /// refresh token its last holder kept (the stand-in's refresh tokens work once, and its access tokens last a
    /// second, so every poll refreshes: a watcher spending a spent token would be refused).
    @Test func anAccountInTheFleetIsRefreshedOnlyByItsHolderAndGoesOnAfterAHandOver() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { graph in
            try await PostgresServer.with { server in
                let folder = SinkFixtures.folder()
                defer { try? FileManager.default.removeItem(atPath: folder) }
                let format = ISO8601DateFormatter()
                let start = String(format.string(from: Date().addingTimeInterval(315)).dropLast())
                try AccountTests.serve([AccountTests.event("1", "Standup", start: start, reminder: nil)], in: graph)
                try "1".write(toFile: graph.folder + "/expires-in", atomically: true, encoding: .utf8)
                try "short".write(toFile: folder + "/token-key", atomically: true, encoding: .utf8)
                let (_, environment) = try AccountTests.configured(
                    graph, in: folder,
                    rest: """
                        reminders:
                          offsets: [5m]
                        fleet:
                          tokenKey: fleet-key
                          credentials:
                            fleet-key: [cat, \(folder)/token-key]
                          roots: [\(folder)/people]
                        """)
                let cli = CommandLineTests()
                let added = try await cli.calwatch(
                    ["fleet", "add", "--database", server.url, "--account", "work", "--name", "megan", "--every", "1m"])
                #expect(added.status == 0 && added.errors.contains("calwatch fleet sign-in megan"), "\(added.errors)")
                // A key too short to seal with is said before any sign-in begins.
                let refused = try await cli.calwatch(
                    ["fleet", "sign-in", "megan", "--database", server.url, "--config", folder + "/config.yml"],
                    environment: environment)
                #expect(
                    refused.status == 64 && refused.errors.contains("shorter than 32 characters"), "\(refused.errors)")
                // `check` reads the key as a watcher would, and says what is wrong with it.
                let checked = try await cli.calwatch(
                    ["check", "--config", folder + "/config.yml"], environment: environment)
                #expect(
                    checked.status == 64
                        && checked.errors.contains("error: fleet.tokenKey: the fleet's token key is shorter than 32")
                        && checked.errors.contains("warning: fleet.roots: \(folder)/people is not a folder here"),
                    "\(checked.errors)")
                let key = "fleet-token-key-" + UUID().uuidString
                try key.write(toFile: folder + "/token-key", atomically: true, encoding: .utf8)
                let checkedAgain = try await cli.calwatch(
                    ["check", "--config", folder + "/config.yml"], environment: environment)
                #expect(
                    !checkedAgain.errors.contains("fleet.tokenKey") && !checkedAgain.errors.contains(key)
                        && !checkedAgain.output.contains(key), "\(checkedAgain.errors)")
                let (status, said) = try await AccountTests.signInThroughTheBrowser(
                    ["fleet", "sign-in", "megan", "--database", server.url, "--config", folder + "/config.yml"],
                    environment: environment)
                #expect(status == 0 && said.contains("Signed in to megan as meganb@contoso.com"), "\(said)")
                // The sign-in made the address the calendar's person, and nothing in the database reads as a token.
                #expect(
                    try await server.value("SELECT person FROM calendars WHERE name = 'megan'") == "meganb@contoso.com")
                #expect(
                    try await server.value("SELECT count(*) FROM fleet_account_tokens AS t WHERE t::text LIKE '%rt-%'")
                        == "0")

                let first = try Watcher("w1", folder: folder, database: server.url, environment: environment)
                defer { if first.process.isRunning { first.signal(SIGKILL) } }
                let sent = try await Self.wait(
                    for: "SELECT count(*) FROM event_log WHERE watcher = 'fleet:megan' AND type = 'reminderDue'",
                    in: server, seconds: 90, until: { $0 > 0 })
                #expect(sent == 1, "\((try? String(contentsOfFile: folder + "/w1.log", encoding: .utf8)) ?? "")")
                #expect(try await server.value("SELECT saved_by FROM fleet_account_tokens") == "w1")

                // w1 stops; w2 takes the calendar and refreshes with the refresh token w1 kept.
                let second = try Watcher("w2", folder: folder, database: server.url, environment: environment)
                defer { if second.process.isRunning { second.signal(SIGKILL) } }
                try await Task.sleep(for: .seconds(1))
                first.signal(SIGTERM)
                #expect(try await first.exit() == 0)
                let taken = try await Self.wait(
                    for: "SELECT count(*) FROM fleet_account_tokens WHERE saved_by = 'w2'", in: server, seconds: 60,
                    until: { $0 > 0 })
                #expect(taken == 1, "\((try? String(contentsOfFile: folder + "/w2.log", encoding: .utf8)) ?? "")")
                second.signal(SIGTERM)
                #expect(try await second.exit() == 0)

                // Every refresh worked: no watcher spent a token another had spent, nobody was asked to sign in.
                let refreshes = graph.requests.filter { $0.path.hasSuffix("/oauth2/v2.0/token") }
                #expect(refreshes.count >= 3 && refreshes.allSatisfy { $0.status == 200 }, "\(refreshes)")
                #expect(
                    try await server.value("SELECT count(*) FROM event_log WHERE type = 'accountSignInNeeded'") == "0")
                #expect(try await server.value("SELECT count(*) FROM event_log WHERE type = 'reminderDue'") == "1")
                let logs = ["w1", "w2"].map {
                    (try? String(contentsOfFile: folder + "/\($0).log", encoding: .utf8)) ?? ""
                }
                #expect(!logs.joined().contains("rt-"), "a refresh token in a log")
                let show = try await cli.calwatch(["fleet", "show", "megan", "--database", server.url])
                #expect(show.output.contains("signed in: as meganb@contoso.com"), "\(show.output)")
                #expect(show.output.contains("by w2"), "\(show.output)")
            }
        }
    }
}
