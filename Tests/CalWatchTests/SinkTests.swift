import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// Test helpers shared by the sink suites: folders, the sample week's events as sinks receive them.
enum SinkFixtures {
    /// A new empty folder.
    static func folder() -> String {
        let path = TestFolders.path("calwatch-sink")
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Keeps every entry it is given.
    actor EntrySink: EventSink {
        nonisolated let name = "entries"
        var entries: [JournalStore.Entry] = []
        func deliver(_ batch: [JournalStore.Entry]) { entries += batch }
    }

    /// Wednesday 2027-03-03 of the sample calendars, as the sinks get it from a replay.
    static func wednesday() async throws -> [JournalStore.Entry] {
        let sink = EntrySink()
        try await ReplayTests.replay(
            journal: try ReplayTests.journal(), sinks: [sink], from: "2027-03-03", to: "2027-03-04")
        return await sink.entries
    }

    /// A hook script with `body`, executable.
    static func script(_ body: String, in folder: String, name: String = "hook.sh") -> String {
        let path = folder + "/" + name
        _ = FileManager.default.createFile(
            atPath: path, contents: Data(("#!/bin/sh\n" + body + "\n").utf8), attributes: [.posixPermissions: 0o755])
        return path
    }

    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
    }

    /// The rows of a query on a database, as text joined by `|`.
    static func rows(_ path: String, _ sql: String) throws -> [String] {
        let connection = try SQLiteConnection(path: path)
        let statement = try connection.prepare(sql)
        var rows: [String] = []
        while try statement.step() {
            rows.append((0..<statement.columns).map { statement.text($0) ?? "NULL" }.joined(separator: "|"))
        }
        return rows
    }
}

/// The JSON Lines file sink: appends with mode 0600, repairs what a crash left, never writes an event twice.
@Suite struct JSONLinesFileSinkTests {
    @Test func appendsOneLinePerEventToAPrivateFile() async throws {
        let entries = try await SinkFixtures.wednesday()
        let path = SinkFixtures.folder() + "/new/events.jsonl"
        let sink = try JSONLinesSink.file(path: path)
        try await sink.deliver(Array(entries[..<10]))
        try await sink.deliver(Array(entries[10...]))
        #expect(SinkFixtures.lines(path) == entries.map(\.json))
        #expect(SinkFixtures.mode(path) == 0o600)
        #expect(SinkFixtures.mode((path as NSString).deletingLastPathComponent) == 0o700)
    }

    @Test func aPartialLastLineFromACrashIsCutOffAndItsEventsWrittenAgain() async throws {
        let entries = try await SinkFixtures.wednesday()
        let path = SinkFixtures.folder() + "/events.jsonl"
        let complete = entries[..<3].map { $0.json + "\n" }.joined()
        let cut = String(entries[3].json.prefix(40))
        try (complete + cut).write(toFile: path, atomically: false, encoding: .utf8)
        let sink = try JSONLinesSink.file(path: path)
        #expect(sink.repairedBytes == cut.utf8.count)
        // The journal redelivers from the cursor: the batch that was being written when the crash came.
        try await sink.deliver(Array(entries[3..<8]))
        #expect(SinkFixtures.lines(path) == entries[..<8].map(\.json))
    }

    /// Pointed at someone's file whose last byte is not a newline: nothing of it is cut (only a partial line
    /// calwatch wrote is), and calwatch's lines start on a line of their own.
    @Test(arguments: ["notes without a final newline", "{\"specversion\":\"1.0\" but not ours", "{"])
    func aFileEndingInOtherTextKeepsEveryByte(ending: String) async throws {
        let entries = try await SinkFixtures.wednesday()
        let path = SinkFixtures.folder() + "/events.jsonl"
        let theirs = "a line of the user's\n" + ending
        try theirs.write(toFile: path, atomically: false, encoding: .utf8)
        let sink = try JSONLinesSink.file(path: path)
        #expect(sink.repairedBytes == 0)
        try await sink.deliver(Array(entries[..<3]))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == theirs + "\n" + entries[..<3].map { $0.json + "\n" }.joined())
    }

    @Test func eventsTheFileAlreadyEndsWithAreNotWrittenAgain() async throws {
        let entries = try await SinkFixtures.wednesday()
        let path = SinkFixtures.folder() + "/events.jsonl"
        try await JSONLinesSink.file(path: path).deliver(Array(entries[..<20]))
        // Killed before the cursor moved past 10..<20: the journal delivers them again, with more.
        let restarted = try JSONLinesSink.file(path: path)
        try await restarted.deliver(Array(entries[10..<30]))
        try await restarted.deliver(Array(entries[30...]))
        #expect(SinkFixtures.lines(path) == entries.map(\.json))
    }

    @Test func aFileWrittenFromAnotherJournalIsAppendedToNotSkipped() async throws {
        // Same sequence numbers, other events: only lines with the same sequence and id count as written.
        let entries = try await SinkFixtures.wednesday()
        let path = SinkFixtures.folder() + "/events.jsonl"
        try await JSONLinesSink.file(path: path).deliver(Array(entries[..<5]))
        let other = entries[5..<10].enumerated().map { offset, entry in
            JournalStore.Entry(
                sequence: Int64(offset + 1), event: entry.event, occurrence: entry.occurrence, facts: entry.facts,
                recorded: entry.recorded)
        }
        try await JSONLinesSink.file(path: path).deliver(other)
        #expect(SinkFixtures.lines(path).count == 10)
    }
}

/// The SQLite sink: a database users query while calwatch writes it.
@Suite struct SQLiteSinkTests {
    @Test func storesEveryEventOnceHoweverOftenItIsDelivered() async throws {
        let entries = try await SinkFixtures.wednesday()
        let path = SinkFixtures.folder() + "/data/events.db"
        let sink = try SQLiteSink(path: path)
        try await sink.deliver(Array(entries[..<50]))
        try await sink.deliver(Array(entries[25..<100]))  // a redelivery after a crash overlaps
        try await sink.deliver(Array(entries[100...]))
        try await sink.deliver(Array(entries[100...]))
        let rows = try SinkFixtures.rows(path, "SELECT id FROM events ORDER BY seq")
        #expect(rows == entries.map(\.event.id.description))
        #expect(SinkFixtures.mode(path) == 0o600)
        let typed = try SinkFixtures.rows(
            path,
            """
            SELECT type, summary, kind, calendar, json_extract(data, '$.reminder.minutesBefore') FROM events
            WHERE type = 'reminderDue' ORDER BY seq LIMIT 1
            """)
        #expect(typed == ["reminderDue|BA987 BER to LHR|event|Travel|30"])
    }

    @Test func currentLiveActivitiesShowWhatIsRunning() async throws {
        let entries = try await SinkFixtures.wednesday()
        let path = SinkFixtures.folder() + "/events.db"
        let sink = try SQLiteSink(path: path)
        // Up to 10:35 Berlin: the standup (moved to 10:30 that day) is running.
        let cut = entries.firstIndex { $0.event.time >= utc("2027-03-03T09:35:00Z") }!
        try await sink.deliver(Array(entries[..<cut]))
        let running = try SinkFixtures.rows(path, "SELECT summary, phase FROM current_live_activities")
        #expect(running == ["Team standup (late start)|inProgress"])
        try await sink.deliver(Array(entries[cut...]))
        #expect(try SinkFixtures.rows(path, "SELECT summary FROM current_live_activities").isEmpty)
        // The other views are valid SQL on the same data.
        _ = try SinkFixtures.rows(path, "SELECT * FROM upcoming_reminders")
        _ = try SinkFixtures.rows(path, "SELECT * FROM flights")
    }

    @Test func readersQueryWhileTheSinkWrites() async throws {
        let entries = try await SinkFixtures.wednesday()
        let path = SinkFixtures.folder() + "/events.db"
        let sink = try SQLiteSink(path: path)
        try await sink.deliver(Array(entries[..<100]))
        // A reader in the middle of a read transaction, like a `sqlite3` shell with a query open.
        let reader = try SQLiteConnection(path: path)
        try reader.execute("BEGIN")
        let count = try reader.prepare("SELECT count(*) FROM events")
        try count.step()
        #expect(count.integer(0) == 100)
        try await sink.deliver(Array(entries[100...]))  // WAL: the writer does not wait for the reader
        try reader.execute("COMMIT")
        #expect(try SinkFixtures.rows(path, "SELECT count(*) FROM events") == ["\(entries.count)"])
    }

    @Test func withKeepOnlyTheRecentEventsStayAndTheViewsStillWork() async throws {
        let path = SinkFixtures.folder() + "/events.db"
        let sink = try SQLiteSink(path: path, keep: 3 * 3600)
        let entries = try await SinkFixtures.wednesday()
        // Delivered as a replay delivers them: in batches, as time goes by.
        for start in stride(from: 0, to: entries.count, by: 64) {
            try await sink.deliver(Array(entries[start..<min(entries.count, start + 64)]))
        }
        let newest = entries.map(\.event.time.secondsSinceEpoch).max()!
        let kept = entries.filter { $0.event.time.secondsSinceEpoch >= newest - 3 * 3600 - 3600 }
        let rows = try SinkFixtures.rows(path, "SELECT count(*), min(time) FROM events")
        let stored = Int(rows[0].split(separator: "|")[0])!
        // Trimmed an hour of event time apart: between 3 and 4 hours stay, and nothing older.
        #expect(stored < entries.count)
        #expect(stored <= kept.count)
        #expect(String(rows[0].split(separator: "|")[1]) >= Instant(secondsSinceEpoch: newest - 4 * 3600).description)
        // No event lost its occurrence, and no occurrence is left without events.
        #expect(try SinkFixtures.rows(path, "SELECT count(*) FROM event_log") == ["\(stored)"])
        #expect(
            try SinkFixtures.rows(
                path, "SELECT count(*) FROM occurrences WHERE id NOT IN (SELECT occurrence FROM event_log)") == ["0"])
    }

    @Test func aDatabaseOfTheFirstLayoutIsKeptBesideTheNewTables() async throws {
        let path = SinkFixtures.folder() + "/events.db"
        let old = try SQLiteConnection(path: path)
        try old.execute(
            """
            CREATE TABLE events (id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, time TEXT NOT NULL,
                subject TEXT NOT NULL, calendar TEXT NOT NULL, uid TEXT NOT NULL, recurrence_id TEXT,
                kind TEXT NOT NULL, summary TEXT, location TEXT, start TEXT NOT NULL, "end" TEXT NOT NULL,
                recorded TEXT NOT NULL, expiry TEXT NOT NULL, data TEXT NOT NULL);
            CREATE UNIQUE INDEX events_once ON events (time, id);
            CREATE INDEX events_by_occurrence ON events (subject, start) WHERE type <> 'liveActivityUpdate';
            INSERT INTO events VALUES ('kept', 1, 'reminderDue', '2027-03-03T08:00:00Z', 'u/2027-03-03T08:30:00Z',
                'Work', 'u', NULL, 'event', 'Old row', NULL, '2027-03-03T08:30:00Z', '2027-03-03T09:00:00Z',
                '2027-03-03T08:00:00Z', '2027-03-03T08:30:00Z', '{}');
            PRAGMA user_version = 1;
            """)
        let sink = try SQLiteSink(path: path)
        let entries = try await SinkFixtures.wednesday()
        try await sink.deliver(entries)
        #expect(
            try SinkFixtures.rows(path, "SELECT summary FROM events_before_layout3 WHERE id = 'kept'") == ["Old row"])
        #expect(try SinkFixtures.rows(path, "PRAGMA user_version") == ["\(SQLiteSink.schemaVersion)"])
        #expect(try SinkFixtures.rows(path, "SELECT count(*) FROM events") == ["\(entries.count)"])
    }

    @Test func aDatabaseOfAnotherLayoutIsRefusedWithTheFix() throws {
        let path = SinkFixtures.folder() + "/events.db"
        let connection = try SQLiteConnection(path: path)
        try connection.execute("CREATE TABLE events (x); PRAGMA user_version = 7;")
        #expect {
            try SQLiteSink(path: path)
        } throws: { error in
            "\(error)".contains("layout 7") && "\(error)".contains("configure another path")
        }
    }
}
