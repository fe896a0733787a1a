import CalWatchCore
import Foundation

/// Writes events into a user-facing SQLite database (docs/design.md §6), meant to be read with the `sqlite3` shell or any
/// SQLite library while calwatch runs: an `events` view with every event (id, seq, type, time, subject, calendar,
/// uid, kind, summary, start, end, data as JSON, …) and views for upcoming reminders, flights and current live
/// activities.
///
/// Underneath, each occurrence is stored once (`occurrences`, a new row when it changes) and each event as a
/// short row pointing to it (`event_log`): repeating the occurrence in every event, twenty times an hour for a
/// live activity, made the database three times larger and its writing the slowest part of a replay. Each batch
/// is one transaction. An event is stored once however often it is delivered (a redelivery after a crash is
/// ignored), so the database holds every event exactly once. WAL lets readers query while calwatch writes.
/// Values are always bound, never formatted into SQL. Its SQLite calls run on a thread of its own
/// (`BlockingExecutor`), never on the cooperative pool.
public actor SQLiteSink: EventSink {
    public nonisolated let name: String
    private let executor = BlockingExecutor(name: "calwatch-sqlite")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// The database file.
    public nonisolated let path: String
    private let connection: SQLiteConnection
    private let insertEvent: SQLiteStatement
    private let insertOccurrence: SQLiteStatement
    private let findOccurrence: SQLiteStatement
    /// The row being inserted, its memory kept from one to the next.
    private var row = SQLRow()
    /// Occurrence rows already stored, by the occurrence as planned. An entry keeps its occurrence's source alive,
    /// so no other source can take its identifier. Emptied at 4,096 (a miss only looks the row up; the events
    /// of a moment concern far fewer occurrences): kept for a year it held 20 MB.
    private var occurrenceRows: [OccurrenceRowKey: (source: OccurrenceSource?, id: Int64)] = [:]

    private struct OccurrenceRowKey: Hashable {
        var source: ObjectIdentifier?
        var start: Int64
        var end: Int64
        var kind: OccurrenceFacts.Kind
        /// Only for an occurrence gone from the calendars (no source): its calendar and UID.
        var calendar = ""
        var uid = ""
    }

    /// The layout of the tables and views; a database of another layout is refused rather than misread, except
    /// layouts 1 and 2 (one wide `events` table), which are kept as `events_before_layout3` beside the new tables,
    /// and layout 3, whose `conflicts` view read only the first occurrence a conflict names.
    static let schemaVersion: Int64 = 4

    /// What turns an older layout into this one, by the layout it starts from.
    static let migrations: [Int64: String] = [
        1: keepOldEvents, 2: keepOldEvents, 3: "DROP VIEW IF EXISTS conflicts;",
    ]
    private static let keepOldEvents = """
        DROP VIEW IF EXISTS upcoming_reminders; DROP VIEW IF EXISTS flights; DROP VIEW IF EXISTS current_live_activities;
        ALTER TABLE events RENAME TO events_before_layout3;
        """

    /// How long events are kept, counted back from the newest stored (`nil`: for ever).
    private let keep: Int64?
    private let trimEvents: SQLiteStatement
    private let trimOccurrences: SQLiteStatement
    /// The newest event time at the last trim; trims come an hour of event time apart.
    private var trimmedAt: Int64?

    /// Opens the database at `path`, creating it (mode 0600, its folders 0700) and its tables when missing.
    /// With `keep`, events older than that many seconds before the newest are deleted as new ones come.
    public init(path: String, name: String? = nil, keep: Int64? = nil) throws {
        self.path = path
        self.name = name ?? "sqlite:" + path
        self.keep = keep
        try SQLiteConnection.createPrivately(path: path)
        connection = try SQLiteConnection(path: path)
        if let found = try connection.otherLayout(than: Self.schemaVersion, sharing: "events") {
            guard let migration = Self.migrations[found] else {
                throw SinkError(
                    sink: self.name,
                    reason: "\(path) was written by another calwatch version (layout \(found); this one writes "
                        + "\(Self.schemaVersion)); move it away or configure another path")
            }
            try connection.execute(migration)
        }
        try connection.execute(Self.schema)
        insertEvent = try connection.prepare(
            """
            INSERT OR IGNORE INTO event_log (id, seq, type, time, occurrence, recorded, expiry, details)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
        insertOccurrence = try connection.prepare(
            """
            INSERT OR IGNORE INTO occurrences (calendar, uid, recurrence_id, kind, summary, location, start, "end",
                flight, meeting, subject, version)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, json_extract(?9, '$.flight'), json_extract(?9, '$.meeting'), ?10, ?11)
            """)
        findOccurrence = try connection.prepare("SELECT id FROM occurrences WHERE subject = ?1 AND version = ?2")
        trimEvents = try connection.prepare("DELETE FROM event_log WHERE time < ?1")
        // Every event of an occurrence is due by its end (reminders and detection before the start, the live
        // activity's end at the end), so an occurrence that ended before the cut-off has no events left.
        trimOccurrences = try connection.prepare(#"DELETE FROM occurrences WHERE "end" < ?1"#)
    }

    /// The tables and views. Times are ISO 8601 UTC text (`2027-03-01T08:30:00Z`): readable in the shell, sorted
    /// as text, and compared with `strftime('%Y-%m-%dT%H:%M:%SZ', 'now')`.
    static let schema = """
        PRAGMA journal_mode = WAL;
        PRAGMA synchronous = NORMAL;
        PRAGMA user_version = \(schemaVersion);
        -- Each occurrence as the calendars had it when an event about it was emitted; a changed one (moved,
        -- renamed, reclassified) is a new row.
        CREATE TABLE IF NOT EXISTS occurrences (
            id INTEGER PRIMARY KEY,
            subject TEXT NOT NULL,         -- <uid>/<occurrence start or RECURRENCE-ID>
            version INTEGER NOT NULL,      -- a hash of the columns below
            calendar TEXT NOT NULL,
            uid TEXT NOT NULL,
            recurrence_id TEXT,
            kind TEXT NOT NULL,            -- flight, meeting, event
            summary TEXT,
            location TEXT,
            start TEXT NOT NULL,
            "end" TEXT NOT NULL,
            flight TEXT,                   -- the flight object of the event data, as JSON, or NULL
            meeting TEXT                   -- the meeting object, as JSON, or NULL
        );
        CREATE UNIQUE INDEX IF NOT EXISTS occurrences_once ON occurrences (subject, version);
        CREATE INDEX IF NOT EXISTS occurrences_by_end ON occurrences ("end");
        CREATE TABLE IF NOT EXISTS event_log (
            id TEXT NOT NULL,              -- the CloudEvents id: the same event always has the same id
            seq INTEGER NOT NULL,          -- the journal's sequence number
            type TEXT NOT NULL,            -- flightDetected, reminderDue, liveActivityStart/Update/End
            time TEXT NOT NULL,            -- when the event was due
            occurrence INTEGER NOT NULL,   -- occurrences.id
            recorded TEXT NOT NULL,        -- when calwatch emitted it
            expiry TEXT NOT NULL,          -- after this the event is stale
            details TEXT NOT NULL          -- {"reminder":{…}} or {"liveActivity":{…}} or {}
        );
        -- One row per event. Keyed by time first, the index grows at its end as time passes (an index on the id,
        -- a hash, alone would cost a random page per event); every id belongs to one scheduled time.
        CREATE UNIQUE INDEX IF NOT EXISTS event_log_once ON event_log (time, id);
        -- The views find an occurrence's events through this index, which grows at its end too; it leaves out
        -- the minute-by-minute updates, nineteen rows in twenty, which the views reach by time instead.
        CREATE INDEX IF NOT EXISTS event_log_by_occurrence ON event_log (occurrence)
            WHERE type <> 'liveActivityUpdate';

        -- Every event with its occurrence, `data` as in the CloudEvents object (reminder or liveActivity, flight,
        -- meeting; the occurrence itself is in the columns).
        CREATE VIEW IF NOT EXISTS events AS
            SELECT e.id, e.seq, e.type, e.time, o.subject, o.calendar, o.uid, o.recurrence_id, o.kind, o.summary,
                   o.location, o.start, o."end", e.recorded, e.expiry,
                   json_insert(e.details, '$.flight', json(o.flight), '$.meeting', json(o.meeting)) AS data,
                   e.occurrence
            FROM event_log AS e JOIN occurrences AS o ON o.id = e.occurrence;

        -- The latest reminder of each occurrence that has not started yet.
        CREATE VIEW IF NOT EXISTS upcoming_reminders AS
            SELECT o.start, o.summary, o.kind, o.calendar, o.location,
                   json_extract(e.details, '$.reminder.minutesBefore') AS minutes_before,
                   json_extract(o.meeting, '$.joinURL') AS join_url,
                   e.time AS reminded_at, o.subject, e.id
            FROM event_log AS e JOIN occurrences AS o ON o.id = e.occurrence
            WHERE e.type = 'reminderDue' AND e.type <> 'liveActivityUpdate'
              AND o.start > strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
              AND e.seq = (SELECT MAX(later.seq) FROM occurrences AS version
                           JOIN event_log AS later ON later.occurrence = version.id
                           WHERE version.subject = o.subject AND version.start = o.start
                             AND later.type = 'reminderDue' AND later.type <> 'liveActivityUpdate')
            ORDER BY o.start;

        -- Each detected flight as last detected, with when to leave for the airport.
        CREATE VIEW IF NOT EXISTS flights AS
            SELECT json_extract(o.flight, '$.code') AS code,
                   json_extract(o.flight, '$.origin') AS origin,
                   json_extract(o.flight, '$.destination') AS destination,
                   COALESCE(json_extract(o.flight, '$.departure'), o.start) AS departure,
                   json_extract(o.flight, '$.arrival') AS arrival,
                   json_extract(o.flight, '$.leaveBy') AS leave_by,
                   json_extract(o.flight, '$.terminal') AS terminal,
                   json_extract(o.flight, '$.gate') AS gate,
                   o.summary, o.calendar, o.subject, e.time AS detected_at
            FROM event_log AS e JOIN occurrences AS o ON o.id = e.occurrence
            WHERE e.type = 'flightDetected' AND e.type <> 'liveActivityUpdate'
              AND e.seq = (SELECT MAX(later.seq) FROM occurrences AS version
                           JOIN event_log AS later ON later.occurrence = version.id
                           WHERE version.subject = o.subject
                             AND later.type = 'flightDetected' AND later.type <> 'liveActivityUpdate')
            ORDER BY departure;

        -- Live activities started and not yet ended, with their last reported state.
        CREATE VIEW IF NOT EXISTS current_live_activities AS
            SELECT o.start, o."end", o.summary, o.kind, o.calendar,
                   json_extract(latest.details, '$.liveActivity.phase') AS phase,
                   json_extract(latest.details, '$.liveActivity.progress') AS progress,
                   json_extract(latest.details, '$.liveActivity.secondsToStart') AS seconds_to_start,
                   json_extract(latest.details, '$.liveActivity.secondsToEnd') AS seconds_to_end,
                   latest.time AS updated_at, o.subject
            FROM event_log AS started JOIN occurrences AS o ON o.id = started.occurrence
            JOIN event_log AS latest ON latest.rowid = (
                SELECT state.rowid FROM event_log AS state
                WHERE state.time >= started.time AND state.type IN ('liveActivityStart', 'liveActivityUpdate')
                  AND state.occurrence IN (SELECT id FROM occurrences WHERE subject = o.subject AND start = o.start)
                ORDER BY state.time DESC, state.rowid DESC LIMIT 1)
            WHERE started.type = 'liveActivityStart' AND started.type <> 'liveActivityUpdate'
              AND NOT EXISTS (SELECT 1 FROM occurrences AS version
                              JOIN event_log AS ended ON ended.occurrence = version.id
                              WHERE version.subject = o.subject AND version.start = o.start
                                AND ended.type = 'liveActivityEnd' AND ended.type <> 'liveActivityUpdate')
            ORDER BY o.start;

        -- Each pair of overlapping occurrences as last reported: a conflict names every occurrence that starts after
        -- its own and overlaps it (`with`, then `alsoWith`), and is reported again when any of them changes.
        CREATE VIEW IF NOT EXISTS conflicts AS
            SELECT o.start, o."end", o.summary, o.calendar, o.subject,
                   json_extract(other.value, '$.uid') AS with_uid,
                   json_extract(other.value, '$.summary') AS with_summary,
                   json_extract(other.value, '$.start') AS with_start,
                   json_extract(other.value, '$.end') AS with_end,
                   (strftime('%s', min(o."end", json_extract(other.value, '$.end')))
                       - strftime('%s', json_extract(other.value, '$.start'))) / 60 AS overlap_minutes,
                   e.time AS detected_at, e.id
            FROM event_log AS e JOIN occurrences AS o ON o.id = e.occurrence,
                 json_each(json_insert(coalesce(json_extract(e.details, '$.conflict.alsoWith'), json('[]')), '$[#]',
                                       json(json_extract(e.details, '$.conflict.with')))) AS other
            WHERE e.type = 'conflictDetected' AND e.type <> 'liveActivityUpdate'
              AND NOT EXISTS (SELECT 1 FROM event_log AS later JOIN occurrences AS version
                                ON version.id = later.occurrence,
                              json_each(json_insert(
                                  coalesce(json_extract(later.details, '$.conflict.alsoWith'), json('[]')), '$[#]',
                                  json(json_extract(later.details, '$.conflict.with')))) AS named
                              WHERE later.type = 'conflictDetected' AND later.type <> 'liveActivityUpdate'
                                AND version.subject = o.subject AND later.seq > e.seq
                                AND json_extract(named.value, '$.uid') = json_extract(other.value, '$.uid'))
            ORDER BY o.start;

        -- Each agenda sent, one row per item in its order.
        CREATE VIEW IF NOT EXISTS agenda AS
            SELECT json_extract(e.details, '$.agenda.date') AS date, item.key AS position,
                   json_extract(item.value, '$.start') AS start, json_extract(item.value, '$.end') AS "end",
                   json_extract(item.value, '$.summary') AS summary, json_extract(item.value, '$.kind') AS kind,
                   json_extract(item.value, '$.calendar') AS calendar,
                   json_extract(item.value, '$.joinUrl') AS join_url,
                   json_extract(item.value, '$.allDay') AS all_day,
                   json_extract(item.value, '$.leaveBy') AS leave_by,
                   json_extract(item.value, '$.participation') AS participation,
                   json_extract(item.value, '$.conflicts') AS conflicts,
                   e.time AS sent_at, e.id
            FROM event_log AS e, json_each(e.details, '$.agenda.items') AS item
            WHERE e.type = 'agendaDue' AND e.type <> 'liveActivityUpdate'
            ORDER BY date, position;
        """

    /// Stores a batch in one transaction; events already stored are skipped.
    /// The stored event with the highest sequence number: the row stored last, since events arrive in sequence
    /// order and trimming removes the oldest (by rowid, one step of the table's b-tree, not a scan of every row).
    public func newestRecord() throws -> SinkRecord? {
        let statement = try connection.prepare("SELECT seq, id FROM event_log ORDER BY rowid DESC LIMIT 1")
        guard try statement.step(), let id = statement.text(1) else { return nil }
        return SinkRecord(sequence: statement.integer(0), id: id)
    }

    public func deliver(_ batch: [JournalStore.Entry]) throws {
        do {
            try connection.transaction {
                for entry in batch {
                    let event = entry.event
                    let occurrence = try occurrenceRow(entry)
                    row.reset()
                    row.append(event.id)
                    row.append(entry.sequence)
                    row.append(event.type.rawValue)
                    row.append(event.time)
                    row.append(occurrence)
                    row.append(entry.recorded)
                    row.append(event.expiry)
                    row.appendText {
                        CloudEventJSON.writeDetails(event, facts: .event, flightAndMeeting: false, to: &$0)
                    }
                    try insertEvent.run(row)
                }
                if let keep, let newest = batch.last?.event.time.secondsSinceEpoch,
                    trimmedAt.map({ newest - $0 >= 3600 }) ?? true
                {
                    try trim(before: Instant(secondsSinceEpoch: newest - keep))
                    trimmedAt = newest
                }
            }
        } catch let error as SQLiteError {
            throw SinkError(sink: name, reason: "cannot write \(path): \(error.message)")
        }
    }

    /// Deletes the events due before `cutOff` and the occurrences that ended before it, in the batch's
    /// transaction.
    private func trim(before cutOff: Instant) throws {
        row.reset()
        row.append(cutOff)
        try trimEvents.run(row)
        try trimOccurrences.run(row)
        // A cached row may be gone now.
        occurrenceRows.removeAll(keepingCapacity: true)
    }

    /// The `occurrences` row of an entry's occurrence as planned, stored when new.
    private func occurrenceRow(_ entry: JournalStore.Entry) throws -> Int64 {
        let event = entry.event
        var key = OccurrenceRowKey(
            source: entry.occurrence.map { ObjectIdentifier($0.source) },
            start: event.occurrenceStart.secondsSinceEpoch, end: event.occurrenceEnd.secondsSinceEpoch,
            kind: entry.facts.kind)
        if entry.occurrence == nil {
            key.calendar = event.key.calendar
            key.uid = event.key.uid
        }
        if let stored = occurrenceRows[key] { return stored.id }
        let subject = event.subject
        row.reset()
        row.appendOccurrenceColumns(of: entry)
        // The version is the hash of the columns so far; the subject follows from them.
        let version = row.contentHash
        row.append(subject)
        row.append(version)
        try insertOccurrence.run(row)
        row.reset()
        row.append(subject)
        row.append(version)
        guard let id = try findOccurrence.firstInteger(row) else {
            throw SQLiteError(code: .notFound, message: "the occurrence row of \(subject) was not stored")
        }
        if occurrenceRows.count >= 4096 { occurrenceRows.removeAll(keepingCapacity: true) }
        occurrenceRows[key] = (entry.occurrence?.source, id)
        return id
    }
}
