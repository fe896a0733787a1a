import Foundation

/// Writes events into a user-facing SQLite database (DESIGN §6): an `events` table and views for upcoming
/// reminders, flights and current live activities, meant to be read with the `sqlite3` shell or any SQLite
/// library while calwatch runs.
///
/// A row holds the occurrence in columns and the event's own details (reminder, live activity, flight, meeting) as
/// JSON in `data`, not the whole CloudEvents object: repeating the occurrence in every row tripled the database
/// and the work of writing it. Each batch is one transaction. An event is stored once however often it is delivered (a redelivery after a
/// crash is ignored), so the database holds every event exactly once. WAL lets readers query while calwatch
/// writes. Values are always bound, never formatted into SQL.
public actor SQLiteSink: EventSink {
    public nonisolated let name: String
    /// The database file.
    public nonisolated let path: String
    private let connection: SQLiteConnection
    private let insert: SQLiteStatement
    /// The row being inserted, its memory kept from one to the next.
    private var row = SQLiteRow()

    /// The layout of the tables and views; a database of another layout is refused rather than misread, except
    /// layout 1, whose occurrence index is rebuilt (`migrations`).
    static let schemaVersion: Int64 = 2

    /// What turns an older layout into this one, by the layout it starts from.
    static let migrations: [Int64: String] = [
        1: "DROP INDEX IF EXISTS events_by_occurrence;"
    ]

    /// Opens the database at `path`, creating it (mode 0600, its folders 0700) and its tables when missing.
    public init(path: String, name: String? = nil) throws {
        self.path = path
        self.name = name ?? "sqlite:" + path
        try SQLiteConnection.createPrivately(path: path)
        connection = try SQLiteConnection(path: path)
        if let found = try connection.otherLayout(than: Self.schemaVersion) {
            guard let migration = Self.migrations[found] else {
                throw SinkError(
                    sink: self.name,
                    reason: "\(path) was written by another calwatch version (layout \(found); this one writes "
                        + "\(Self.schemaVersion)); move it away or configure another path")
            }
            try connection.execute(migration)
        }
        try connection.execute(Self.schema)
        insert = try connection.prepare(
            """
            INSERT OR IGNORE INTO events (id, seq, type, time, subject, calendar, uid, recurrence_id, kind, summary,
                location, start, "end", recorded, expiry, data)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
            """)
    }

    /// The tables and views. Times are ISO 8601 UTC text (`2027-03-01T08:30:00Z`): readable in the shell, sorted
    /// as text, and compared with `strftime('%Y-%m-%dT%H:%M:%SZ', 'now')`.
    static let schema = """
        PRAGMA journal_mode = WAL;
        PRAGMA synchronous = NORMAL;
        PRAGMA user_version = \(schemaVersion);
        CREATE TABLE IF NOT EXISTS events (
            id TEXT NOT NULL,              -- the CloudEvents id: the same event always has the same id
            seq INTEGER NOT NULL,          -- the journal's sequence number
            type TEXT NOT NULL,            -- flightDetected, reminderDue, liveActivityStart/Update/End
            time TEXT NOT NULL,            -- when the event was due
            subject TEXT NOT NULL,         -- <uid>/<occurrence start>: one occurrence
            calendar TEXT NOT NULL,
            uid TEXT NOT NULL,
            recurrence_id TEXT,
            kind TEXT NOT NULL,            -- flight, meeting, event
            summary TEXT,
            location TEXT,
            start TEXT NOT NULL,           -- the occurrence's start and end
            "end" TEXT NOT NULL,
            recorded TEXT NOT NULL,        -- when calwatch emitted it
            expiry TEXT NOT NULL,          -- after this the event is stale
            data TEXT NOT NULL             -- reminder, liveActivity, flight, meeting as JSON (use json_extract);
                                           -- the occurrence part of the CloudEvents data is in the columns above;
                                           -- liveActivityUpdate rows have flight and meeting null
        );
        -- One row per event. Keyed by time first, the index grows at its end as time passes (an index on the id,
        -- a hash, alone would cost a random page per event); every id belongs to one scheduled time.
        CREATE UNIQUE INDEX IF NOT EXISTS events_once ON events (time, id);
        -- The views find an occurrence's events through this index. Keyed by start first, it grows near its end
        -- as time passes (keyed by subject, a random place per row, it cost an eighth of the speed); it leaves
        -- out the minute-by-minute updates, nineteen rows in twenty, which the views reach by time instead.
        CREATE INDEX IF NOT EXISTS events_by_occurrence ON events (start, subject)
            WHERE type <> 'liveActivityUpdate';

        -- The latest reminder of each occurrence that has not started yet.
        CREATE VIEW IF NOT EXISTS upcoming_reminders AS
            SELECT start, summary, kind, calendar, location,
                   json_extract(data, '$.reminder.minutesBefore') AS minutes_before,
                   json_extract(data, '$.meeting.joinURL') AS join_url,
                   time AS reminded_at, subject, id
            FROM events
            WHERE type = 'reminderDue' AND type <> 'liveActivityUpdate'
              AND start > strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
              AND seq = (SELECT MAX(seq) FROM events AS later
                         WHERE later.subject = events.subject AND later.start = events.start
                           AND later.type = 'reminderDue' AND later.type <> 'liveActivityUpdate')
            ORDER BY start;

        -- Each detected flight as last detected, with when to leave for the airport.
        CREATE VIEW IF NOT EXISTS flights AS
            SELECT json_extract(data, '$.flight.code') AS code,
                   json_extract(data, '$.flight.origin') AS origin,
                   json_extract(data, '$.flight.destination') AS destination,
                   COALESCE(json_extract(data, '$.flight.departure'), start) AS departure,
                   json_extract(data, '$.flight.arrival') AS arrival,
                   json_extract(data, '$.flight.leaveBy') AS leave_by,
                   json_extract(data, '$.flight.terminal') AS terminal,
                   json_extract(data, '$.flight.gate') AS gate,
                   summary, calendar, subject, time AS detected_at
            FROM events
            WHERE type = 'flightDetected' AND type <> 'liveActivityUpdate'
              AND seq = (SELECT MAX(seq) FROM events AS later
                         WHERE later.subject = events.subject AND later.start = events.start
                           AND later.type = 'flightDetected' AND later.type <> 'liveActivityUpdate')
            ORDER BY departure;

        -- Live activities started and not yet ended, with their last reported state.
        CREATE VIEW IF NOT EXISTS current_live_activities AS
            SELECT started.start, started."end", started.summary, started.kind, started.calendar,
                   json_extract(latest.data, '$.liveActivity.phase') AS phase,
                   json_extract(latest.data, '$.liveActivity.progress') AS progress,
                   json_extract(latest.data, '$.liveActivity.secondsToStart') AS seconds_to_start,
                   json_extract(latest.data, '$.liveActivity.secondsToEnd') AS seconds_to_end,
                   latest.time AS updated_at, started.subject
            FROM events AS started
            JOIN events AS latest ON latest.rowid = (
                SELECT rowid FROM events AS state
                WHERE state.time >= started.time AND state.subject = started.subject
                  AND state.start = started.start AND state.type IN ('liveActivityStart', 'liveActivityUpdate')
                ORDER BY state.time DESC, state.rowid DESC LIMIT 1)
            WHERE started.type = 'liveActivityStart' AND started.type <> 'liveActivityUpdate'
              AND NOT EXISTS (SELECT 1 FROM events AS ended
                              WHERE ended.subject = started.subject AND ended.start = started.start
                                AND ended.type = 'liveActivityEnd' AND ended.type <> 'liveActivityUpdate')
            ORDER BY started.start;
        """

    /// Stores a batch in one transaction; events already stored are skipped.
    public func deliver(_ batch: [JournalStore.Entry]) throws {
        do {
            try connection.transaction {
                for entry in batch {
                    let event = entry.event
                    row.reset()
                    row.append(event.id.description)
                    row.append(entry.sequence)
                    row.append(event.type.rawValue)
                    row.append(event.time)
                    row.append(event.subject)
                    row.append(event.key.calendar)
                    row.append(event.key.uid)
                    row.append(event.key.recurrenceID?.description)
                    row.append(entry.facts.kind.rawValue)
                    row.append(entry.occurrence?.summary)
                    row.append(entry.occurrence?.location)
                    row.append(event.occurrenceStart)
                    row.append(event.occurrenceEnd)
                    row.append(entry.recorded)
                    row.append(event.expiry)
                    // An update, one a minute, carries its live activity only; the occurrence's flight and meeting
                    // are on its other rows (repeating a Teams link every minute would double the database).
                    let facts = event.type == .liveActivityUpdate ? PlanningFacts.event : entry.facts
                    row.appendText { CloudEventJSON.writeDetails(event, facts: facts, to: &$0) }
                    try insert.run(row)
                }
            }
        } catch let error as SQLiteError {
            throw SinkError(sink: name, reason: "cannot write \(path): \(error.message)")
        }
    }
}
