public import CalWatchCore
import Foundation

/// A fleet's shared state in PostgreSQL (the `calendars`, `fleet_watchers` and `fleet_handovers` tables of the
/// sink's layout 3): the calendars, who holds each under which lease, and what was delivered about them.
///
/// The pattern of job queues that keep their work in PostgreSQL: a watcher claims free calendars with
/// `FOR UPDATE SKIP LOCKED` (two watchers never take the same one, and neither waits on the other), renews its
/// leases at every heartbeat, and gives back what is above its fair share. Every instant is the caller's (`at`),
/// not the server's `now()`, so leases are tested on a clock the test drives; the watchers' clocks must agree
/// within a small part of a lease (NTP). Every call blocks: the caller runs it off Swift's cooperative pool.
public struct FleetDatabase: Sendable {
    public let connection: PostgresConnection
    public let url: String

    /// A connection to the fleet's database, with calwatch's layout made or migrated (`PostgresSink.migrate`).
    public init(url: String, password: String? = nil, applicationName: String = "calwatch fleet") throws {
        connection = try PostgresConnection(url: url, password: password, applicationName: applicationName)
        self.url = url
        try PostgresSink.migrate(
            connection, sink: "fleet", url: ConnectionString(url).redacted, watcher: applicationName)
    }

    /// A failure of the fleet's database, worded for the operator, without the URL's password.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
        /// What was asked contradicts what the fleet holds (a name taken), rather than the database failing.
        public var isRefusal = false
        /// The watcher's clock differs from the database's by this many milliseconds, more than it may.
        public var clockSkew: Int64?
        public init(description: String, isRefusal: Bool = false, clockSkew: Int64? = nil) {
            self.description = description
            self.isRefusal = isRefusal
            self.clockSkew = clockSkew
        }
    }

    func failure(_ error: PostgresError) -> Failure {
        Failure(description: ConnectionString(url).scrubbed(error.message))
    }

    /// Runs `body` in a transaction, rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try connection.execute("BEGIN")
        do {
            let result = try body()
            try connection.execute("COMMIT")
            return result
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The channel notified when calendars are given back or a watcher joins: every watcher listens, and beats
    /// at once instead of at its next third of a lease.
    public static let channel = "calwatch_fleet"

    static func seconds(_ time: Timestamp) -> String {
        String(Double(time.millisecondsSinceEpoch) / 1000)
    }

    // MARK: The calendars

    /// Adds calendars; refuses (adding none) when a name is taken.
    public func add(_ calendars: [FleetCalendar]) throws {
        do {
            try transaction {
                for calendar in calendars {
                    if let problem = calendar.problem {
                        throw Failure(description: "\(calendar.name): \(problem)", isRefusal: true)
                    }
                    var username: String?
                    var credential: String?
                    if case .caldav(_, let user, let name, _) = calendar.source {
                        (username, credential) = (user, name)
                    }
                    let every = String(calendar.source.every ?? 600)
                    let added = try connection.execute(
                        """
                        INSERT INTO calendars (name, kind, address, username, credential, every, person)
                        VALUES ($1, $2, $3, $4, $5, $6::integer, $7) ON CONFLICT (name) DO NOTHING RETURNING name
                        """,
                        [
                            calendar.name, calendar.source.kind, calendar.source.address, username, credential, every,
                            calendar.person,
                        ])
                    if added.isEmpty {
                        throw Failure(
                            description: "the fleet already has a calendar named \(calendar.name); remove it first "
                                + "(calwatch fleet remove \(calendar.name)) or choose another --name",
                            isRefusal: true)
                    }
                }
            }
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    /// Removes calendars by name; returns the names that were there. Their events stay in `event_log`.
    public func remove(_ names: [String]) throws -> [String] {
        do {
            return try connection.execute(
                "DELETE FROM calendars WHERE name = ANY($1::text[]) RETURNING name",
                [
                    Self.array(names)
                ]
            ).compactMap { $0[0] }
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    /// A calendar's row as `list` and `show` print it: its columns as written, and the calendar they describe
    /// or why a watcher does not read it.
    public struct Row: Sendable {
        public var fields: FleetCalendar.Fields
        public var calendar: Result<FleetCalendar, FleetCalendar.Refusal>
        public var watcher: String?
        public var leaseUntil: Timestamp?
        public var claimedAt: Timestamp?
        public var syncedAt: Timestamp?
        public var lastProblem: String?
    }

    /// The columns a row is read from, in the order `row` takes them.
    private static let rowColumns = """
        name, kind, address, username, credential, password_command::text, every::text, person, watcher,
        extract(epoch FROM lease_until) * 1000, extract(epoch FROM claimed_at) * 1000,
        extract(epoch FROM synced_at) * 1000, last_problem
        """

    /// Every calendar, by name; or those named.
    public func calendars(named names: [String]? = nil) throws -> [Row] {
        do {
            let rows = try connection.execute(
                """
                SELECT \(Self.rowColumns)
                FROM calendars WHERE $1::text[] IS NULL OR name = ANY($1::text[]) ORDER BY name
                """, [names.map(Self.array)])
            return rows.map(Self.row)
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    /// A row's columns from a fuzzer's bytes (and the fixtures it found): the columns of `row` separated by NUL,
    /// a column of the one byte 0x01 standing for NULL, missing ones NULL.
    public static func columns(fromFuzzInput bytes: [UInt8]) -> [String?] {
        let given = bytes.split(separator: 0, omittingEmptySubsequences: false).map { column in
            Array(column) == [1] ? nil : String(decoding: column, as: UTF8.self)
        }
        return (0..<13).map { $0 < given.count ? given[$0] : nil }
    }

    /// A row read back, checked as `fleet add` checks what it writes: the table is anyone's who can write it.
    public static func row(_ values: [String?]) -> Row {
        let fields = FleetCalendar.Fields(
            name: values[0], kind: values[1], address: values[2], username: values[3], credential: values[4],
            passwordCommand: values[5], every: values[6], person: values[7])
        func time(_ index: Int) -> Timestamp? {
            values[index].flatMap(Double.init).flatMap { $0.isFinite && abs($0) < 1e15 ? $0 : nil }
                .map { Timestamp(millisecondsSinceEpoch: Int64($0.rounded())) }
        }
        return Row(
            fields: fields,
            calendar: Result { () throws(FleetCalendar.Refusal) in try FleetCalendar(checking: fields) },
            watcher: values[8], leaseUntil: time(9), claimedAt: time(10), syncedAt: time(11), lastProblem: values[12])
    }

    /// A text array literal for `$n::text[]`.
    static func array(_ values: [String]) -> String {
        "{"
            + values.map {
                "\""
                    + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                        of: "\"", with: "\\\"") + "\""
            }.joined(separator: ",") + "}"
    }

    // MARK: Watchers and leases

    /// How far the watcher's clock (`at`) is ahead of the database's, in milliseconds (behind: negative).
    ///
    /// With `clock`, the watcher's clock is read just before and just after the query and the skew is what is left
    /// beyond half the round trip: a watcher stalled between reading `at` and reaching the database (a busy
    /// machine, a slow journal) is not a watcher whose clock is off.
    public func clockSkew(at: Timestamp, clock: (@Sendable () -> Timestamp)? = nil) throws -> Int64 {
        do {
            let before = clock?().millisecondsSinceEpoch
            let now = try connection.execute("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")
            let database = now.first?[0].flatMap { Int64($0) } ?? at.millisecondsSinceEpoch
            guard let before, let after = clock?().millisecondsSinceEpoch else {
                return at.millisecondsSinceEpoch - database
            }
            let skew = (before + after) / 2 - database
            let uncertainty = (after - before) / 2
            return skew > 0 ? max(0, skew - uncertainty) : min(0, skew + uncertainty)
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    /// How far a watcher's clock may be from the database's: a quarter of its lease (at least a second). Leases
    /// are written with the watcher's clock, so one a day ahead would keep its calendars for a day.
    public static func clockTolerance(lease: Int64) -> Int64 { max(1000, lease * 250) }

    /// The SQL condition on a `fleet_watchers` row that it is alive at the instant parameter `at` ("$2"): seen
    /// within its lease, and its clock within the tolerance (one seen in the future, or off by a day, is not).
    private static func alive(at: String) -> String {
        """
        seen > to_timestamp(\(at)::double precision) - make_interval(secs => lease_seconds)
        AND seen <= to_timestamp(\(at)::double precision) + make_interval(secs => lease_seconds)
        AND abs(coalesce(clock_skew_ms, 0)) <= greatest(1000, lease_seconds * 250)
        """
    }

    /// The watcher's clock skew at `at` when `tolerance` asks for a check (one query), else `nil`.
    private func skew(at: Timestamp, checking tolerance: Int64?, clock: (@Sendable () -> Timestamp)?) throws -> Int64? {
        try tolerance.map { _ in try clockSkew(at: at, clock: clock) }
    }

    /// Throws a `clockSkew` failure when `skew` is more than `tolerance` allows.
    private static func refuse(skew: Int64?, tolerance: Int64?) throws {
        guard let skew, let tolerance, abs(skew) > tolerance else { return }
        throw Failure(
            description: String(
                format: "this watcher's clock is %.1f s %@ the fleet database's (more than the %.1f s allowed, a "
                    + "quarter of the lease): it claims and renews nothing until they agree; keep its clock "
                    + "synchronised (NTP)", Double(abs(skew)) / 1000, skew > 0 ? "ahead of" : "behind",
                Double(tolerance) / 1000), clockSkew: skew)
    }

    /// Enters `watcher` in the fleet at `at`; throws a `clockSkew` failure (after entering it) when `at` is further
    /// from the database's clock than `clockTolerance` (ms). Refuses when a watcher of that name on another host or process was
    /// seen within its lease: two watchers of one name would renew each other's leases.
    public func join(
        watcher: String, host: String, pid: Int32, lease: Int64, clockTolerance: Int64? = nil,
        clock: (@Sendable () -> Timestamp)? = nil, at: Timestamp
    ) throws {
        let skew = try skew(at: at, checking: clockTolerance, clock: clock)
        do {
            try transaction {
                let other = try connection.execute(
                    """
                    SELECT host, pid FROM fleet_watchers
                    WHERE watcher = $1 AND stopped IS NULL AND (host <> $2 OR pid <> $3::integer)
                      AND seen > to_timestamp($4::double precision) - make_interval(secs => lease_seconds)
                    FOR UPDATE
                    """, [watcher, host, String(pid), Self.seconds(at)])
                if let row = other.first {
                    throw Failure(
                        description: "a watcher named \(watcher) runs on \(row[0] ?? "?") (pid \(row[1] ?? "?")); "
                            + "give each watcher of a fleet its own name (--instance or instance: in config.yml)",
                        isRefusal: true)
                }
                try connection.execute(
                    """
                    INSERT INTO fleet_watchers (watcher, host, pid, started, seen, lease_seconds, clock_skew_ms)
                    VALUES ($1, $2, $3::integer, to_timestamp($4::double precision), to_timestamp($4::double precision),
                            $5::integer, $6::bigint)
                    ON CONFLICT (watcher) DO UPDATE SET host = excluded.host, pid = excluded.pid,
                        started = excluded.started, seen = excluded.seen, stopped = NULL, calendars = 0,
                        lease_seconds = excluded.lease_seconds, clock_skew_ms = excluded.clock_skew_ms
                    """, [watcher, host, String(pid), Self.seconds(at), String(lease), skew.map(String.init)])
                try connection.execute("NOTIFY \(Self.channel)")
            }
        } catch let error as PostgresError {
            throw failure(error)
        }
        // After the row is there, so that `fleet status` shows a watcher whose clock is off, and by how much.
        try Self.refuse(skew: skew, tolerance: clockTolerance)
    }

    /// What a heartbeat found: the calendars the watcher holds now (its leases renewed), those it took, and how
    /// many it holds above its fair share.
    public struct Heartbeat: Sendable {
        public var held: [FleetCalendar]
        /// Rows held that a watcher does not read, by name, with why (written to their `last_problem`).
        public var refused: [String: FleetCalendar.Refusal] = [:]
        /// How the watcher reads each calendar of `held` it admitted (`FleetCalendar.admitted(by:)`).
        public var admitted: [String: FleetCalendar.Admitted] = [:]
        /// Taken at this heartbeat (free, or their lease expired), with how each came.
        public var claimed: [String]
        /// Held above the fair share: this many should be given back.
        public var excess: Int
        /// Watchers alive (seen within their lease, not stopped), this one included.
        public var watchers: Int
    }

    /// Renews the leases of what `watcher` holds, then takes free calendars up to its fair share (all calendars
    /// over the watchers alive, rounded up), in one transaction. `backlog`: events its journal holds that are not
    /// stored here yet. `takingExpired: false` takes only calendars no watcher holds, none whose lease
    /// expired (a watcher just back from being cut off: the others may be about to renew what looks expired).
    /// `clockTolerance` (milliseconds): refuse, renewing and taking nothing, when the watcher's clock (`clock`, read
    /// around the database's; else `at`) is further than this from the database's clock.
    public func heartbeat(
        watcher: String, lease: Int64, backlog: Int64, takingExpired: Bool = true, clockTolerance: Int64? = nil,
        clock: (@Sendable () -> Timestamp)? = nil, at: Timestamp
    ) throws -> Heartbeat {
        let skew = try skew(at: at, checking: clockTolerance, clock: clock)
        do {
            // Off: nothing renewed or taken; only the skew is written, for `fleet status`.
            try Self.refuse(skew: skew, tolerance: clockTolerance)
        } catch {
            _ = try? connection.execute(
                "UPDATE fleet_watchers SET clock_skew_ms = $2::bigint WHERE watcher = $1",
                [watcher, skew.map(String.init)])
            throw error
        }
        let now = Self.seconds(at)
        do {
            return try transaction {
                let renewed = try connection.execute(
                    """
                    UPDATE calendars SET lease_until = to_timestamp($2::double precision) + make_interval(secs => $3::integer),
                        synced_at = to_timestamp($2::double precision)
                    WHERE watcher = $1 RETURNING name
                    """, [watcher, now, String(lease)])
                var held = renewed.count
                let counts = try connection.execute(
                    """
                    SELECT (SELECT count(*) FROM calendars),
                           (SELECT count(*) FROM fleet_watchers WHERE stopped IS NULL AND (watcher = $1
                                OR \(Self.alive(at: "$2"))))
                    """, [watcher, now])
                let total = Int(counts.first?[0] ?? "0") ?? 0
                let alive = max(1, Int(counts.first?[1] ?? "1") ?? 1)
                let share = (total + alive - 1) / alive
                var claimed: [String] = []
                if held < share {
                    claimed = try connection.execute(
                        """
                        WITH free AS (
                            SELECT name, watcher AS previous, lease_until, released_at FROM calendars
                            WHERE watcher IS NULL OR ($5::boolean AND lease_until < to_timestamp($2::double precision))
                            ORDER BY name LIMIT $4::integer FOR UPDATE SKIP LOCKED
                        ), taken AS (
                            UPDATE calendars AS c SET watcher = $1,
                                lease_until = to_timestamp($2::double precision) + make_interval(secs => $3::integer),
                                claimed_at = to_timestamp($2::double precision)
                            FROM free WHERE c.name = free.name
                            RETURNING c.name, free.previous, free.lease_until, free.released_at
                        ), logged AS (
                            INSERT INTO fleet_handovers (calendar, previous, watcher, reason, free_since, claimed_at)
                            SELECT name, previous, $1,
                                   CASE WHEN previous IS NOT NULL THEN 'expired'
                                        WHEN released_at IS NOT NULL THEN 'released' ELSE 'new' END,
                                   CASE WHEN previous IS NOT NULL THEN lease_until ELSE released_at END,
                                   to_timestamp($2::double precision)
                            FROM taken
                        )
                        SELECT name FROM taken
                        """, [watcher, now, String(lease), String(share - held), takingExpired ? "true" : "false"]
                    ).compactMap { $0[0] }
                    held += claimed.count
                }
                try connection.execute(
                    """
                    UPDATE fleet_watchers SET seen = to_timestamp($2::double precision), calendars = $3::integer,
                        backlog = $4::bigint, stopped = NULL, clock_skew_ms = $5::bigint
                    WHERE watcher = $1
                    """, [watcher, now, String(held), String(backlog), skew.map(String.init)])
                let rows = try connection.execute(
                    "SELECT \(Self.rowColumns) FROM calendars WHERE watcher = $1 ORDER BY name", [watcher]
                ).map(Self.row)
                var beat = Heartbeat(
                    held: [], claimed: claimed, excess: max(0, held - share), watchers: alive)
                for row in rows {
                    switch row.calendar {
                    case .success(let calendar): beat.held.append(calendar)
                    case .failure(let refusal):
                        beat.refused[row.fields.name ?? ""] = refusal
                        if row.lastProblem != refusal.description {
                            try connection.execute(
                                "UPDATE calendars SET last_problem = $2 WHERE name = $1",
                                [row.fields.name, refusal.description])
                        }
                    }
                }
                return beat
            }
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    /// Gives calendars back (after the watcher has stored everything it committed about them), so that another
    /// watcher takes them at its next heartbeat. Only those `watcher` still holds.
    @discardableResult
    public func release(_ names: [String], watcher: String, at: Timestamp) throws -> [String] {
        do {
            let released = try connection.execute(
                """
                UPDATE calendars SET watcher = NULL, lease_until = NULL, released_at = to_timestamp($3::double precision)
                WHERE watcher = $1 AND name = ANY($2::text[]) RETURNING name
                """, [watcher, Self.array(names), Self.seconds(at)]
            ).compactMap { $0[0] }
            if !released.isEmpty { try connection.execute("NOTIFY \(Self.channel)") }
            return released
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    /// The watcher leaves the fleet: everything it holds is given back at once.
    public func leave(watcher: String, at: Timestamp) throws {
        do {
            try transaction {
                try connection.execute(
                    """
                    UPDATE calendars SET watcher = NULL, lease_until = NULL,
                        released_at = to_timestamp($2::double precision)
                    WHERE watcher = $1
                    """, [watcher, Self.seconds(at)])
                try connection.execute(
                    """
                    UPDATE fleet_watchers SET stopped = to_timestamp($2::double precision), calendars = 0
                    WHERE watcher = $1
                    """, [watcher, Self.seconds(at)])
                try connection.execute("NOTIFY \(Self.channel)")
            }
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    /// Records the last problem its watcher found reading each calendar named (a file that does not parse, a
    /// folder gone).
    public func noteProblems(_ problems: [String: String], watcher: String) throws {
        do {
            for (name, problem) in problems {
                try connection.execute(
                    "UPDATE calendars SET last_problem = $3 WHERE name = $1 AND watcher = $2", [name, watcher, problem])
            }
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    // MARK: Hand-over

    /// What the fleet delivered about `calendars` whose expiry has not passed at `at`: what a watcher taking them
    /// over counts as emitted (`PlannerState.inherit`).
    public func delivered(_ calendars: [String], at: Timestamp) throws -> [PlannerState.Delivered] {
        guard !calendars.isEmpty else { return [] }
        do {
            let rows = try connection.execute(
                """
                SELECT e.id, e.type, o.calendar, o.uid, o.recurrence_id, extract(epoch FROM o.start)::bigint,
                       extract(epoch FROM o."end")::bigint, extract(epoch FROM e.time)::bigint,
                       extract(epoch FROM e.expiry)::bigint,
                       extract(epoch FROM (e.details #>> '{answer,until}')::timestamptz)::bigint,
                       substr(e.watcher, 7)
                FROM event_log AS e
                JOIN occurrences AS o ON o.watcher = e.watcher AND o.subject = e.subject AND o.version = e.version
                WHERE e.watcher = ANY($1::text[]) AND e.expiry >= to_timestamp($2::double precision)
                """, [Self.array(calendars.map(PostgresSettings.fleetRecord)), Self.seconds(at)])
            return rows.compactMap { row in
                guard let id = row[0].flatMap(EventID.init(hex:)), let type = row[1].flatMap(EventType.init),
                    let uid = row[3], let start = row[5].flatMap({ Int64($0) }),
                    let end = row[6].flatMap({ Int64($0) }),
                    let time = row[7].flatMap({ Int64($0) }), let expiry = row[8].flatMap({ Int64($0) })
                else { return nil }
                let key = OccurrenceKey(
                    calendar: row[2] ?? "", uid: uid, recurrenceID: row[4].flatMap(DateValueText.init(text:)),
                    scope: row[10] ?? "")
                return PlannerState.Delivered(
                    id: id, type: type, key: key, occurrenceStart: Instant(secondsSinceEpoch: start),
                    occurrenceEnd: Instant(secondsSinceEpoch: end), time: Instant(secondsSinceEpoch: time),
                    expiry: Instant(secondsSinceEpoch: expiry),
                    snoozedUntil: row[9].flatMap { Int64($0) }.map(Instant.init(secondsSinceEpoch:)))
            }
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    // MARK: What operators read

    /// The last `limit` events stored about a calendar: time, type, subject and the watcher that sent each.
    public func recentEvents(of calendar: String, limit: Int) throws -> [[String]] {
        do {
            return try connection.execute(
                """
                SELECT to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), type, subject,
                       coalesce(sender, '-')
                FROM event_log WHERE watcher = $1 ORDER BY time DESC, seq DESC LIMIT $2::integer
                """, [PostgresSettings.fleetRecord(calendar), String(limit)]
            ).map { $0.map { $0 ?? "" } }
        } catch let error as PostgresError {
            throw failure(error)
        }
    }

    /// The fleet as `calwatch fleet status` shows it.
    public struct Status: Sendable {
        public struct Watcher: Sendable {
            public var name: String
            public var host: String
            public var pid: Int
            public var seen: Timestamp
            public var alive: Bool
            public var stopped: Bool
            public var calendars: Int
            public var backlog: Int64
            /// Reminders it sent in the last hour, and how late they were committed (seconds).
            public var reminders: Int
            public var lateness: (p50: Double, max: Double)?
            /// How far its clock was from the database's at its last heartbeat (milliseconds, ahead positive).
            public var clockSkew: Int64?
            /// Whether that is more than a watcher may be off (it then claims and renews nothing).
            public var clockRefused: Bool
        }
        public var calendars: Int
        /// Calendars no watcher holds, and those whose lease has expired.
        public var free: Int
        public var expired: Int
        public var watchers: [Watcher]
        /// Hand-overs of the last hour: how many, how, and how long calendars were free before taken (seconds).
        public var handovers: (count: Int, expired: Int, released: Int, gapP50: Double, gapMax: Double)
    }

    public func status(at: Timestamp) throws -> Status {
        let now = Self.seconds(at)
        do {
            let counts =
                try connection.execute(
                    """
                    SELECT count(*), count(*) FILTER (WHERE watcher IS NULL),
                           count(*) FILTER (WHERE watcher IS NOT NULL AND lease_until < to_timestamp($1::double precision))
                    FROM calendars
                    """, [now]
                ).first ?? []
            func int(_ value: String??) -> Int { Int((value ?? nil) ?? "") ?? 0 }
            func double(_ value: String??) -> Double { Double((value ?? nil) ?? "") ?? 0 }
            let watchers = try connection.execute(
                """
                SELECT w.watcher, w.host, w.pid, extract(epoch FROM w.seen) * 1000,
                       w.stopped IS NULL AND \(Self.alive(at: "$1")),
                       w.stopped IS NOT NULL, w.calendars, w.backlog, late.reminders, late.p50, late.max,
                       w.clock_skew_ms, abs(coalesce(w.clock_skew_ms, 0)) > greatest(1000, w.lease_seconds * 250)
                FROM fleet_watchers AS w
                LEFT JOIN LATERAL (
                    SELECT count(*) AS reminders,
                           percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM recorded - time)) AS p50,
                           max(extract(epoch FROM recorded - time)) AS max
                    FROM event_log
                    WHERE sender = w.watcher AND type = 'reminderDue'
                      AND time > to_timestamp($1::double precision) - interval '1 hour'
                ) AS late ON true
                ORDER BY w.watcher
                """, [now])
            let handovers =
                try connection.execute(
                    """
                    SELECT count(*), count(*) FILTER (WHERE reason = 'expired'),
                           count(*) FILTER (WHERE reason = 'released'),
                           percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM claimed_at - free_since)),
                           max(extract(epoch FROM claimed_at - free_since))
                    FROM fleet_handovers
                    WHERE reason <> 'new' AND claimed_at > to_timestamp($1::double precision) - interval '1 hour'
                    """, [now]
                ).first ?? []
            return Status(
                calendars: int(counts.first), free: int(counts.dropFirst().first),
                expired: int(counts.dropFirst(2).first),
                watchers: watchers.map { row in
                    let reminders = int(row[8])
                    return Status.Watcher(
                        name: row[0] ?? "", host: row[1] ?? "", pid: int(row[2]),
                        seen: Timestamp(millisecondsSinceEpoch: Int64(double(row[3]))), alive: row[4] == "t",
                        stopped: row[5] == "t", calendars: int(row[6]), backlog: Int64(int(row[7])),
                        reminders: reminders, lateness: reminders > 0 ? (double(row[9]), double(row[10])) : nil,
                        clockSkew: row[11].flatMap { Int64($0) }, clockRefused: row[12] == "t")
                },
                handovers: (
                    int(handovers.first), int(handovers.dropFirst().first), int(handovers.dropFirst(2).first),
                    double(handovers.dropFirst(3).first), double(handovers.dropFirst(4).first)
                ))
        } catch let error as PostgresError {
            throw failure(error)
        }
    }
}
