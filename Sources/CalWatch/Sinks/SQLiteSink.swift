import Foundation

/// Writes events into a user-facing SQLite database (DESIGN §6): an `events` table and views for upcoming
/// reminders, flights and current live activities, meant to be read with the `sqlite3` shell or any SQLite
/// library while calwatch runs.
///
/// Each batch is one transaction. An event is stored once however often it is delivered (a redelivery after a
/// crash is ignored), so the database holds every event exactly once. WAL lets readers query while calwatch
/// writes. Values are always bound, never formatted into SQL.
public actor SQLiteSink: EventSink {
    public nonisolated let name: String
    /// The database file.
    public nonisolated let path: String
    private let connection: SQLiteConnection
    private let insert: SQLiteStatement

    /// The layout of the tables and views; a database of another layout is refused rather than misread.
    static let schemaVersion: Int64 = 1

    /// Opens the database at `path`, creating it (mode 0600, its folders 0700) and its tables when missing.
    public init(path: String, name: String? = nil) throws {
        self.path = path
        self.name = name ?? "sqlite:" + path
        try SQLiteConnection.createPrivately(path: path)
        connection = try SQLiteConnection(path: path)
        if let found = try connection.otherLayout(than: Self.schemaVersion) {
            throw SinkError(
                sink: self.name,
                reason: "\(path) was written by another calwatch version (layout \(found); this one writes "
                    + "\(Self.schemaVersion)); move it away or configure another path")
        }
        try connection.execute(Self.schema)
        insert = try connection.prepare(
            """
            INSERT OR IGNORE INTO events (id, seq, type, time, subject, calendar, uid, recurrence_id, kind, summary,
                start, "end", recorded, expiry, data)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
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
            start TEXT NOT NULL,           -- the occurrence's start and end
            "end" TEXT NOT NULL,
            recorded TEXT NOT NULL,        -- when calwatch emitted it
            expiry TEXT NOT NULL,          -- after this the event is stale
            data TEXT NOT NULL             -- the CloudEvents data object as JSON (use json_extract)
        );
        -- One row per event. Keyed by time first, the index grows at its end as time passes (an index on the id,
        -- a hash, alone would cost a random page per event); every id belongs to one scheduled time.
        CREATE UNIQUE INDEX IF NOT EXISTS events_once ON events (time, id);
        -- The views find an occurrence's latest event through its start (which grows with time, like `time`).
        CREATE INDEX IF NOT EXISTS events_by_start ON events (start);

        -- The latest reminder of each occurrence that has not started yet.
        CREATE VIEW IF NOT EXISTS upcoming_reminders AS
            SELECT start, summary, kind, calendar,
                   json_extract(data, '$.reminder.minutesBefore') AS minutes_before,
                   json_extract(data, '$.meeting.joinURL') AS join_url,
                   time AS reminded_at, subject, id
            FROM events
            WHERE type = 'reminderDue' AND start > strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
              AND seq = (SELECT MAX(seq) FROM events AS later
                         WHERE later.start = events.start AND later.subject = events.subject
                           AND later.type = 'reminderDue')
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
            WHERE type = 'flightDetected'
              AND seq = (SELECT MAX(seq) FROM events AS later
                         WHERE later.start = events.start AND later.subject = events.subject
                           AND later.type = 'flightDetected')
            ORDER BY departure;

        -- Live activities started and not yet ended, with their last reported state.
        CREATE VIEW IF NOT EXISTS current_live_activities AS
            SELECT start, "end", summary, kind, calendar,
                   json_extract(data, '$.liveActivity.phase') AS phase,
                   json_extract(data, '$.liveActivity.progress') AS progress,
                   json_extract(data, '$.liveActivity.secondsToStart') AS seconds_to_start,
                   json_extract(data, '$.liveActivity.secondsToEnd') AS seconds_to_end,
                   time AS updated_at, subject
            FROM events
            WHERE type IN ('liveActivityStart', 'liveActivityUpdate')
              AND seq = (SELECT MAX(seq) FROM events AS later
                         WHERE later.start = events.start AND later.subject = events.subject
                           AND later.type IN ('liveActivityStart', 'liveActivityUpdate', 'liveActivityEnd'))
            ORDER BY start;
        """

    /// Stores a batch in one transaction; events already stored are skipped.
    public func deliver(_ batch: [JournalStore.Entry]) throws {
        do {
            try connection.transaction {
                for entry in batch {
                    let event = entry.event
                    try insert.bind([
                        .text(event.id.description), .integer(entry.sequence), .text(event.type.rawValue),
                        .text(event.time.description), .text(event.subject), .text(event.key.calendar),
                        .text(event.key.uid), event.key.recurrenceID.map { .text($0.description) } ?? .null,
                        .text(entry.facts.kind.rawValue), entry.occurrence?.summary.map { .text($0) } ?? .null,
                        .text(event.occurrenceStart.description), .text(event.occurrenceEnd.description),
                        .text(entry.recorded.description), .text(event.expiry.description),
                        .text(String(entry.dataJSON)),
                    ])
                    try insert.step()
                }
            }
        } catch let error as SQLiteError {
            throw SinkError(sink: name, reason: "cannot write \(path): \(error.message)")
        }
    }
}
