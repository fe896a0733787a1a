import CalWatchCore
import CalWatchPostgres
import CalWatchRuntime
import Foundation
import Testing

/// The PostgreSQL sink against a real server started for each test (`PostgresServer`).
@Suite(.timeLimit(.minutes(5))) struct PostgresSinkTests {
    let cli = CommandLineTests()

    /// A configuration with a PostgreSQL sink (and `extra` sinks) in a new folder.
    static func folder(url: String, instance: String = "test", channel: String? = nil, extra: String = "") throws
        -> String
    {
        let folder = SinkFixtures.folder()
        var text = "instance: \(instance)\nsinks:\n  - type: postgres\n    url: \"\(url)\"\n"
        if let channel { text += "    channel: \(channel)\n" }
        try (text + extra).write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        return folder
    }

    /// `folder(url:)` with an SQLite sink beside the PostgreSQL one, then `settings`: the views compared.
    static func folderWithSQLite(url: String, settings: String) throws -> String {
        try folder(url: url, extra: "  - type: sqlite\n    path: events.db\n" + settings)
    }

    func replay(_ folder: String, window: [String] = ["--from", "2027-03-01", "--to", "2027-03-15"]) async throws
        -> CommandLineTests.Run
    {
        try await cli.calwatch(
            [
                "replay", ReplayKillTests.samples, "--tz", "Europe/Berlin", "--config", folder + "/config.yml",
                "--state", folder + "/journal.db",
            ] + window)
    }

    @Test func aReplayStoresWhatTheSQLiteSinkStoresWithTheSameViews() async throws {
        try await PostgresServer.with { server in try await storesWhatTheSQLiteSinkStores(server) }
    }

    func storesWhatTheSQLiteSinkStores(_ server: PostgresServer) async throws {
        let folder = try Self.folder(url: server.url, extra: "  - type: sqlite\n    path: events.db\n")
        let run = try await replay(folder)
        #expect(run.status == 0, "\(run.errors)")

        let sqlite = try SinkFixtures.rows(
            folder + "/events.db", "SELECT type || ' ' || count(*) FROM events GROUP BY type ORDER BY type")
        let postgres = try await server.psql("SELECT type || ' ' || count(*) FROM events GROUP BY type ORDER BY type")
        #expect(!sqlite.isEmpty && postgres == sqlite)
        // The same ids, each once, all from this watcher.
        let ids = try SinkFixtures.rows(folder + "/events.db", "SELECT id FROM events ORDER BY id")
        #expect(try await server.psql("SELECT id FROM events ORDER BY id") == ids)
        #expect(try await server.psql("SELECT DISTINCT watcher FROM events") == ["test"])

        // The flights view says the same, departure and leave-by included.
        let flightsSQL = "SELECT code, origin, destination, departure, leave_by FROM flights ORDER BY departure"
        let sqliteFlights = try SinkFixtures.rows(
            folder + "/events.db",
            "SELECT code || '|' || origin || '|' || destination || '|' || departure || '|' || leave_by FROM flights ORDER BY departure"
        )
        let postgresFlights = try await server.psql(
            "SELECT code, origin, destination, to_char(departure AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
                + "to_char(leave_by AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM flights ORDER BY departure"
        )
        #expect(!sqliteFlights.isEmpty && postgresFlights == sqliteFlights, "\(flightsSQL)")
        // Upcoming reminders (the sample weeks are in 2027): one per occurrence, the latest, as in SQLite.
        let upcoming = try SinkFixtures.rows(
            folder + "/events.db", "SELECT subject || '|' || minutes_before FROM upcoming_reminders ORDER BY subject")
        #expect(
            try await server.psql("SELECT subject || '|' || minutes_before FROM upcoming_reminders ORDER BY subject")
                == upcoming)
        // Data as in the CloudEvents object: the reminder's offset and the meeting's link.
        let joinLinks = try await server.psql(
            "SELECT DISTINCT data #>> '{meeting,joinURL}' FROM events WHERE type = 'reminderDue' AND kind = 'meeting' "
                + "AND data #>> '{reminder,minutesBefore}' = '5' ORDER BY 1")
        #expect(joinLinks.contains { $0.hasPrefix("https://") }, "\(joinLinks)")

        // A second replay of the same days over the same journal stores nothing again.
        let again = try await replay(folder)
        #expect(again.status == 0, "\(again.errors)")
        #expect(try await server.value("SELECT count(*) FROM event_log") == String(ids.count))
        // `check` names the server's version and the layout.
        let check = try await cli.calwatch(["check", "--config", folder + "/config.yml", fixture("minimal.ics")])
        #expect(check.status == 0, "\(check.errors)")
        #expect(
            check.output.contains("PostgreSQL 1")
                && check.output.contains("calwatch layout \(PostgresSink.schemaVersion) (current, every table"),
            "\(check.output)")
    }

    /// Three meetings that all overlap make two conflict events (one on each of the first two), and the
    /// `conflicts` views of both databases still list all three pairs, with their overlaps.
    @Test func theConflictsViewsListEveryPairAConflictNames() async throws {
        try await PostgresServer.with { server in
            let folder = try Self.folderWithSQLite(
                url: server.url,
                settings: """
                    timezone: UTC
                    me: [me@example.org]
                    day: { conflicts: { minOverlap: 5m } }
                    calendars: [cal]

                    """)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try FileManager.default.createDirectory(atPath: folder + "/cal", withIntermediateDirectories: true)
            try DayTests.calendar([
                DayTests.item("a", "20270303T090000Z", "20270303T110000Z", summary: "A"),
                DayTests.item("b", "20270303T093000Z", "20270303T103000Z", summary: "B"),
                DayTests.item("c", "20270303T100000Z", "20270303T120000Z", summary: "C"),
            ]).write(toFile: folder + "/cal/day.ics", atomically: true, encoding: .utf8)
            let run = try await cli.calwatch([
                "replay", "--config", folder + "/config.yml", "--state", folder + "/journal.db", "--from",
                "2027-03-01", "--to", "2027-03-04",
            ])
            #expect(run.status == 0 && run.errors.contains("conflictDetected 2"), "\(run.errors)")
            let query = "SELECT summary || '+' || with_summary || '|' || overlap_minutes FROM conflicts ORDER BY 1"
            let sqlite = try SinkFixtures.rows(folder + "/events.db", query)
            #expect(sqlite == ["A+B|60", "A+C|60", "B+C|30"])
            #expect(try await server.psql(query) == sqlite)
        }
    }

    @Test func theDaysConflictsAndAgendaReadTheSameInPostgreSQLAsInSQLite() async throws {
        try await PostgresServer.with { server in
            let folder = try Self.folderWithSQLite(
                url: server.url,
                settings: """
                    timezone: Europe/Berlin
                    me: [ada@example.org]
                    day: { agendaAt: "08:00", pendingInvitations: [1d], travelZone: true }

                    """)
            let run = try await cli.calwatch([
                "replay", PlantedWeekTests.repository + "/samples/day/calendars", "--config", folder + "/config.yml",
                "--state", folder + "/journal.db", "--from", "2027-03-07", "--to", "2027-03-15",
            ])
            #expect(run.status == 0, "\(run.errors)")
            let sqliteConflicts = try SinkFixtures.rows(
                folder + "/events.db", "SELECT summary || '|' || with_summary || '|' || overlap_minutes FROM conflicts")
            #expect(sqliteConflicts == ["Design review|Customer call: Northwind|30"])
            #expect(
                try await server.psql("SELECT summary || '|' || with_summary || '|' || overlap_minutes FROM conflicts")
                    == sqliteConflicts)
            let agenda = try SinkFixtures.rows(
                folder + "/events.db",
                "SELECT date || '|' || position || '|' || summary || '|' || conflicts FROM agenda "
                    + "WHERE date = '2027-03-08' ORDER BY position")
            #expect(
                agenda == [
                    "2027-03-08|0|Focus time|[]", "2027-03-08|1|Design review|[\"customer-call@example.org\"]",
                    "2027-03-08|2|Customer call: Northwind|[\"design-review@example.org\"]",
                    "2027-03-08|3|Budget planning 2028|[]",
                ])
            #expect(
                try await server.psql(
                    "SELECT date || '|' || position || '|' || summary || '|' || conflicts FROM agenda "
                        + "WHERE date = '2027-03-08' ORDER BY position"
                ).map { $0.replacingOccurrences(of: " ", with: "") }
                    == agenda.map { $0.replacingOccurrences(of: " ", with: "") })
            // Six of the eight agendas have items (the Sunday before and the day in the air have none).
            #expect(try await server.value("SELECT count(DISTINCT date) FROM agenda") == "6")
            #expect(try await server.value("SELECT count(*) FROM events WHERE type = 'agendaDue'") == "8")
        }
    }

    @Test func aBatchDeliveredAgainWholeOrInPartIsStoredOnce() async throws {
        let entries = try await SinkFixtures.wednesday()
        try await PostgresServer.with { server in
            let sink = PostgresSink(settings: PostgresSettings(url: server.url, watcher: "again"))
            try await sink.deliver(Array(entries.prefix(entries.count / 2)))
            // The whole batch after its first half (a crash before the journal recorded the cursor), then all again.
            try await sink.deliver(entries)
            try await sink.deliver(entries)
            #expect(try await server.value("SELECT count(*) FROM event_log") == String(entries.count))
            #expect(try await server.value("SELECT count(DISTINCT id) FROM events") == String(entries.count))
            // The watcher's row names the last event.
            #expect(
                try await server.value("SELECT last_seq || ' ' || last_id FROM watchers WHERE watcher = 'again'")
                    == "\(entries.last!.sequence) \(entries.last!.event.id)")
        }
    }

    @Test func anOlderLayoutIsMigratedAndANewerOneRefused() async throws {
        try await PostgresServer.with { server in
            // A database calwatch left at layout 1 (tables, no views), with an event in it.
            try await offCooperativePool {
                let connection = try PostgresConnection(url: server.url)
                try PostgresSink.migrate(connection, sink: "test", url: "test", watcher: "old", through: 1)
            }
            _ = try await server.psql(
                """
                SELECT calwatch_event_partition('2027-03-01');
                INSERT INTO occurrences (watcher, subject, version, calendar, uid, kind, start, "end")
                    VALUES ('old', 'u1/2027-03-02T09:00:00Z', 1, 'work', 'u1', 'event', '2027-03-02T09:00:00Z',
                            '2027-03-02T10:00:00Z');
                INSERT INTO event_log VALUES ('old', 'e1', 1, 'reminderDue', '2027-03-02T08:45:00Z',
                    'u1/2027-03-02T09:00:00Z', 1, now(), '2027-03-02T09:00:00Z', '{"reminder":{"minutesBefore":15}}');
                """)
            let folder = try Self.folder(url: server.url, extra: "metrics:\n  textfile: calwatch.prom\n")
            let check = try await cli.calwatch(["check", "--config", folder + "/config.yml", fixture("minimal.ics")])
            #expect(
                check.output.contains(
                    "calwatch layout 1 (migrated to \(PostgresSink.schemaVersion) at the first delivery)"),
                "\(check.output)")

            #expect(try await replay(folder).status == 0)
            #expect(
                try await server.psql("SELECT version FROM calwatch_schema ORDER BY version") == [
                    "1", String(PostgresSink.schemaVersion),
                ])
            // The old event shows in the view made by the migration, beside the new ones.
            #expect(
                try await server.value("SELECT summary IS NULL AND type = 'reminderDue' FROM events WHERE id = 'e1'")
                    == "t")
            #expect(try await server.value("SELECT count(DISTINCT watcher) FROM events") == "2")

            // A layout from a newer calwatch is refused, with the fix, and nothing is written.
            _ = try await server.psql("INSERT INTO calwatch_schema (version, migrated_by) VALUES (9, 'newer')")
            let refused = try await cli.calwatch(["check", "--config", folder + "/config.yml", fixture("minimal.ics")])
            #expect(refused.status == 64)
            #expect(
                refused.errors.contains("holds calwatch layout 9, written by a newer calwatch"), "\(refused.errors)")
            let before = try await server.value("SELECT count(*) FROM event_log")
            let later = try await replay(folder, window: ["--from", "2027-03-15", "--to", "2027-03-16"])
            #expect(later.status == 74 && later.errors.contains("upgrade calwatch"), "\(later.errors)")
            #expect(try await server.value("SELECT count(*) FROM event_log") == before)
            // The failed replay still wrote its metrics: the failures, and the events left waiting in the journal.
            let metrics = try MetricsTests.samples(folder + "/calwatch.prom")
            let sink = "postgres:" + server.url
            #expect((metrics["calwatch_sink_failures_total{sink=\"\(sink)\"}"] ?? 0) >= 1, "\(metrics)")
            #expect((metrics["calwatch_sink_backlog_events{sink=\"\(sink)\"}"] ?? 0) > 0, "\(metrics)")
        }
    }

    @Test func aPasswordComesFromItsCommandAndNeverShowsInAnError() async throws {
        try await PostgresServer.with { server in
            // A role that must give a password over the socket (the server trusts everyone else).
            _ = try await server.psql(
                "CREATE ROLE watcher LOGIN PASSWORD 'Pa55-right'; GRANT ALL ON SCHEMA public TO watcher")
            let hba = server.data + "/pg_hba.conf"
            let rules = try String(contentsOfFile: hba, encoding: .utf8)
            try ("local all watcher scram-sha-256\n" + rules).write(toFile: hba, atomically: false, encoding: .utf8)
            _ = try await server.psql("SELECT pg_reload_conf()")
            let url = "postgres:///calwatch?host=\(server.folder)&user=watcher"

            let folder = try Self.folder(url: url)
            let config = folder + "/config.yml"
            try
                (String(contentsOfFile: config, encoding: .utf8)
                + "    passwordCommand: [printf, \"%s\\n\", Pa55-right]\n")
                .write(toFile: config, atomically: true, encoding: .utf8)
            let run = try await replay(folder)
            #expect(run.status == 0, "\(run.errors)")
            #expect(try await server.value("SELECT count(*) > 0 FROM events WHERE watcher = 'test'") == "t")

            // A wrong password, from the command or in the URL in each form libpq reads: the error says what
            // failed, and nothing calwatch prints or writes (journal, metrics) holds the password.
            let pairs = "host=\(server.folder) user=watcher dbname=calwatch"
            for (url, command, secret) in [
                (url, "    passwordCommand: [printf, Wr0ng-pa55]\n", "Wr0ng-pa55"),
                (url.replacingOccurrences(of: ":///", with: "://watcher:Wr0ng-pa55@/"), "", "Wr0ng-pa55"),
                (url + "&password=Wr0ng-pa55", "", "Wr0ng-pa55"),
                (pairs + " password = Wr0ng-pa55", "", "Wr0ng-pa55"),
                (pairs + " password='Wr0ng pa55'", "", "Wr0ng pa55"),
                // libpq refuses it, quoting the token back: "invalid percent-encoded token: \"Wr0ng%zzpa55\"".
                (url.replacingOccurrences(of: ":///", with: "://watcher:Wr0ng%zzpa55@/"), "", "Wr0ng"),
            ] {
                let wrong = try Self.folder(url: url, extra: command + "metrics:\n  textfile: calwatch.prom\n")
                let check = try await cli.calwatch(["check", "--config", wrong + "/config.yml", fixture("minimal.ics")])
                #expect(check.status == 64)
                #expect(
                    check.errors.contains("password authentication failed")
                        || check.errors.contains("invalid percent-encoded token"), "\(check.errors)")
                let replayed = try await replay(wrong, window: ["--from", "2027-03-01", "--to", "2027-03-02"])
                #expect(replayed.status == 74)
                for text in [check.output, check.errors, replayed.output, replayed.errors] {
                    #expect(!text.contains(secret), "\(text)")
                }
                for file in try FileManager.default.contentsOfDirectory(atPath: wrong) where file != "config.yml" {
                    let bytes = try Data(contentsOf: URL(fileURLWithPath: wrong + "/" + file))
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) holds the password")
                }
            }
        }
    }

    /// The same days replayed twice into one watcher, each replay with a journal of its own (the default, a
    /// temporary one): the second stores nothing new, and is not refused for its journal.
    @Test func theSameDaysReplayedAgainAreStoredOnce() async throws {
        try await PostgresServer.with { server in
            let folder = try Self.folder(url: server.url, instance: "backfill")
            let arguments = [
                "replay", ReplayKillTests.samples, "--tz", "Europe/Berlin", "--config", folder + "/config.yml",
                "--from", "2027-03-01", "--to", "2027-03-08",
            ]
            let first = try await cli.calwatch(arguments)
            #expect(first.status == 0, "\(first.errors)")
            let stored = try await server.value("SELECT count(*) FROM event_log")
            #expect(Int(stored) ?? 0 > 100)
            let second = try await cli.calwatch(arguments)
            #expect(second.status == 0, "\(second.errors)")
            #expect(try await server.value("SELECT count(*) FROM event_log") == stored)
        }
    }

    /// `check` compares the tables and views with the layout calwatch makes: one says "current" only when all is
    /// there, and a dropped view or column is an error that names it.
    @Test func checkComparesTheDatabaseWithTheLayoutItExpects() async throws {
        try await PostgresServer.with { server in
            let folder = try Self.folder(url: server.url)
            #expect(try await replay(folder).status == 0)
            let check = ["check", "--config", folder + "/config.yml", fixture("minimal.ics")]
            let whole = try await cli.calwatch(check)
            #expect(whole.status == 0, "\(whole.errors)")
            #expect(whole.output.contains("(current, every table, view and column there)"), "\(whole.output)")
            // The comparison writes nothing.
            #expect(
                try await server.value("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'calwatch_expected%'")
                    == "0")

            // A view dropped is said, and made again by the next delivery.
            _ = try await server.psql("DROP VIEW upcoming_reminders")
            let viewless = try await cli.calwatch(check)
            #expect(viewless.status == 0, "\(viewless.errors)")
            #expect(
                viewless.output.contains(
                    "(current but for the view upcoming_reminders is missing; made again at the first delivery)"),
                "\(viewless.output)")
            // The next delivery (a replay with a journal of its own, delivering its events again) connects.
            let again = try await cli.calwatch([
                "replay", ReplayKillTests.samples, "--tz", "Europe/Berlin", "--config", folder + "/config.yml",
                "--from", "2027-03-01", "--to", "2027-03-02",
            ])
            #expect(again.status == 0, "\(again.errors)")
            #expect(try await server.value("SELECT to_regclass('upcoming_reminders') IS NOT NULL") == "t")

            // A column dropped cannot be mended: an error that names it.
            _ = try await server.psql("DROP VIEW upcoming_reminders; ALTER TABLE watchers DROP COLUMN last_delivery")
            let broken = try await cli.calwatch(check)
            #expect(broken.status == 64)
            #expect(broken.errors.contains("the view upcoming_reminders is missing"), "\(broken.errors)")
            #expect(broken.errors.contains("watchers has no column last_delivery"), "\(broken.errors)")
        }
    }

    @Test func everyStoredBatchIsNotifiedOnTheChannel() async throws {
        try await PostgresServer.with { server in
            let listener = try await offCooperativePool { () -> PostgresConnection in
                let connection = try PostgresConnection(url: server.url)
                try connection.execute("LISTEN calwatch_events")
                return connection
            }
            let folder = try Self.folder(url: server.url, instance: "anna@laptop", channel: "calwatch_events")
            #expect(try await replay(folder).status == 0)
            var received: [PostgresConnection.Notification] = []
            while true {
                let more = try await offCooperativePool { try listener.notifications(waitingUpTo: 2000) }
                if more.isEmpty { break }
                received += more
            }
            let stored = Int(try await server.value("SELECT count(*) FROM event_log")) ?? 0
            #expect(stored > 0 && !received.isEmpty)
            // Each notification tells which watcher stored which sequence numbers; together they cover every event.
            let batches = received.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.payload.utf8)) as? [String: Any]
            }
            #expect(batches.count == received.count && received.allSatisfy { $0.channel == "calwatch_events" })
            #expect(batches.allSatisfy { $0["watcher"] as? String == "anna@laptop" })
            #expect(batches.map { $0["events"] as? Int ?? 0 }.reduce(0, +) == stored)
            let ranges = batches.map { ($0["first"] as? Int ?? 0, $0["last"] as? Int ?? 0) }
            #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.1 + 1 == $1.0 }, "\(ranges)")
            // A batch's rows are found from what its notification says, through the table's key.
            let last = try #require(batches.last)
            let found = try await server.value(
                """
                SELECT count(*) FROM events WHERE watcher = 'anna@laptop'
                  AND time BETWEEN '\(last["since"] as? String ?? "")' AND '\(last["until"] as? String ?? "")'
                  AND seq BETWEEN \(last["first"] as? Int ?? 0) AND \(last["last"] as? Int ?? 0)
                """)
            #expect(found == String(last["events"] as? Int ?? -1))
        }
    }
}

/// The PostgreSQL sink when calwatch or the database goes away mid-replay: every event stored once. On threads of
/// their own, so that the watch for the moment to kill or stop comes in time on a pool the whole run keeps busy.
@Suite(.serialized, .timeLimit(.minutes(5)), .ownThread) struct PostgresRecoveryTests {
    static let window = ["--from", "2027-01-01", "--to", "2030-01-01", "--tz", "Europe/Berlin"]

    /// A replay of the samples into `folder`'s sinks, in the background.
    static func startReplay(_ folder: String) throws -> Process {
        try CommandLineTests.startReplay(ReplayKillTests.samples, window: window, folder: folder)
    }

    static func wait(_ process: Process) async throws -> Int32 {
        try await offCooperativePool {
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// Waits until the database holds at least `rows` events (or the replay has ended).
    static func waitForRows(_ rows: Int, in server: PostgresServer, while process: Process) async throws -> Int {
        while true {
            let stored = Int((try? await server.value("SELECT count(*) FROM event_log")) ?? "") ?? 0
            if stored >= rows || !process.isRunning { return stored }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The ids of the events a replay of the window gives, from an undisturbed run to standard output.
    static func expectedIDs() async throws -> Set<String> {
        Set(try await ReplayKillTests.replay(state: nil, window: window).map(ReplayKillTests.id))
    }

    @Test func afterSIGKILLAndARestartEveryEventIsStoredOnce() async throws {
        let expected = try await Self.expectedIDs()
        try await PostgresServer.with { server in
            let folder = try PostgresSinkTests.folder(url: server.url)
            let first = try Self.startReplay(folder)
            let before = try await Self.waitForRows(expected.count / 3, in: server, while: first)
            kill(first.processIdentifier, SIGKILL)
            _ = try await Self.wait(first)
            #expect(before < expected.count, "the replay ended before it was killed")
            #expect(try await Self.wait(try Self.startReplay(folder)) == 0)
            let stored = try await server.psql("SELECT id FROM events")
            #expect(stored.count == expected.count && Set(stored) == expected)
        }
    }

    @Test func aDatabaseStoppedFor20SecondsMidReplayLosesNothing() async throws {
        let expected = try await Self.expectedIDs()
        try await PostgresServer.with { server in
            let folder = try PostgresSinkTests.folder(url: server.url, extra: "metrics:\n  textfile: calwatch.prom\n")
            let replay = try Self.startReplay(folder)
            let before = try await Self.waitForRows(expected.count / 4, in: server, while: replay)
            #expect(replay.isRunning && before < expected.count, "the replay ended before the database stopped")
            try await server.halt()
            try await Task.sleep(for: .seconds(20))
            try await server.startAgain()
            // The sink retried with backoff meanwhile; its last tries find the database back.
            #expect(try await Self.wait(replay) == 0)
            let stored = try await server.psql("SELECT id FROM events")
            #expect(stored.count == expected.count && Set(stored) == expected)
            // The metrics tell an operator: failed deliveries counted, nothing left behind.
            let metrics = try MetricsTests.samples(folder + "/calwatch.prom")
            let sink = "postgres:" + server.url
            #expect((metrics["calwatch_sink_failures_total{sink=\"\(sink)\"}"] ?? 0) >= 1, "\(metrics)")
            #expect(metrics["calwatch_sink_backlog_events{sink=\"\(sink)\"}"] == 0)
            #expect(metrics["calwatch_sink_delivered_events_total{sink=\"\(sink)\"}"] == Double(expected.count))
        }
    }

    @Test func eightWatchersDeliverIntoOneDatabaseAtOnce() async throws {
        try await PostgresServer.with { server in
            // Each watcher its own calendar and instance name, all at the same time.
            let calendars = [
                "calendars/work", "calendars/personal", "calendars/travel", "radicale/family", "caldav/report.xml",
                "calendars", "calendars/work", "calendars/travel",
            ].map { ReplayKillTests.samples + "/../" + $0 }
            let folders = try calendars.indices.map { index in
                try PostgresSinkTests.folder(
                    url: server.url, instance: "watcher-\(index)", extra: "  - type: jsonl\n    path: events.jsonl\n")
            }
            let year = ["--from", "2027-01-01", "--to", "2028-01-01", "--tz", "Europe/Berlin"]
            let processes = try zip(calendars, folders).map { calendar, folder in
                try CommandLineTests.startReplay(calendar, window: year, folder: folder)
            }
            for process in processes { #expect(try await Self.wait(process) == 0) }
            for (index, folder) in folders.enumerated() {
                // Creating the schema and each month's table together never failed a batch.
                let errors = try String(contentsOfFile: folder + "/errors", encoding: .utf8)
                #expect(!errors.contains("retrying"), "watcher \(index): \(errors)")
                let written = SinkFixtures.lines(folder + "/events.jsonl").map(ReplayKillTests.id)
                let stored = try await server.psql("SELECT id FROM events WHERE watcher = 'watcher-\(index)'")
                #expect(
                    !written.isEmpty && stored.count == written.count && Set(stored) == Set(written), "watcher \(index)"
                )
            }
        }
    }
}
