import Foundation

/// The journal: every emitted event with its deterministic id and increasing sequence number, and each sink's
/// cursor, in a SQLite state database (WAL). It is the single source of truth for "already emitted": an event
/// is committed here before any sink sees it, and a restart rebuilds the planner's state from it.
///
/// Not `Sendable` (it owns a connection); the pipeline gives it to one actor.
public final class JournalStore {
    private let connection: SQLiteConnection
    private let insert: SQLiteStatement
    /// The path of the database file.
    public let path: String

    /// One committed event.
    public struct Entry: Sendable {
        public var sequence: Int64
        /// The event, when it was planned in this run (`nil` when read back from the journal).
        public var event: PlannedEvent?
        /// The event as sinks receive it (one JSON object, no newline).
        public var json: String
    }

    /// Opens the journal at `path`, creating it (and its folders, mode 0700) with mode 0600 when missing.
    public init(path: String) throws {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        if !FileManager.default.fileExists(atPath: path) {
            // Created here so that SQLite (and its -wal and -shm files, which copy the mode) never make it readable.
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            else { throw SQLiteError(code: 14, message: "cannot create \(path)") }
        }
        connection = try SQLiteConnection(path: path)
        try connection.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = NORMAL;
            CREATE TABLE IF NOT EXISTS events (
                seq INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                type TEXT NOT NULL,
                calendar TEXT NOT NULL,
                uid TEXT NOT NULL,
                recurrence_id TEXT,
                occurrence_start INTEGER NOT NULL,
                occurrence_end INTEGER NOT NULL,
                time INTEGER NOT NULL,
                expiry INTEGER NOT NULL,
                fingerprint TEXT NOT NULL,
                recorded INTEGER NOT NULL,
                json TEXT NOT NULL
            );
            CREATE TABLE IF NOT EXISTS sink_cursors (sink TEXT PRIMARY KEY, seq INTEGER NOT NULL);
            """)
        insert = try connection.prepare(
            """
            INSERT OR IGNORE INTO events (seq, id, type, calendar, uid, recurrence_id, occurrence_start,
                occurrence_end, time, expiry, fingerprint, recorded, json)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
            """)
    }

    /// Commits events in one transaction, in order, skipping any whose id is already journaled; `render` gives
    /// each event's JSON for its sequence number. Returns what was committed.
    public func append(
        _ events: [PlannedEvent], recorded: Instant, render: (PlannedEvent, Int64) -> String
    ) throws -> [Entry] {
        try connection.transaction {
            var next = try lastSequence() + 1
            var committed: [Entry] = []
            for event in events {
                let json = render(event, next)
                try insert.bind([
                    .integer(next), .text(event.id), .text(event.type.rawValue), .text(event.key.calendar),
                    .text(event.key.uid), event.key.recurrenceID.map { .text($0.description) } ?? .null,
                    .integer(event.occurrenceStart.secondsSinceEpoch), .integer(event.occurrenceEnd.secondsSinceEpoch),
                    .integer(event.time.secondsSinceEpoch), .integer(event.expiry.secondsSinceEpoch),
                    .text(event.fingerprint), .integer(recorded.secondsSinceEpoch), .text(json),
                ])
                try insert.step()
                guard insert.changes == 1 else { continue }  // already journaled: never twice
                committed.append(Entry(sequence: next, event: event, json: json))
                next += 1
            }
            return committed
        }
    }

    /// The highest sequence number, 0 for an empty journal.
    public func lastSequence() throws -> Int64 {
        let statement = try connection.prepare("SELECT COALESCE(MAX(seq), 0) FROM events")
        try statement.step()
        return statement.integer(0)
    }

    /// The planner's state: every journaled event applied in sequence order.
    public func plannerState() throws -> PlannerState {
        var state = PlannerState()
        let statement = try connection.prepare(
            """
            SELECT id, type, calendar, uid, recurrence_id, occurrence_start, occurrence_end, time, expiry,
                fingerprint FROM events ORDER BY seq
            """)
        while try statement.step() {
            guard let type = statement.text(1).flatMap(EventType.init(rawValue:)) else { continue }
            let key = OccurrenceKey(
                calendar: statement.text(2) ?? "", uid: statement.text(3) ?? "",
                recurrenceID: statement.text(4).flatMap(DateValueText.init(text:)))
            state.apply(
                PlannedEvent(
                    type: type, id: statement.text(0) ?? "", key: key,
                    occurrenceStart: Instant(secondsSinceEpoch: statement.integer(5)),
                    occurrenceEnd: Instant(secondsSinceEpoch: statement.integer(6)),
                    time: Instant(secondsSinceEpoch: statement.integer(7)),
                    expiry: Instant(secondsSinceEpoch: statement.integer(8)), reminder: nil, liveActivity: nil,
                    fingerprint: statement.text(9) ?? ""))
        }
        return state
    }

    /// Journaled events after `sequence`, in order, at most `limit`: how a lagging sink catches up.
    public func entries(after sequence: Int64, limit: Int) throws -> [(sequence: Int64, json: String)] {
        let statement = try connection.prepare("SELECT seq, json FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2")
        try statement.bind([.integer(sequence), .integer(Int64(limit))])
        var rows: [(Int64, String)] = []
        while try statement.step() { rows.append((statement.integer(0), statement.text(1) ?? "")) }
        return rows
    }

    /// The last sequence a sink has fully handled (0 when it has handled nothing).
    public func cursor(for sink: String) throws -> Int64 {
        let statement = try connection.prepare("SELECT seq FROM sink_cursors WHERE sink = ?1")
        try statement.bind([.text(sink)])
        return try statement.step() ? statement.integer(0) : 0
    }

    /// Records that a sink has handled everything up to `sequence`.
    public func setCursor(_ sequence: Int64, for sink: String) throws {
        let statement = try connection.prepare(
            "INSERT INTO sink_cursors (sink, seq) VALUES (?1, ?2) ON CONFLICT(sink) DO UPDATE SET seq = excluded.seq")
        try statement.bind([.text(sink), .integer(sequence)])
        try statement.step()
    }

    /// SQLite's journal mode (`wal` once opened).
    var journalMode: String {
        guard let statement = try? connection.prepare("PRAGMA journal_mode"), (try? statement.step()) == true else {
            return ""
        }
        return statement.text(0) ?? ""
    }
}
