import CalWatchCore
public import CalWatchRuntime
import Foundation

/// Writes events into a PostgreSQL database that many watchers share and many consumers read: the same `events`,
/// `upcoming_reminders`, `flights` and `current_live_activities` views as the SQLite sink, each row naming the
/// watcher (`instance:`) that wrote it, and a `NOTIFY` on the configured channel after each stored batch.
///
/// Like the SQLite sink, each occurrence is stored once (`occurrences`) and each event as a short row pointing to
/// it (`event_log`, partitioned by month of event time, so retention is dropping a month's table). A batch is one
/// transaction: its events go by COPY straight into `event_log`, whose key (time, watcher, id) refuses a batch
/// stored before; such a batch (redelivered after a crash) goes through a temporary table and `ON CONFLICT DO
/// NOTHING` instead. So an event is stored once per watcher and id however often it is delivered (after a crash, a
/// restart of the database, or a replay of the same days). The schema is created and migrated by calwatch under
/// an advisory lock, so watchers starting together do it once. The sink connects when it first has something to do
/// and again after a failure, so a database that is down at start only delays delivery; the bus retries with
/// backoff meanwhile. Every libpq call blocks, so they run on a thread of the sink's own (`BlockingExecutor`).
public actor PostgresSink: EventSink {
    public nonisolated let name: String
    private let executor = BlockingExecutor(name: "calwatch-pg")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    public nonisolated let settings: PostgresSettings
    private var connection: PostgresConnection?
    private var row = SQLRow()
    /// The batch's rows as COPY text: its events, and the occurrences this connection has not stored.
    private var eventRows: [UInt8] = []
    private var occurrenceRows: [UInt8] = []
    /// Occurrence versions this connection has stored: their rows go without the occurrence's columns. Emptied at
    /// 4,096 and on a new connection (a rolled-back batch may not have stored them).
    private var storedOccurrences: Set<OccurrenceVersion> = []
    /// Months whose `event_log` partition this connection has seen.
    private var partitions: Set<CalendarDate> = []

    private struct OccurrenceVersion: Hashable {
        var record: String
        var subject: String
        var version: Int64
    }

    /// The layout this calwatch writes; `migrations[n]` takes a database from layout `n` to `n + 1`, so a new
    /// database runs them all and an older one the rest.
    public static let schemaVersion = migrations.count

    public init(settings: PostgresSettings, name: String? = nil) {
        self.settings = settings
        self.name = name ?? "postgres:" + settings.redactedURL
    }

    // MARK: Delivery

    public func deliver(_ batch: [JournalStore.Entry]) async throws {
        guard !batch.isEmpty else { return }
        let connection = try await connected()
        do {
            try connection.execute("BEGIN")
            try ensurePartitions(for: batch, on: connection)
            occurrenceRows.removeAll(keepingCapacity: true)
            eventRows.removeAll(keepingCapacity: true)
            var added: Set<OccurrenceVersion> = []
            for entry in batch { appendRows(entry, addedOccurrences: &added) }
            if !added.isEmpty {
                try connection.copy(Self.copyOccurrences, data: occurrenceRows)
                try connection.execute(Self.storeOccurrences)
            }
            // Straight into event_log; only a batch stored before (a redelivery after a crash) takes the slower way
            // that skips what is there.
            try connection.execute("SAVEPOINT events")
            do {
                try connection.copy(Self.copyEvents, data: eventRows)
            } catch let error as PostgresError where error.state == .uniqueViolation {
                try connection.execute("ROLLBACK TO SAVEPOINT events")
                try connection.copy(Self.copyIncomingEvents, data: eventRows)
                try connection.execute(Self.storeIncomingEvents)
            }
            try connection.execute(try finishBatch(on: connection, batch: batch))
            if storedOccurrences.count + added.count > 4096 { storedOccurrences.removeAll(keepingCapacity: true) }
            storedOccurrences.formUnion(added)
        } catch let error as PostgresError {
            // A failed batch leaves the connection in an aborted transaction, or broken: start afresh next time.
            self.connection = nil
            throw SinkError(
                sink: name,
                reason: "cannot store events in \(settings.redactedURL): \(settings.scrubbed(error.message))")
        }
    }

    /// Its key is the watcher, the time and the id: a journal made anew (a replay's temporary one, say, replaying
    /// the same days into the same watcher) stores nothing twice, so it is not checked against the watcher's row.
    public nonisolated var storesEachEventOnce: Bool { true }

    /// The entry's `event_log` row, and its occurrence's row unless this connection stored that version.
    private func appendRows(_ entry: JournalStore.Entry, addedOccurrences: inout Set<OccurrenceVersion>) {
        let event = entry.event
        row.reset()
        row.appendOccurrenceColumns(of: entry)
        // The version is the hash of the occurrence's columns, as in the SQLite sink.
        let record = settings.fleet ? PostgresSettings.fleetRecord(event.key.scope) : settings.watcher
        let occurrence = OccurrenceVersion(record: record, subject: event.subject, version: row.contentHash)
        if !storedOccurrences.contains(occurrence) && addedOccurrences.insert(occurrence).inserted {
            row.append(occurrence.subject)
            row.append(occurrence.version)
            row.append(record)
            row.appendCopyLine(to: &occurrenceRows)
        }
        row.reset()
        row.append(record)
        row.append(event.id)
        row.append(entry.sequence)
        row.append(event.type.rawValue)
        row.append(event.time)
        row.append(occurrence.subject)
        row.append(occurrence.version)
        row.append(entry.recorded)
        row.append(event.expiry)
        row.appendText { CloudEventJSON.writeDetails(event, facts: .event, flightAndMeeting: false, to: &$0) }
        row.append(settings.watcher)
        row.appendCopyLine(to: &eventRows)
    }

    /// Creates the monthly `event_log` partitions the batch needs, inside its transaction.
    private func ensurePartitions(for batch: [JournalStore.Entry], on connection: PostgresConnection) throws {
        for month in Set(batch.map { Self.month(of: $0.event.time) }) where !partitions.contains(month) {
            try connection.execute("SELECT calwatch_event_partition($1)", [month.description])
            partitions.insert(month)
        }
    }

    /// The first day (UTC) of the month an instant falls in.
    private static func month(of instant: Instant) -> CalendarDate {
        let seconds = instant.secondsSinceEpoch
        let day = CalendarDate(daysSinceEpoch: (seconds - ((seconds % 86_400) + 86_400) % 86_400) / 86_400)
        return CalendarDate(year: day.year, month: day.month, day: 1)
    }

    // MARK: Connection and schema

    /// The open connection, or a new one with the schema current and the batch statements ready.
    private func connected() async throws -> PostgresConnection {
        if let connection, connection.isUsable { return connection }
        connection = nil
        storedOccurrences.removeAll(keepingCapacity: true)
        partitions.removeAll()
        let opened = try await open()
        do {
            try Self.migrate(opened, sink: name, url: settings.redactedURL, watcher: settings.watcher)
            try opened.execute(Self.incomingTables)
        } catch let error as PostgresError {
            throw SinkError(
                sink: name, reason: "cannot set up \(settings.redactedURL): \(settings.scrubbed(error.message))")
        }
        connection = opened
        return opened
    }

    /// A new connection, with the password from `passwordCommand` when there is one.
    private func open() async throws -> PostgresConnection {
        var password: String?
        if let command = settings.passwordCommand { password = try await Self.password(from: command, sink: name) }
        do {
            return try PostgresConnection(
                url: settings.url, password: password, applicationName: "calwatch " + settings.watcher)
        } catch let error as PostgresError {
            throw SinkError(
                sink: name,
                reason:
                    "cannot connect to \(settings.redactedURL): \(settings.scrubbed(error.message)) (check the url, that the "
                    + "server runs and that the user may log in; the events wait in the journal)",
                lasting: error.message.contains("authentication failed"))
        }
    }

    /// What `calwatch check` says of the database: the server's version and whether calwatch's layout is there
    /// and current. Nothing is written.
    public func inspect() async throws -> String {
        let connection = try await open()
        let found: Int?
        do {
            found = try Self.layout(of: connection)
        } catch let error as PostgresError {
            throw SinkError(
                sink: name, reason: "cannot read \(settings.redactedURL): \(settings.scrubbed(error.message))")
        }
        let server = "PostgreSQL \(connection.serverVersionText)"
        switch found {
        case nil: return "\(server), no calwatch tables yet (created at the first delivery)"
        case Self.schemaVersion?:
            let missing: [String]
            do {
                missing = try Self.missing(on: connection)
            } catch let error as PostgresError {
                return "\(server), calwatch layout \(Self.schemaVersion) (current; not compared with what calwatch "
                    + "expects: \(settings.scrubbed(error.message)))"
            }
            let views = missing.filter { $0.hasPrefix("the view ") }
            if !views.isEmpty && views.count == missing.count {
                return "\(server), calwatch layout \(Self.schemaVersion) (current but for "
                    + views.joined(separator: ", ") + "; made again at the first delivery)"
            }
            guard missing.isEmpty else {
                throw SinkError(
                    sink: name,
                    reason: "\(settings.redactedURL) says calwatch layout \(Self.schemaVersion), but "
                        + missing.joined(separator: ", ") + "; restore them from a backup, or drop calwatch's tables, "
                        + "views and calwatch_schema so that calwatch makes them anew (what they hold is lost)")
            }
            return "\(server), calwatch layout \(Self.schemaVersion) (current, every table, view and column there)"
        case let older? where older < Self.schemaVersion:
            return "\(server), calwatch layout \(older) (migrated to \(Self.schemaVersion) at the first delivery)"
        case let newer?:
            throw SinkError(
                sink: name,
                reason: "\(settings.redactedURL) holds calwatch layout \(newer), written by a newer calwatch (this "
                    + "one writes \(Self.schemaVersion)); upgrade calwatch on this machine")
        }
    }

    /// The first line the sink's `passwordCommand` prints.
    static func password(from command: [String], sink: String) async throws -> String {
        do {
            return try await PasswordCommand.run(command)
        } catch {
            throw SinkError(sink: sink, reason: error.description, lasting: true)
        }
    }

    /// What the database lacks of the layout calwatch expects: the layout made afresh in a schema of its own, in a
    /// transaction that is rolled back, and its tables, views and columns compared with those in the schema
    /// calwatch writes to (partitions aside). Nothing is written. `["the view events is missing", "event_log has
    /// no column details"]`.
    static func missing(on connection: PostgresConnection) throws -> [String] {
        let catalog = """
            SELECT c.relname, c.relkind, coalesce(a.attname, '') FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v') AND NOT c.relispartition
            """
        func relations(in schema: String) throws -> [String: (kind: String, columns: Set<String>)] {
            var found: [String: (kind: String, columns: Set<String>)] = [:]
            for row in try connection.execute(catalog, [schema]) {
                guard let name = row[0], let kind = row[1] else { continue }
                found[name, default: (kind, [])].columns.insert(row[2] ?? "")
            }
            return found
        }
        guard let schema = try connection.execute("SELECT current_schema()").first?[0] ?? nil else { return [] }
        let expectedSchema = "calwatch_expected_\(getpid())"
        try connection.execute("BEGIN")
        defer { _ = try? connection.execute("ROLLBACK") }
        try connection.execute("CREATE SCHEMA \(expectedSchema); SET LOCAL search_path TO \(expectedSchema)")
        for step in migrations { try connection.execute(step) }
        let expected = try relations(in: expectedSchema)
        let actual = try relations(in: schema)
        var missing: [String] = []
        for (name, wanted) in expected.sorted(by: { $0.key < $1.key }) {
            let what = wanted.kind == "v" ? "view" : "table"
            guard let there = actual[name] else {
                missing.append("the \(what) \(name) is missing")
                continue
            }
            for column in wanted.columns.subtracting(there.columns).sorted() where !column.isEmpty {
                missing.append("\(name) has no column \(column)")
            }
        }
        return missing
    }

    /// The views of `viewNames` not in the schema calwatch writes to.
    static func missingViews(on connection: PostgresConnection) throws -> [String] {
        try viewNames.filter { name in
            try connection.execute("SELECT to_regclass($1) IS NULL", [name]).first?[0] == "t"
        }
    }

    /// The layout a database has: `nil` when calwatch never wrote to it.
    public static func layout(of connection: PostgresConnection) throws -> Int? {
        guard try connection.execute("SELECT to_regclass('calwatch_schema') IS NOT NULL").first?[0] == "t" else {
            return nil
        }
        return try connection.execute("SELECT max(version) FROM calwatch_schema").first?[0].flatMap { Int($0) }
    }

    /// Brings the database to this calwatch's layout in one transaction, under an advisory lock that other watchers
    /// starting at the same moment wait on; a database of a newer layout is refused. `through` stops at an older
    /// layout (for tests of the migration).
    public static func migrate(
        _ connection: PostgresConnection, sink: String, url: String, watcher: String,
        through target: Int = schemaVersion
    ) throws {
        // The lock is taken before the transaction starts, so the transaction sees what the watcher that held it
        // before committed (a catalog change committed while a transaction waits on an advisory lock is not seen).
        try connection.execute("SELECT pg_advisory_lock(\(schemaLock))")
        defer { _ = try? connection.execute("SELECT pg_advisory_unlock(\(schemaLock))") }
        try connection.execute(
            """
            BEGIN;
            CREATE TABLE IF NOT EXISTS calwatch_schema (
                version integer NOT NULL,
                migrated_at timestamptz NOT NULL DEFAULT now(),
                migrated_by text NOT NULL      -- the watcher (instance:) that migrated it
            );
            """)
        do {
            let found = try layout(of: connection) ?? 0
            if found > schemaVersion {
                throw SinkError(
                    sink: sink,
                    reason: "\(url) holds calwatch layout \(found), written by a newer calwatch (this one writes "
                        + "\(schemaVersion)); upgrade calwatch on this machine, or configure another database",
                    lasting: true)
            }
            if found < target {
                for step in found..<target { try connection.execute(migrations[step]) }
                try connection.execute(
                    "INSERT INTO calwatch_schema (version, migrated_by) VALUES ($1, $2)", [String(target), watcher])
            } else if target >= 2, try !missingViews(on: connection).isEmpty {
                try connection.execute(views)
            }
            try connection.execute("COMMIT")
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The advisory lock key that serializes migrations: "calwatch" in ASCII.
    private static let schemaLock: Int64 = 0x6361_6C77_6174_6368

    /// Where a batch's new occurrences wait for `INSERT … ON CONFLICT DO NOTHING`, and its events when they were
    /// partly stored before.
    private static let incomingTables = """
        CREATE TEMPORARY TABLE IF NOT EXISTS incoming_occurrences (
            calendar text, uid text, recurrence_id text, kind text, summary text, location text,
            start timestamptz, "end" timestamptz, facts jsonb, subject text, version bigint, watcher text
        ) ON COMMIT DELETE ROWS;
        CREATE TEMPORARY TABLE IF NOT EXISTS incoming_events (LIKE event_log) ON COMMIT DELETE ROWS
        """

    private static let copyOccurrences = """
        COPY incoming_occurrences (calendar, uid, recurrence_id, kind, summary, location, start, "end", facts,
            subject, version, watcher) FROM STDIN
        """

    private static let eventColumns =
        "watcher, id, seq, type, time, subject, version, recorded, expiry, details, sender"
    private static let copyEvents = "COPY event_log (\(eventColumns)) FROM STDIN"
    private static let copyIncomingEvents = "COPY incoming_events (\(eventColumns)) FROM STDIN"
    private static let storeIncomingEvents =
        "INSERT INTO event_log SELECT * FROM incoming_events ON CONFLICT DO NOTHING"

    private static let storeOccurrences = """
        INSERT INTO occurrences (watcher, subject, version, calendar, uid, recurrence_id, kind, summary, location,
            start, "end", flight, meeting)
        SELECT watcher, subject, version, calendar, uid, recurrence_id, kind, summary,
            location, start, "end", NULLIF(facts -> 'flight', 'null'), NULLIF(facts -> 'meeting', 'null')
        FROM incoming_occurrences
        ON CONFLICT DO NOTHING
        """

    /// The end of a batch: the watcher's row, the notification, the commit; one round trip.
    private func finishBatch(
        on connection: PostgresConnection, batch: [JournalStore.Entry]
    ) throws -> String {
        let (first, last, count) = (batch[0].sequence, batch[batch.count - 1], batch.count)
        let watcher = try connection.literal(settings.watcher)
        var sql = """
            INSERT INTO watchers (watcher, last_seq, last_id, last_delivery)
            VALUES (\(watcher), \(last.sequence), \(try connection.literal(last.event.id.description)), now())
            ON CONFLICT (watcher) DO UPDATE SET last_seq = excluded.last_seq, last_id = excluded.last_id,
                last_delivery = excluded.last_delivery;

            """
        if let channel = settings.channel {
            var payload = JSONLineWriter(capacity: 256)
            payload.beginObject()
            payload.field("watcher", settings.watcher)
            payload.field("first", Int(first))
            payload.field("last", Int(last.sequence))
            payload.field("events", count)
            // The batch's event times, so that a reader finds its rows through the (time, watcher, id) key.
            payload.field("since", batch.lazy.map(\.event.time).min())
            payload.field("until", batch.lazy.map(\.event.time).max())
            payload.endObject()
            let text = String(decoding: payload.bytes, as: UTF8.self)
            sql += "SELECT pg_notify(\(try connection.literal(channel)), \(try connection.literal(text)));\n"
        }
        return sql + "COMMIT"
    }

    /// What each layout adds. Never edit a step once released: add one.
    static let migrations: [String] = [
        // 1: the tables.
        """
        -- Each occurrence as the calendars had it when an event about it was emitted, per watcher; a changed one
        -- (moved, renamed, reclassified) is a new row.
        CREATE TABLE occurrences (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            watcher text NOT NULL,         -- the calwatch instance that wrote it (instance: in config.yml)
            subject text NOT NULL,         -- <uid>/<occurrence start or RECURRENCE-ID>
            version bigint NOT NULL,       -- a hash of the columns below
            calendar text NOT NULL,
            uid text NOT NULL,
            recurrence_id text,
            kind text NOT NULL,            -- flight, meeting, event
            summary text,
            location text,
            start timestamptz NOT NULL,
            "end" timestamptz NOT NULL,
            flight jsonb,                  -- the flight object of the event data, or NULL
            meeting jsonb,                 -- the meeting object, or NULL
            UNIQUE (watcher, subject, version)
        );
        CREATE INDEX occurrences_by_end ON occurrences ("end");
        -- One row per event and watcher, in a table per month of event time (calwatch_event_partition makes
        -- them): dropping a month is how old events go.
        CREATE TABLE event_log (
            watcher text NOT NULL,
            id text NOT NULL,              -- the CloudEvents id: the same event always has the same id
            seq bigint NOT NULL,           -- the watcher's journal sequence number
            type text NOT NULL,            -- flightDetected, reminderDue, liveActivityStart/Update/End
            time timestamptz NOT NULL,     -- when the event was due
            subject text NOT NULL,         -- with version: the occurrence row
            version bigint NOT NULL,
            recorded timestamptz NOT NULL, -- when calwatch emitted it
            expiry timestamptz NOT NULL,   -- after this the event is stale
            details jsonb NOT NULL,        -- {"reminder":{…}} or {"liveActivity":{…}} or {}
            PRIMARY KEY (time, watcher, id)
        ) PARTITION BY RANGE (time);
        CREATE INDEX event_log_by_subject ON event_log (watcher, subject) WHERE type <> 'liveActivityUpdate';

        -- Creates the month's partition of event_log when missing; watchers call it as new months come.
        CREATE FUNCTION calwatch_event_partition(month date) RETURNS void LANGUAGE plpgsql AS $$
        DECLARE
            name text := format('event_log_%s', to_char(month, 'YYYY_MM'));
            first timestamptz := date_trunc('month', month)::timestamp AT TIME ZONE 'UTC';
        BEGIN
            IF to_regclass(name) IS NOT NULL THEN RETURN; END IF;
            PERFORM pg_advisory_xact_lock(7164789117837633896);
            -- Another watcher may have made it while this one waited (to_regclass may not see it yet).
            EXECUTE format('CREATE TABLE %I PARTITION OF event_log FOR VALUES FROM (%L) TO (%L)',
                name, first, first + interval '1 month');
        EXCEPTION WHEN duplicate_table THEN
            NULL;
        END $$;

        -- Drops the months of events that ended before `before` (whole months only); returns the tables dropped.
        CREATE FUNCTION calwatch_drop_event_partitions(before timestamptz) RETURNS SETOF text LANGUAGE plpgsql AS $$
        DECLARE
            partition record;
        BEGIN
            FOR partition IN
                SELECT c.relname FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
                WHERE i.inhparent = 'event_log'::regclass
                  AND c.relname ~ '^event_log_[0-9]{4}_[0-9]{2}$'
                  AND to_date(substr(c.relname, 11), 'YYYY_MM') + interval '1 month'
                      <= (before AT TIME ZONE 'UTC')
            LOOP
                EXECUTE format('DROP TABLE %I', partition.relname);
                RETURN NEXT partition.relname;
            END LOOP;
            DELETE FROM occurrences WHERE "end" < before;
        END $$;
        """,
        // 2: the watchers, and the views consumers read.
        """
        -- Each watcher that delivers here: the last event stored (its journal sequence number and id) and when.
        CREATE TABLE watchers (
            watcher text PRIMARY KEY,
            last_seq bigint NOT NULL,
            last_id text NOT NULL,
            last_delivery timestamptz NOT NULL
        );

        """ + views,
        // 3: who sent each event, and a fleet's calendars and watchers (`calwatch fleet`, `watch --fleet`).
        """
        -- The watcher (instance:) that sent the event. In a fleet, `watcher` is the calendar's record
        -- (fleet:<name>), the same whichever watcher holds it, and this is the watcher that did.
        ALTER TABLE event_log ADD COLUMN sender text;
        -- What a watcher taking a calendar over reads: its events that have not expired.
        CREATE INDEX event_log_by_expiry ON event_log (watcher, expiry);

        -- The calendars a fleet shares out (calwatch fleet add|remove|list|show), each held by one watcher at a
        -- time under a lease it renews; another takes it once the lease has expired.
        CREATE TABLE calendars (
            name text PRIMARY KEY,         -- its name in events, filters and rules, and its record: fleet:<name>
            kind text NOT NULL CHECK (kind IN ('path', 'feed', 'caldav')),
            address text NOT NULL,         -- a path every watcher reaches (shared storage), or a URL without password
            username text,                 -- caldav: the account
            password_command jsonb,        -- caldav: a program and its arguments that print the password: a
                                           -- reference to the secret, kept where the watchers run; never the secret
            every integer NOT NULL DEFAULT 600, -- feeds and caldav: seconds between polls
            person text,                   -- whose calendar it is: their address, which tells their own attendee
                                           -- entries apart (declined, accepted) as me: in config.yml does
            added timestamptz NOT NULL DEFAULT now(),
            watcher text,                  -- the watcher holding it; NULL when none does
            lease_until timestamptz,       -- after this another watcher may take it
            claimed_at timestamptz,        -- when its watcher took it
            released_at timestamptz,       -- when a watcher last gave it back
            synced_at timestamptz,         -- when its watcher last said it was following it (every heartbeat)
            last_problem text              -- the last problem a watcher found reading it (a file that does not
                                           -- parse, a folder gone), NULL when none was found
        );
        CREATE INDEX calendars_by_watcher ON calendars (watcher);

        -- Each watcher of the fleet: seen at every heartbeat; one not seen for a lease period holds nothing.
        CREATE TABLE fleet_watchers (
            watcher text PRIMARY KEY,
            host text NOT NULL,
            pid integer NOT NULL,
            started timestamptz NOT NULL,
            seen timestamptz NOT NULL,
            stopped timestamptz,           -- when it stopped and gave its calendars back (SIGTERM)
            calendars integer NOT NULL DEFAULT 0,
            backlog bigint NOT NULL DEFAULT 0, -- events committed to its journal and not yet stored here
            lease_seconds integer NOT NULL
        );

        -- Every time a calendar changed hands: given back (released) or taken after its lease expired.
        CREATE TABLE fleet_handovers (
            calendar text NOT NULL,
            previous text,                 -- the watcher that held it, NULL for a new calendar
            watcher text NOT NULL,         -- the one that took it
            reason text NOT NULL CHECK (reason IN ('new', 'released', 'expired')),
            free_since timestamptz,        -- when it was released, or its lease expired
            claimed_at timestamptz NOT NULL
        );
        CREATE INDEX fleet_handovers_by_time ON fleet_handovers (claimed_at);
        """,
        // 4: a fleet's CalDAV passwords by a credential's name, never a program; each watcher's clock as seen.
        """
        -- caldav: the name of a credential each watcher resolves on its own machine (fleet.credentials in its
        -- config.yml, or a systemd credential). password_command is no longer run: a row holding one is reported
        -- in last_problem and not read.
        ALTER TABLE calendars ADD COLUMN credential text;
        -- How far the watcher's clock was from the database's at its last heartbeat (ms, ahead positive); one
        -- off by more than a quarter of its lease claims and renews nothing.
        ALTER TABLE fleet_watchers ADD COLUMN clock_skew_ms bigint;
        """,
        // 5: the conflicts view reads every occurrence a conflict names (conflicts became one event per occurrence).
        views,
        // 6: Microsoft 365 and Google accounts in a fleet, their tokens sealed.
        """
        -- account: a Microsoft 365 or Google account; address names the account of the watchers' config.yml
        -- (accounts:) whose application it signs in with.
        ALTER TABLE calendars DROP CONSTRAINT calendars_kind_check;
        ALTER TABLE calendars ADD CONSTRAINT calendars_kind_check
            CHECK (kind IN ('path', 'feed', 'caldav', 'account'));
        -- An account's tokens (calwatch fleet sign-in), sealed with AES-GCM under the key the watchers share
        -- (fleet: tokenKey: in their config.yml) and bound to the calendar's name. Only the watcher holding the
        -- calendar's lease reads them and refreshes, so watchers never spend a refresh token against each other.
        CREATE TABLE fleet_account_tokens (
            calendar text PRIMARY KEY REFERENCES calendars (name) ON DELETE CASCADE,
            sealed text NOT NULL,
            version bigint NOT NULL,       -- one more at every sign-in and refresh: a refresh is kept only over the
                                           -- version it started from
            signed_in_as text,             -- the address signed in with
            signed_in timestamptz NOT NULL,
            saved timestamptz NOT NULL,    -- the last sign-in or refresh
            saved_by text NOT NULL         -- the watcher that refreshed last, or 'sign-in'
        );
        """,
    ]

    /// The views consumers read, made by layout 2 and made again by `migrate` when one is gone (dropped by hand,
    /// or with a table it depended on).
    static let viewNames = [
        "events", "upcoming_reminders", "flights", "current_live_activities", "conflicts", "agenda",
    ]
    /// Their definitions, each `CREATE OR REPLACE`, in the order they depend on one another.
    static let views = """
        -- Every event with its occurrence, `data` as in the CloudEvents object (reminder or liveActivity, flight,
        -- meeting; the occurrence itself is in the columns).
        CREATE OR REPLACE VIEW events AS
            SELECT e.id, e.seq, e.type, e.time, o.subject, o.calendar, o.uid, o.recurrence_id, o.kind, o.summary,
                   o.location, o.start, o."end", e.recorded, e.expiry,
                   e.details || jsonb_build_object('flight', o.flight, 'meeting', o.meeting) AS data,
                   o.id AS occurrence, e.watcher
            FROM event_log AS e
            JOIN occurrences AS o ON o.watcher = e.watcher AND o.subject = e.subject AND o.version = e.version;

        -- The latest reminder of each occurrence that has not started yet.
        CREATE OR REPLACE VIEW upcoming_reminders AS
            SELECT start, summary, kind, calendar, location, minutes_before, join_url, reminded_at, subject, id, watcher
            FROM (
                SELECT DISTINCT ON (e.watcher, e.subject)
                       o.start, o.summary, o.kind, o.calendar, o.location,
                       (e.details #>> '{reminder,minutesBefore}')::integer AS minutes_before,
                       o.meeting ->> 'joinURL' AS join_url, e.time AS reminded_at, o.subject, e.id, e.watcher
                FROM event_log AS e
                JOIN occurrences AS o ON o.watcher = e.watcher AND o.subject = e.subject AND o.version = e.version
                WHERE e.type = 'reminderDue' AND e.type <> 'liveActivityUpdate'
                ORDER BY e.watcher, e.subject, e.seq DESC
            ) AS latest
            WHERE start > now()
            ORDER BY start;

        -- Each detected flight as last detected, with when to leave for the airport.
        CREATE OR REPLACE VIEW flights AS
            SELECT * FROM (
                SELECT DISTINCT ON (e.watcher, e.subject)
                       o.flight ->> 'code' AS code, o.flight ->> 'origin' AS origin,
                       o.flight ->> 'destination' AS destination,
                       COALESCE((o.flight ->> 'departure')::timestamptz, o.start) AS departure,
                       (o.flight ->> 'arrival')::timestamptz AS arrival,
                       (o.flight ->> 'leaveBy')::timestamptz AS leave_by,
                       o.flight ->> 'terminal' AS terminal, o.flight ->> 'gate' AS gate,
                       o.summary, o.calendar, o.subject, e.time AS detected_at, e.watcher
                FROM event_log AS e
                JOIN occurrences AS o ON o.watcher = e.watcher AND o.subject = e.subject AND o.version = e.version
                WHERE e.type = 'flightDetected' AND e.type <> 'liveActivityUpdate'
                ORDER BY e.watcher, e.subject, e.seq DESC
            ) AS latest
            ORDER BY departure;

        -- Live activities started and not yet ended, with their last reported state.
        CREATE OR REPLACE VIEW current_live_activities AS
            SELECT o.start, o."end", o.summary, o.kind, o.calendar,
                   latest.details #>> '{liveActivity,phase}' AS phase,
                   (latest.details #>> '{liveActivity,progress}')::double precision AS progress,
                   (latest.details #>> '{liveActivity,secondsToStart}')::bigint AS seconds_to_start,
                   (latest.details #>> '{liveActivity,secondsToEnd}')::bigint AS seconds_to_end,
                   latest.time AS updated_at, o.subject, started.watcher
            FROM event_log AS started
            JOIN occurrences AS o
              ON o.watcher = started.watcher AND o.subject = started.subject AND o.version = started.version
            CROSS JOIN LATERAL (
                SELECT state.time, state.details FROM event_log AS state
                WHERE state.watcher = started.watcher AND state.subject = started.subject
                  AND state.time >= started.time AND state.type IN ('liveActivityStart', 'liveActivityUpdate')
                ORDER BY state.time DESC, state.seq DESC LIMIT 1
            ) AS latest
            WHERE started.type = 'liveActivityStart'
              AND NOT EXISTS (SELECT 1 FROM event_log AS ended
                              WHERE ended.watcher = started.watcher AND ended.subject = started.subject
                                AND ended.type = 'liveActivityEnd' AND ended.time >= started.time)
            ORDER BY o.start;

        -- Each pair of overlapping occurrences as last reported: a conflict names every occurrence that starts after
        -- its own and overlaps it (`with`, then `alsoWith`), and is reported again when any of them changes.
        CREATE OR REPLACE VIEW conflicts AS
            SELECT * FROM (
                SELECT DISTINCT ON (e.watcher, e.subject, other.value ->> 'uid')
                       o.start, o."end", o.summary, o.calendar, o.subject,
                       other.value ->> 'uid' AS with_uid,
                       other.value ->> 'summary' AS with_summary,
                       (other.value ->> 'start')::timestamptz AS with_start,
                       (other.value ->> 'end')::timestamptz AS with_end,
                       extract(epoch FROM least(o."end", (other.value ->> 'end')::timestamptz)
                           - (other.value ->> 'start')::timestamptz)::bigint / 60 AS overlap_minutes,
                       e.time AS detected_at, e.id, e.watcher
                FROM event_log AS e
                JOIN occurrences AS o ON o.watcher = e.watcher AND o.subject = e.subject AND o.version = e.version
                CROSS JOIN LATERAL jsonb_array_elements(
                    jsonb_build_array(e.details #> '{conflict,with}')
                        || coalesce(e.details #> '{conflict,alsoWith}', '[]'::jsonb)) AS other(value)
                WHERE e.type = 'conflictDetected' AND e.type <> 'liveActivityUpdate'
                ORDER BY e.watcher, e.subject, other.value ->> 'uid', e.seq DESC
            ) AS latest
            ORDER BY start;

        -- Each agenda sent, one row per item in its order.
        CREATE OR REPLACE VIEW agenda AS
            SELECT (e.details #>> '{agenda,date}')::date AS date, item.position - 1 AS position,
                   (item.value ->> 'start')::timestamptz AS start, (item.value ->> 'end')::timestamptz AS "end",
                   item.value ->> 'summary' AS summary, item.value ->> 'kind' AS kind,
                   item.value ->> 'calendar' AS calendar, item.value ->> 'joinUrl' AS join_url,
                   (item.value ->> 'allDay')::boolean AS all_day, (item.value ->> 'leaveBy')::timestamptz AS leave_by,
                   item.value ->> 'participation' AS participation, item.value -> 'conflicts' AS conflicts,
                   e.time AS sent_at, e.id, e.watcher
            FROM event_log AS e
            CROSS JOIN LATERAL jsonb_array_elements(e.details #> '{agenda,items}') WITH ORDINALITY AS item(value, position)
            WHERE e.type = 'agendaDue' AND e.type <> 'liveActivityUpdate'
            ORDER BY date, position;
        """
}
