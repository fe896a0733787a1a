import CSQLite
public import CalWatchCore
import Foundation

/// The journal: every emitted event with its deterministic id and increasing sequence number, and each sink's
/// cursor, in a SQLite state database (WAL). It is the single source of truth for "already emitted": an event
/// is committed here before any sink sees it, and a restart rebuilds the planner's state from it.
///
/// A row holds the event itself (type, key, instants, reminder and live-activity details), not its JSON: the JSON
/// repeats the whole occurrence and is ten times larger, and writing it twice (WAL, then database) was most of the
/// cost of a replay. A sink that must catch up gets the event back and renders it again.
///
/// It stays bounded: rows every sink has handled are pruned a while after they expire (`prune`), and the journal
/// remembers up to when it pruned, so a later run never plans that time again.
///
/// Shared by the planner and the sinks' consumers as an actor on a thread of its own (`BlockingExecutor`): its
/// SQLite calls block that thread, never the cooperative pool, and the connection never leaves it.
public actor JournalStore {
    private let executor = BlockingExecutor(name: "calwatch-journal")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// The database itself; what reads or changes it goes through `connection`, which writes held rows first.
    private let database: SQLiteConnection
    private let insert: SQLiteStatement
    /// `insert` of `chunkRows` rows at once, without OR IGNORE.
    private let insertChunk: SQLiteStatement
    /// The row being inserted, its memory kept from one to the next.
    private var row = SQLRow()
    /// Rows in `events`, counted once and then kept up to date, for the journal-rows metric.
    private var rows: Int64?
    /// The path of the database file.
    public nonisolated let path: String
    /// A throwaway journal's rows numbered and not yet written; `nil` for a journal that writes every row at once.
    private var held: HeldRows?
    /// A throwaway journal's next sequence number: it may not have written the last one.
    private var nextSequence: Int64 = 1
    /// Events a throwaway journal holds back at most; older ones are written (a sink lagging that far will read
    /// them back): 32 batches of a replay.
    private static let heldLimit = 65_536

    /// The layout of the tables; a journal of another layout is refused rather than misread, except the ones
    /// `migrations` turns into this one (layout 2 kept `recorded` in seconds; 3 keeps milliseconds and the hook
    /// retries waiting; 4 has event ids without the calendar, see `rehashReminders`).
    static let schemaVersion: Int64 = 5
    /// What turns layout N into N + 1, applied in turn (5 adds the answers' columns, `addedColumns`, and their inbox).
    static let migrations: [Int64: String] = [
        2: "UPDATE events SET recorded = recorded * 1000;", 3: "",
        4: "",
    ]

    /// Columns added to `events` since layout 4, added to a journal that lacks them (`CREATE TABLE IF NOT EXISTS`
    /// leaves an existing table as it is).
    static let addedColumns = [
        ("answered", "TEXT"), ("answer_until", "INTEGER"), ("answer_count", "INTEGER"), ("deferred_from", "INTEGER"),
        ("detail", "TEXT"), ("scope", "TEXT"),
    ]

    /// One committed event as sinks receive it: the event, the occurrence it is about as the calendars have it
    /// now, and what classification found about it. Its fields never change, so the JSON it renders once for every
    /// sink is always the JSON of what it holds.
    public struct Entry: Sendable {
        public let sequence: Int64
        public let event: PlannedEvent
        /// `nil` when the occurrence is gone from the calendars (a live activity ended as `removed`).
        public let occurrence: Occurrence?
        public let facts: OccurrenceFacts
        /// When the event was committed: its CloudEvents `recordedtime`.
        public let recorded: Timestamp
        /// Where its JSON is kept once rendered: shared by the entries of a batch (one allocation a batch, not a few
        /// an event), at `slot`.
        private let rendering: Rendering
        private let slot: Int

        /// An entry whose JSON is kept in `rendering` at `slot` (made for the batch), or on its own.
        public init(
            sequence: Int64, event: PlannedEvent, occurrence: Occurrence?, facts: OccurrenceFacts, recorded: Timestamp,
            rendering: Rendering = Rendering(count: 1), slot: Int = 0
        ) {
            self.rendering = rendering
            self.slot = slot
            self.sequence = sequence
            self.event = event
            // Shown at the times the event was planned for, like its subject: the end of an activity a single
            // event moved away from, or an event a sink reads back after a move, is about those times.
            var shown = occurrence
            shown?.start = event.occurrenceStart
            shown?.end = event.occurrenceEnd
            self.occurrence = shown
            self.facts = facts
            self.recorded = recorded
        }

        /// A journaled event read back for a sink, joined to its occurrence as the calendars have it now (`nil`:
        /// gone) and classified by `facts`.
        init(_ journaled: Journaled, occurrence: Occurrence?, facts: (Occurrence) -> OccurrenceFacts) {
            self.init(
                sequence: journaled.sequence, event: journaled.event, occurrence: occurrence,
                facts: occurrence.map(facts) ?? .event, recorded: journaled.recorded)
        }

        /// The event as one CloudEvents JSON object, no newline; rendered once, by the first sink that asks, on
        /// that sink's task rather than the planner's.
        public var json: String {
            rendering.once(slot) {
                CloudEventJSON.render(
                    event, occurrence: occurrence, facts: facts, sequence: sequence, recordedTime: recorded)
            }
        }

        /// The JSON of a batch of entries, each rendered by the first sink that asks for it.
        public final class Rendering: Sendable {
            private let json: Locked<[String?]>

            /// Room for `count` entries' JSON.
            public init(count: Int) { json = Locked(Array(repeating: nil, count: count)) }

            func once(_ slot: Int, _ render: () -> String) -> String {
                json.withLock { json in
                    if let rendered = json[slot] { return rendered }
                    let rendered = render()
                    json[slot] = rendered
                    return rendered
                }
            }
        }
    }

    /// One event read back from the journal.
    public struct Journaled: Sendable {
        public var sequence: Int64
        public var event: PlannedEvent
        /// When it was committed: its CloudEvents `recordedtime`.
        public var recorded: Timestamp
    }

    /// Opens the journal at `path`, creating it (and its folders, mode 0700) with mode 0600 when missing.
    ///
    /// `throwaway`: the journal is removed when its one run ends (a replay without `--state`), so it need not
    /// survive a crash or be read by anyone else meanwhile: its changes are written once, in place, never synced,
    /// instead of through a write-ahead log (a sixth of a replay's time), and without a rollback journal: nothing in
    /// it is ever undone (no constraint can refuse a row, and a failed write ends the run that removes it). Nor does
    /// it refuse duplicates by index: only a run started again over its own journal could bring one, and a throwaway
    /// journal has one run (the index was a tenth of a replay's time). And it writes a row only when something may
    /// read it back: rows every sink handled first are never written (`HeldRows`).
    public init(path: String, throwaway: Bool = false) throws {
        self.path = path
        try SQLiteConnection.createPrivately(path: path)
        let connection = try SQLiteConnection(path: path)
        database = connection
        if let found = try connection.otherLayout(than: Self.schemaVersion) {
            guard found < Self.schemaVersion, (found..<Self.schemaVersion).allSatisfy({ Self.migrations[$0] != nil })
            else { throw IncompatibleLayout(found: found) }
            for layout in found..<Self.schemaVersion { try connection.execute(Self.migrations[layout]!) }
            if found < 4 { try Self.rehashReminders(connection) }
        }
        try connection.execute(
            """
            PRAGMA journal_mode = \(throwaway ? "OFF" : "WAL");
            PRAGMA synchronous = \(throwaway ? "OFF" : "NORMAL");
            PRAGMA user_version = \(Self.schemaVersion);
            CREATE TABLE IF NOT EXISTS events (
                seq INTEGER PRIMARY KEY,
                id TEXT NOT NULL,
                type TEXT NOT NULL,
                calendar TEXT NOT NULL,
                uid TEXT NOT NULL,
                recurrence_id TEXT,
                occurrence_start INTEGER NOT NULL,
                occurrence_end INTEGER NOT NULL,
                time INTEGER NOT NULL,
                expiry INTEGER NOT NULL,
                fingerprint INTEGER NOT NULL,
                recorded INTEGER NOT NULL,      -- milliseconds since 1970
                seconds_before INTEGER,
                reminder_source TEXT,
                lateness INTEGER,
                end_reason TEXT,
                answered TEXT,                  -- an answer's: the event answered
                answer_until INTEGER,           -- a snooze's reminder instant
                answer_count INTEGER,           -- an answer's snooze count; a snoozed reminder's too
                deferred_from INTEGER,          -- a reminder held back by quiet hours: its own time
                detail TEXT,                    -- the day's events, flightChanged, accounts: detail as JSON; an activity's phase
                scope TEXT                      -- in a fleet, whose calendar (the fleet's name for it); else NULL
            );
            -- An event is refused when one with its id and scheduled instant is journaled. Keyed by time first, the
            -- index grows at its end as time passes; an index on the id (a hash) alone cost a random page per event.
            -- A throwaway journal has one run, which the planner's state keeps from planning anything twice.
            \(throwaway ? "" : "CREATE UNIQUE INDEX IF NOT EXISTS events_by_time ON events (time, id);")
            CREATE TABLE IF NOT EXISTS sink_cursors (sink TEXT PRIMARY KEY, seq INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
            -- Events a sink has taken but must try again later (a hook that exited 75): its cursor moves past
            -- them, so later events go on, and neither a stop nor a crash loses them.
            CREATE TABLE IF NOT EXISTS sink_retries (sink TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (sink, seq));
            -- How each run of a hook ended, for `calwatch why`; pruned with the events. A journal without it (an
            -- earlier calwatch) gets it here, and an earlier calwatch reading this one passes it by.
            CREATE TABLE IF NOT EXISTS hook_runs (
                sink TEXT NOT NULL, seq INTEGER NOT NULL, attempt INTEGER NOT NULL,
                finished INTEGER NOT NULL,      -- seconds since 1970
                outcome TEXT NOT NULL,          -- exit 0, exit 3, killed by signal 9, timed out, not started: …
                PRIMARY KEY (sink, seq, attempt)
            );
            -- Answers given with `calwatch snooze`, `dismiss` and `ack`, waiting for the daemon (or given while it
            -- was down). The same answer twice (a hook run again after a crash) is one row.
            CREATE TABLE IF NOT EXISTS answers (
                id INTEGER PRIMARY KEY,
                kind TEXT NOT NULL,             -- snooze, dismiss, ack
                target TEXT NOT NULL,           -- an event id, or a subject UID/START
                seconds INTEGER,                -- a snooze's duration
                given INTEGER NOT NULL,         -- milliseconds since 1970
                outcome TEXT,                   -- NULL while waiting; then what the daemon did with it
                UNIQUE (kind, target)
            );
            """)
        let columns = try connection.prepare("SELECT name FROM pragma_table_info('events')")
        var present = Set<String>()
        while try columns.step() { present.insert(columns.text(0) ?? "") }
        for (name, type) in Self.addedColumns where !present.contains(name) {
            try connection.execute("ALTER TABLE events ADD COLUMN \(name) \(type);")
        }
        insert = try connection.prepare(
            """
            INSERT OR IGNORE INTO events (\(EventColumn.list)) VALUES (\(EventColumn.placeholders))
            """)
        insertChunk = try connection.prepare(
            "INSERT INTO events (\(EventColumn.list)) VALUES "
                + (0..<Self.chunkRows).map { chunk in
                    "("
                        + EventColumn.allCases.map { "?\(chunk * EventColumn.allCases.count + Int($0.rawValue) + 1)" }
                        .joined(separator: ", ") + ")"
                }.joined(separator: ", "))
        if throwaway {
            let last = try connection.prepare("SELECT COALESCE(MAX(seq), 0), count(*) FROM events")
            try last.step()
            (nextSequence, rows, held) = (last.integer(0) + 1, last.integer(1), HeldRows())
        }
    }

    /// The database, once every held row is written: what reads or changes the journal, other than appending and
    /// moving a sink's cursor, finds what it would have found had each row been written at once.
    var connection: SQLiteConnection {
        get throws {
            try writeHeld()
            return database
        }
    }

    /// Gives the reminders of a journal of layout 3 or before the ids they have now that ids leave the calendar
    /// out, so that none is planned again after an upgrade. Offset reminders have every part of their id in the
    /// row; for a calendar alarm the first VALARM without repetition is assumed (the usual single alarm). Other
    /// events keep their old ids: a flight still ahead may be detected once more, and live activities go on from
    /// the journal's record of them, not from ids.
    private static func rehashReminders(_ connection: SQLiteConnection) throws {
        try connection.transaction {
            let select = try connection.prepare(
                """
                SELECT seq, uid, recurrence_id, time, expiry, seconds_before, reminder_source FROM events
                WHERE type = 'reminderDue'
                """)
            var updates: [(Int64, String)] = []
            while try select.step() {
                let key = OccurrenceKey(
                    calendar: "", uid: select.text(1) ?? "",
                    recurrenceID: select.text(2).flatMap(DateValueText.init(text:)))
                let seed = EventID.seed(key)
                let id =
                    select.text(6) == ReminderDetail.Source.valarm.rawValue
                    ? Planner.alarmReminderID(
                        seed, alarm: 0, repetition: 0, at: Instant(secondsSinceEpoch: select.integer(3)))
                    : Planner.offsetReminderID(
                        seed, offset: select.integer(5), anchor: Instant(secondsSinceEpoch: select.integer(4)))
                updates.append((select.integer(0), id.description))
            }
            let update = try connection.prepare("UPDATE OR IGNORE events SET id = ?2 WHERE seq = ?1")
            for (sequence, id) in updates {
                try update.bind([.integer(sequence), .text(id)])
                try update.step()
            }
            // Sinks hold the old ids up to here: `verify` compares only sequence numbers there.
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
                INSERT OR REPLACE INTO settings (name, value)
                    VALUES ('rehashed_through', (SELECT COALESCE(MAX(seq), 0) FROM events));
                """)
        }
    }

    /// A journal written with another layout of its tables.
    public struct IncompatibleLayout: Error, CustomStringConvertible, Sendable {
        public var found: Int64
        public var description: String {
            found == 0
                ? "it is an SQLite database, but not a calwatch journal; move it away or use another --state"
                : "it was written by another calwatch version (layout \(found); this one reads "
                    + "\(JournalStore.schemaVersion)); move it away or use another --state"
        }
    }

    /// Commits events in one transaction, in order, skipping any whose id is already journaled. Returns what was
    /// committed, with sequence numbers.
    ///
    /// Rows go `chunkRows` to a statement, which costs SQLite less than a statement a row. A chunk holding an event
    /// already journaled (a run started again over its own journal) is refused whole and then inserted row by row,
    /// skipping what is there.
    public func append(_ events: [PlannedEvent], recorded: Timestamp) throws -> [(sequence: Int64, event: PlannedEvent)]
    {
        guard held != nil else {
            return try database.transaction {
                let committed = try insertRows(events[...], from: try lastSequence() + 1, recorded: recorded)
                try rowsChanged(by: committed.count)
                return committed
            }
        }
        // A throwaway journal has no index to refuse a duplicate by (see `init`): every event is committed.
        let first = nextSequence
        nextSequence += Int64(events.count)
        held?.hold(events, from: first, recorded: recorded)
        try rowsChanged(by: events.count)
        try writeHeld(keepingNewest: Self.heldLimit)
        return events.enumerated().map { (first + Int64($0.offset), $0.element) }
    }

    /// Inserts `events` numbered from `first` on, skipping any already journaled (numbers go on without them).
    private func insertRows(_ events: ArraySlice<PlannedEvent>, from first: Int64, recorded: Timestamp) throws
        -> [(sequence: Int64, event: PlannedEvent)]
    {
        var next = first
        var committed: [(Int64, PlannedEvent)] = []
        committed.reserveCapacity(events.count)
        var start = events.startIndex
        while start < events.endIndex {
            let chunk = events[start..<min(start + Self.chunkRows, events.endIndex)]
            start = chunk.endIndex
            if chunk.count == Self.chunkRows, try insertWhole(chunk, from: next, recorded: recorded) {
                for event in chunk {
                    committed.append((next, event))
                    next += 1
                }
                continue
            }
            for event in chunk {
                row.reset()
                appendColumns(of: event, sequence: next, recorded: recorded)
                guard try insert.run(row) else { continue }  // already journaled: never twice
                committed.append((next, event))
                next += 1
            }
        }
        return committed
    }

    /// Writes the rows held back, all but the newest `newest` events.
    private func writeHeld(keepingNewest newest: Int = 0) throws {
        guard let count = held?.count, count > newest, let batches = held?.take(keepingNewest: newest) else { return }
        try database.transaction {
            for batch in batches { _ = try insertRows(batch.events, from: batch.first, recorded: batch.recorded) }
        }
    }

    /// Events per multi-row INSERT.
    private static let chunkRows = 32

    /// Inserts `chunk` in one statement, numbered from `first`; `false`, with nothing inserted, when one of them is
    /// journaled already.
    private func insertWhole(_ chunk: ArraySlice<PlannedEvent>, from first: Int64, recorded: Timestamp) throws -> Bool {
        row.reset()
        var sequence = first
        for event in chunk {
            appendColumns(of: event, sequence: sequence, recorded: recorded)
            sequence += 1
        }
        do {
            try insertChunk.run(row)
            return true
        } catch let error as SQLiteError where error.code.rawValue & 0xff == SQLITE_CONSTRAINT {
            return false  // the statement alone is undone; the transaction goes on
        }
    }

    /// Appends `event`'s values to `row`, in `EventColumn`'s order.
    private func appendColumns(of event: PlannedEvent, sequence: Int64, recorded: Timestamp) {
        // Each detail read once.
        let reminder = event.reminder
        let answer = event.answer
        let endReason = event.liveActivity?.endReason
        let before = row.values.count
        row.append(sequence)
        row.append(event.id)
        row.append(event.type.rawValue)
        row.append(event.key.calendar)
        row.append(event.key.uid)
        row.append(event.key.recurrenceID)
        row.append(event.occurrenceStart.secondsSinceEpoch)
        row.append(event.occurrenceEnd.secondsSinceEpoch)
        row.append(event.time.secondsSinceEpoch)
        row.append(event.expiry.secondsSinceEpoch)
        row.append(Int64(bitPattern: event.fingerprint))
        row.append(recorded.millisecondsSinceEpoch)
        row.append(reminder?.secondsBefore)
        row.append(reminder?.source.rawValue)
        row.append(reminder.map { $0.late ? $0.lateness : -1 })
        row.append(endReason?.rawValue)
        row.append(answer?.answered?.description)
        row.append(answer?.until?.secondsSinceEpoch)
        row.append(answer.map { Int64($0.count) } ?? reminder.map { Int64($0.snoozeCount) })
        row.append(reminder?.deferredFrom?.secondsSinceEpoch)
        row.append(Self.detail(of: event.payload))
        row.append(event.key.scope.isEmpty ? nil : event.key.scope)
        assert(row.values.count - before == EventColumn.allCases.count, "a value for every EventColumn, in its order")
    }

    /// Keeps the row count after `delta` rows came (or went) and reports it.
    private func rowsChanged(by delta: Int) throws {
        if let rows {
            self.rows = rows + Int64(delta)
        } else {
            rows = try database.prepare("SELECT count(*) FROM events").firstInteger(SQLRow()) ?? 0
        }
        CalwatchMetrics.journal(rows: rows ?? 0)
    }

    /// The highest sequence number, 0 for an empty journal.
    public func lastSequence() throws -> Int64 {
        // Another process may write a journal that is not a throwaway one.
        guard held == nil else { return nextSequence - 1 }
        let statement = try database.prepare("SELECT COALESCE(MAX(seq), 0) FROM events")
        try statement.step()
        return statement.integer(0)
    }

    /// The `events` table's columns as `append` writes them and `journaled` reads them, by name: a column added is
    /// a case here, a value in `append` and (for an older journal) an entry of `addedColumns`.
    enum EventColumn: Int32, CaseIterable {
        case seq, id, type, calendar, uid, recurrenceID, occurrenceStart, occurrenceEnd, time, expiry, fingerprint
        case recorded, secondsBefore, reminderSource, lateness, endReason, answered, answerUntil, answerCount
        case deferredFrom, detail, scope

        /// The column's name in SQL.
        var name: String {
            switch self {
            case .recurrenceID: "recurrence_id"
            case .occurrenceStart: "occurrence_start"
            case .occurrenceEnd: "occurrence_end"
            case .secondsBefore: "seconds_before"
            case .reminderSource: "reminder_source"
            case .endReason: "end_reason"
            case .answerUntil: "answer_until"
            case .answerCount: "answer_count"
            case .deferredFrom: "deferred_from"
            default: "\(self)"
            }
        }

        /// Every column, in order: what a `SELECT` for `journaled` names.
        static let list = allCases.map(\.name).joined(separator: ", ")
        /// `?1, ?2, …` for an INSERT of every column.
        static let placeholders = allCases.map { "?\($0.rawValue + 1)" }.joined(separator: ", ")
    }

    /// The event in the current row of a `SELECT` of `columns`; `nil` for a row this version cannot read.
    static func journaled(_ row: SQLiteStatement) -> Journaled? {
        func integer(_ column: EventColumn) -> Int64 { row.integer(column.rawValue) }
        func text(_ column: EventColumn) -> String? { row.text(column.rawValue) }
        func instant(_ column: EventColumn) -> Instant? {
            row.isNull(column.rawValue) ? nil : Instant(secondsSinceEpoch: integer(column))
        }
        guard let id = text(.id).flatMap(EventID.init(hex:)), let type = text(.type).flatMap(EventType.init)
        else { return nil }
        let key = OccurrenceKey(
            calendar: text(.calendar) ?? "", uid: text(.uid) ?? "",
            recurrenceID: text(.recurrenceID).flatMap(DateValueText.init(text:)), scope: text(.scope) ?? "")
        let start = Instant(secondsSinceEpoch: integer(.occurrenceStart))
        let end = Instant(secondsSinceEpoch: integer(.occurrenceEnd))
        let time = Instant(secondsSinceEpoch: integer(.time))
        var activity = LiveActivityDetail(start: start, end: end, at: time)
        if text(.detail) == LiveActivityDetail.Phase.endingSoon.rawValue { activity.phase = .endingSoon }
        let answer = AnswerDetail(
            answered: text(.answered).flatMap(EventID.init(hex:)), until: instant(.answerUntil),
            count: Int(integer(.answerCount)))
        let payload: PlannedEvent.Payload
        switch type {
        case .reminderDue:
            let lateness = integer(.lateness)
            payload = .reminderDue(
                ReminderDetail(
                    secondsBefore: integer(.secondsBefore), anchor: .start,
                    source: text(.reminderSource).flatMap(ReminderDetail.Source.init) ?? .offset,
                    late: lateness >= 0, lateness: max(0, lateness), snoozeCount: Int(integer(.answerCount)),
                    deferredFrom: instant(.deferredFrom)))
        case .liveActivityStart: payload = .liveActivityStart(activity)
        case .liveActivityUpdate: payload = .liveActivityUpdate(activity)
        case .liveActivityEnd:
            payload = .liveActivityEnd(
                activity, reason: text(.endReason).flatMap(LiveActivityDetail.EndReason.init) ?? .ended)
        case .flightDetected: payload = .flightDetected
        case .prepareDue: payload = .prepareDue
        case .reminderSnoozed: payload = .reminderSnoozed(answer)
        case .reminderDismissed: payload = .reminderDismissed(answer)
        case .reminderAcknowledged: payload = .reminderAcknowledged(answer)
        case .conflictDetected, .overrunDetected, .invitationPending, .agendaDue, .flightChanged, .accountSignInNeeded:
            guard let detail = text(.detail), let decoded = Self.payload(type, detail: detail) else { return nil }
            payload = decoded
        }
        let event = PlannedEvent(
            payload, id: id, key: key, occurrenceStart: start, occurrenceEnd: end, time: time,
            expiry: Instant(secondsSinceEpoch: integer(.expiry)), fingerprint: UInt64(bitPattern: integer(.fingerprint))
        )
        return Journaled(
            sequence: integer(.seq), event: event,
            recorded: Timestamp(millisecondsSinceEpoch: integer(.recorded)))
    }

    /// What the `detail` column holds: the detail of the day's events, of `flightChanged` and of an account's notice
    /// as JSON (the JSON Lines form is rendered from it again), and `endingSoon` for a live activity in that phase.
    private static func detail(of payload: PlannedEvent.Payload) -> String? {
        let encoder = JSONEncoder()
        let encoded: Data?
        switch payload {
        case .conflictDetected(let detail): encoded = try? encoder.encode(detail)
        case .overrunDetected(let detail): encoded = try? encoder.encode(detail)
        case .invitationPending(let detail): encoded = try? encoder.encode(detail)
        case .agendaDue(let detail): encoded = try? encoder.encode(detail)
        case .flightChanged(let detail): encoded = try? encoder.encode(detail)
        case .accountSignInNeeded(let notice): encoded = try? encoder.encode(notice)
        case .liveActivityStart(let activity), .liveActivityUpdate(let activity):
            return activity.phase == .endingSoon ? LiveActivityDetail.Phase.endingSoon.rawValue : nil
        default: return nil
        }
        return encoded.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The payload of a day's event from its `detail`; `nil` for a detail this version cannot read.
    private static func payload(_ type: EventType, detail: String) -> PlannedEvent.Payload? {
        let data = Data(detail.utf8)
        let decoder = JSONDecoder()
        switch type {
        case .conflictDetected:
            return (try? decoder.decode(ConflictDetail.self, from: data)).map { .conflictDetected($0) }
        case .overrunDetected: return (try? decoder.decode(OverrunDetail.self, from: data)).map { .overrunDetected($0) }
        case .invitationPending:
            return (try? decoder.decode(InvitationDetail.self, from: data)).map { .invitationPending($0) }
        case .agendaDue: return (try? decoder.decode(AgendaDetail.self, from: data)).map { .agendaDue($0) }
        case .flightChanged:
            return (try? decoder.decode(FlightChangeDetail.self, from: data)).map { .flightChanged($0) }
        case .accountSignInNeeded:
            return (try? decoder.decode(AccountNotice.self, from: data)).map { .accountSignInNeeded($0) }
        default: return nil
        }
    }

    /// The planner's state for planning from `instant` on: every journaled event that has not expired by then,
    /// applied in sequence order (an expired event can never be planned again; see `PlannerState`).
    public func plannerState(from instant: Instant = Instant(secondsSinceEpoch: .min)) throws -> PlannerState {
        var state = PlannerState()
        let statement = try connection.prepare(
            "SELECT \(EventColumn.list) FROM events WHERE expiry >= ?1 ORDER BY seq")
        try statement.bind([.integer(instant.secondsSinceEpoch)])
        while try statement.step() {
            if let journaled = Self.journaled(statement) { state.apply(journaled.event) }
        }
        return state
    }

    /// Checks that every sink's own records came from this journal, before anything is delivered to them: a
    /// journal deleted, emptied or replaced since (a new one starts again at sequence 1) would have them receive
    /// again, under new sequence numbers, every event they already hold. The sink's newest record must be in the
    /// journal with the same id, or pruned from it, which the journal only does once the sink's cursor has passed it.
    public func verify(_ sinks: [any EventSink]) async throws {
        held?.sinks = Set(sinks.map(\.name))
        for sink in sinks where !sink.storesEachEventOnce {
            guard let record = try await sink.newestRecord() else { continue }
            let statement = try connection.prepare("SELECT id FROM events WHERE seq = ?1")
            try statement.bind([.integer(record.sequence)])
            let found: String
            if try statement.step() {
                guard statement.text(0) != record.id, record.sequence > (try setting("rehashed_through") ?? 0)
                else { continue }
                found = "the journal \(path) holds another event at that sequence"
            } else {
                // Pruning keeps the last row, and prunes a row only once the sink's cursor has passed it.
                let last = try lastSequence()
                if last < record.sequence {
                    found = "the journal \(path) ends at sequence \(last)"
                } else {
                    guard try cursor(for: sink.name) < record.sequence else { continue }
                    found = "the journal \(path) never delivered it"
                }
            }
            throw SinkError(
                sink: sink.name,
                reason: "its records end with event \(record.id) at sequence \(record.sequence), but \(found): the "
                    + "journal was deleted, emptied or replaced since they were written, and going on would deliver "
                    + "again events they already hold. Use the journal that wrote them (the configuration's `state`, "
                    + "or --state), or move the sink's file away to start both afresh.")
        }
    }

    /// Journaled events after `sequence`, in order, at most `limit`: how a lagging sink catches up.
    public func events(after sequence: Int64, limit: Int) throws -> [Journaled] {
        let statement = try connection.prepare(
            "SELECT \(EventColumn.list) FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2")
        try statement.bind([.integer(sequence), .integer(Int64(limit))])
        var rows: [Journaled] = []
        while try statement.step() {
            if let journaled = Self.journaled(statement) { rows.append(journaled) }
        }
        return rows
    }

    /// The last sequence a sink has fully handled (0 when it has handled nothing).
    public func cursor(for sink: String) throws -> Int64 {
        let statement = try database.prepare("SELECT seq FROM sink_cursors WHERE sink = ?1")
        try statement.bind([.text(sink)])
        return try statement.step() ? statement.integer(0) : 0
    }

    /// Records that a sink has handled everything up to `sequence`.
    public func setCursor(_ sequence: Int64, for sink: String) throws {
        let statement = try database.prepare(
            """
            INSERT INTO sink_cursors (sink, seq) VALUES (?1, ?2)
            ON CONFLICT(sink) DO UPDATE SET seq = excluded.seq
            """)
        try statement.bind([.text(sink), .integer(sequence)])
        try statement.step()
        if let released = held?.handled(through: sequence, by: sink), released > 0 { try rowsChanged(by: -released) }
    }

    /// Until when the journal has handled time: events that expired before it were pruned, so planning must not
    /// start earlier (`nil` while nothing was pruned).
    public func handledUntil() throws -> Instant? {
        try setting("handled_until").map(Instant.init(secondsSinceEpoch:))
    }

    private func setting(_ name: String) throws -> Int64? {
        let statement = try connection.prepare("SELECT value FROM settings WHERE name = ?1")
        try statement.bind([.text(name)])
        return try statement.step() ? statement.integer(0) : nil
    }

    /// Deletes the events that expired before `instant` and that every sink in `sinks` has handled, and records
    /// `instant` as handled. Returns how many rows went.
    @discardableResult
    public func prune(expiredBefore instant: Instant, sinks: [String]) throws -> Int {
        // Held rows stay held: those every sink has handled are let go, not written, and a prune takes no other.
        try database.transaction {
            var delivered = Int64.max
            let cursor = try database.prepare("SELECT seq FROM sink_cursors WHERE sink = ?1")
            for sink in sinks {
                try cursor.bind([.text(sink)])
                delivered = min(delivered, try cursor.step() ? cursor.integer(0) : 0)
            }
            // The last row always stays: sequence numbers continue from it. So do rows a sink will try again.
            let delete = try database.prepare(
                """
                DELETE FROM events WHERE seq <= ?1 AND expiry < ?2 AND seq < (SELECT MAX(seq) FROM events)
                    AND seq NOT IN (SELECT seq FROM sink_retries)
                """)
            try delete.bind([.integer(delivered), .integer(instant.secondsSinceEpoch)])
            try delete.step()
            let removed = Int(delete.changes)
            try rowsChanged(by: -removed)
            if removed > 0 {
                try database.execute("DELETE FROM hook_runs WHERE seq NOT IN (SELECT seq FROM events)")
            }
            let record = try database.prepare(
                """
                INSERT INTO settings (name, value) VALUES ('handled_until', ?1)
                ON CONFLICT(name) DO UPDATE SET value = max(value, excluded.value)
                """)
            try record.bind([.integer(instant.secondsSinceEpoch)])
            try record.step()
            return removed
        }
    }

    /// Every journaled event about `uid`, in sequence order: what `calwatch why` reads.
    public func events(uid: String) throws -> [Journaled] {
        let statement = try connection.prepare("SELECT \(EventColumn.list) FROM events WHERE uid = ?1 ORDER BY seq")
        try statement.bind([.text(uid)])
        var rows: [Journaled] = []
        while try statement.step() {
            if let journaled = Self.journaled(statement) { rows.append(journaled) }
        }
        return rows
    }

    /// The conflicts and overruns journaled about another occurrence that name `uid`'s among the others.
    public func events(namingOther uid: String) throws -> [Journaled] {
        let statement = try connection.prepare(
            "SELECT \(EventColumn.list) FROM events WHERE type IN ('conflictDetected', 'overrunDetected') ORDER BY seq")
        var rows: [Journaled] = []
        while try statement.step() {
            if let journaled = Self.journaled(statement), journaled.event.others.contains(where: { $0.uid == uid }) {
                rows.append(journaled)
            }
        }
        return rows
    }

    /// The journaled event with this id, if the journal still holds it; with `since`, the latest scheduled from
    /// then on, found through the index by time (without, every row is looked at).
    public func event(id: EventID, since: Instant? = nil) throws -> Journaled? {
        let statement = try connection.prepare(
            "SELECT \(EventColumn.list) FROM events WHERE "
                + (since == nil ? "id = ?1 LIMIT 1" : "time >= ?2 AND id = ?1 ORDER BY time DESC LIMIT 1"))
        try statement.bind([.text(id.description)] + (since.map { [.integer($0.secondsSinceEpoch)] } ?? []))
        return try statement.step() ? Self.journaled(statement) : nil
    }

    /// SQLite's journal mode (`wal` once opened).
    var journalMode: String {
        guard let statement = try? connection.prepare("PRAGMA journal_mode"), (try? statement.step()) == true
        else { return "" }
        return statement.text(0) ?? ""
    }
}
