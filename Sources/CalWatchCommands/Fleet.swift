import ArgumentParser
import CalWatchCore
import CalWatchPostgres
import CalWatchRuntime
import Foundation

extension CalwatchCommand {
    /// `calwatch fleet`: the calendars a fleet of watchers shares through PostgreSQL.
    struct Fleet: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage the calendars a fleet of watchers shares through PostgreSQL.",
            discussion: """
                A fleet keeps its calendars as rows of the `calendars` table in a PostgreSQL database. Each \
                `calwatch watch --fleet URL` claims its fair share of them under a lease it renews every third of \
                the lease (30 s by default); a calendar whose watcher stopped renewing is taken by another within a \
                lease, and a watcher stopped with SIGTERM gives its calendars back at once. Events go into that \
                database once each whichever watcher sends them (the `sender` column says which did).

                The database's layout is made by the first command that needs it. --database may come from \
                $CALWATCH_FLEET_DATABASE; a password comes from the URL's own setting, PGPASSWORD or PGPASSFILE. \
                See docs/fleet.md.

                Examples:
                  calwatch fleet add --database postgres:///calwatch /srv/calendars/alice --person alice@example.org
                  calwatch fleet add --database postgres:///calwatch --feed https://example.org/team.ics --name team
                  calwatch fleet add --database postgres:///calwatch --caldav https://dav.example.org/ \\
                      --user bob --credential dav-bob --name bob
                  calwatch fleet add --database postgres:///calwatch --account work --name carol
                  calwatch fleet sign-in --database postgres:///calwatch carol --no-browser
                  calwatch fleet list --database postgres:///calwatch
                  calwatch fleet status --database postgres:///calwatch
                """,
            subcommands: [Add.self, SignIn.self, Remove.self, List.self, Show.self, Status.self])
    }
}

/// `--database`, or `$CALWATCH_FLEET_DATABASE`.
struct FleetDatabaseOption: ParsableArguments {
    @Option(help: ArgumentHelp("The fleet's PostgreSQL database (or $CALWATCH_FLEET_DATABASE).", valueName: "url"))
    var database: String?

    var url: String? { database ?? ProcessInfo.processInfo.environment["CALWATCH_FLEET_DATABASE"] }

    func validate() throws {
        guard url != nil else {
            throw ValidationError("name the fleet's database: --database postgres://… (or $CALWATCH_FLEET_DATABASE)")
        }
    }

    /// Connects (off Swift's pool: libpq blocks) and runs `body`; a failure is said on standard error, exit 74.
    func run<T: Sendable>(_ body: @escaping @Sendable (FleetDatabase) throws -> T) async throws -> T {
        let url = url ?? ""
        do {
            // libpq blocks: on a thread of its own, not one of Swift's pool.
            return try await withCheckedThrowingContinuation { continuation in
                Thread {
                    continuation.resume(
                        with: Result {
                            let database: FleetDatabase
                            do {
                                database = try FleetDatabase(url: url)
                            } catch let error as PostgresError {
                                throw FleetDatabase.Failure(
                                    description: "cannot reach the fleet's database \(ConnectionString(url).redacted): "
                                        + ConnectionString(url).scrubbed(error.message))
                            }
                            return try body(database)
                        })
                }.start()
            }
        } catch let error as FleetDatabase.Failure {
            StandardStreams.error("calwatch: \(error)\n")
            throw error.isRefusal ? ExitCode.dataError : ExitCode.ioError
        } catch let error as SinkError {
            StandardStreams.error("calwatch: \(error)\n")
            throw ExitCode.ioError
        }
    }
}

extension CalwatchCommand.Fleet {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Add calendars to the fleet: paths every watcher reaches, an ICS feed, a CalDAV account or a Microsoft "
                + "365 or Google account.",
            discussion: """
                A path (a .ics file, a vdir or Radicale collection or root, a CalDAV export) must be where every \
                watcher finds it (shared storage); it is kept absolute. Its name is --name, else the last part of \
                the path. Names are what rules and filters match, and each calendar's events are kept under it.

                A CalDAV account's password is never stored, nor a program to run: --credential names it, and each \
                watcher resolves the name on its own machine, from `fleet: credentials:` in its config.yml (a \
                program that prints the password) or from a systemd credential of that name \
                ($CREDENTIALS_DIRECTORY). A path is read only by watchers whose config.yml lists a folder above it \
                under `fleet: roots:`. Watchers check every row as this command does, whoever wrote it.

                A Microsoft 365 or Google account (--account) names the account of the watchers' config.yml \
                (accounts:) whose application it signs in with; someone signs in to it with `calwatch fleet \
                sign-in NAME`, which keeps its tokens sealed in the database. Its calendars appear as \
                <account>/<calendar>, in the calendar's own scope.
                """)

        @OptionGroup var database: FleetDatabaseOption

        @Argument(help: ArgumentHelp("Calendar paths, as every watcher sees them.", valueName: "path"))
        var paths: [String] = []

        @Option(help: ArgumentHelp("An ICS feed (https://, http://, webcal://).", valueName: "url"))
        var feed: String?

        @Option(help: ArgumentHelp("A CalDAV server, principal or collection.", valueName: "url"))
        var caldav: String?

        @Option(help: ArgumentHelp("The CalDAV account.", valueName: "name"))
        var user: String?

        @Option(
            help: ArgumentHelp(
                "A Microsoft 365 or Google account, signed in to with the application of this account of the "
                    + "watchers' config.yml (accounts:).", valueName: "account"))
        var account: String?

        @Option(
            help: ArgumentHelp(
                "The name of the CalDAV password's credential, which each watcher resolves on its own machine.",
                valueName: "name"))
        var credential: String?

        @Option(
            parsing: .upToNextOption,
            help: ArgumentHelp("No longer kept: give --credential instead.", valueName: "command", visibility: .hidden))
        var passwordCommand: [String] = []

        @Option(help: ArgumentHelp("The calendar's name in the fleet (one calendar at a time).", valueName: "name"))
        var name: String?

        @Option(
            help: ArgumentHelp(
                "Whose calendar it is: their address, which tells their own attendee entries apart (whether they "
                    + "declined), as me: in config.yml does.", valueName: "address"))
        var person: String?

        @Option(help: ArgumentHelp("How often a feed or an account is polled.", valueName: "duration"))
        var every = DurationArgument("10m")

        func validate() throws {
            let kinds = [!paths.isEmpty, feed != nil, caldav != nil, account != nil].filter { $0 }.count
            guard kinds == 1 else {
                throw ValidationError("give paths, or --feed URL, or --caldav URL, or --account NAME (one of them).")
            }
            if paths.count > 1 && name != nil {
                throw ValidationError("--name names one calendar; add the paths one at a time to name each.")
            }
            if (feed != nil || caldav != nil || account != nil) && name == nil {
                throw ValidationError("a calendar on a server needs --name.")
            }
            if !passwordCommand.isEmpty {
                throw ValidationError(
                    "the fleet's table keeps no program to run (whoever can write it would run programs on every "
                        + "watcher); give --credential NAME, and on each watcher define NAME under fleet: credentials: "
                        + "in its config.yml (such as NAME: [pass, show, dav/carol]) or as a systemd credential.")
            }
            if caldav == nil && (user != nil || credential != nil) {
                throw ValidationError("--user and --credential go with --caldav.")
            }
            let seconds = try every.checked("--every", in: FleetCalendar.every, example: "10m")
            for name in names {
                if let problem = FleetCalendar.problem(withName: name) { throw ValidationError("\(problem).") }
            }
            // What a watcher checks on every row it reads (address, password in it, credential's name), said
            // before anything is written.
            let server: FleetCalendar.Source? =
                feed.map { .feed(url: $0, every: seconds) }
                ?? caldav.map { .caldav(url: $0, username: user, credential: credential, every: seconds) }
                ?? account.map { .account(account: $0, every: seconds) }
            if let server, let name, let problem = FleetCalendar(name: name, source: server, person: person).problem {
                throw ValidationError("\(problem).")
            }
        }

        /// The names the calendars get.
        private var names: [String] {
            if let name { return [name] }
            return paths.map { path in
                let last = URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent
                return last.hasSuffix(".ics") ? String(last.dropLast(4)) : last
            }
        }

        func run() async throws {
            let seconds = every.seconds ?? 600
            var calendars: [FleetCalendar] = []
            for (path, name) in zip(paths, names) {
                let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
                guard FileManager.default.fileExists(atPath: absolute) else {
                    StandardStreams.error(
                        "calwatch: \(absolute): no such file or folder here; add paths as the watchers see them, from "
                            + "a machine that mounts the same storage\n")
                    throw ExitCode.noInput
                }
                calendars.append(FleetCalendar(name: name, source: .path(absolute), person: person))
            }
            if let feed, let name {
                calendars.append(FleetCalendar(name: name, source: .feed(url: feed, every: seconds), person: person))
            }
            if let caldav, let name {
                calendars.append(
                    FleetCalendar(
                        name: name,
                        source: .caldav(url: caldav, username: user, credential: credential, every: seconds),
                        person: person))
            }
            if let account, let name {
                calendars.append(
                    FleetCalendar(name: name, source: .account(account: account, every: seconds), person: person))
            }
            let added = calendars
            try await database.run { try $0.add(added) }
            for calendar in added {
                StandardStreams.report("added \(calendar.name) (\(calendar.source.kind) \(calendar.source.address))\n")
                if case .account = calendar.source {
                    StandardStreams.error(
                        "Sign in to it with: calwatch fleet sign-in \(calendar.name) (its watchers read it once "
                            + "signed in)\n")
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove calendars from the fleet (their watchers stop reading them at their next heartbeat).",
            discussion: "The events already stored stay in event_log.")

        @OptionGroup var database: FleetDatabaseOption

        @Argument(help: ArgumentHelp("The calendars' names.", valueName: "name"))
        var names: [String]

        func run() async throws {
            let names = names
            let removed = try await database.run { try $0.remove(names) }
            for name in names where removed.contains(name) { StandardStreams.report("removed \(name)\n") }
            let missing = names.filter { !removed.contains($0) }
            if !missing.isEmpty {
                StandardStreams.error(
                    "calwatch: the fleet has no calendar named \(missing.joined(separator: ", ")) (calwatch fleet list)\n"
                )
                throw ExitCode.dataError
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the fleet's calendars: name, kind, where from, which watcher holds it and until when.")

        @OptionGroup var database: FleetDatabaseOption

        @Flag(help: "One JSON object per line instead of a table.")
        var json = false

        func run() async throws {
            let rows = try await database.run { try $0.calendars() }
            let now = CommandSupport.timestamp
            if json {
                for row in rows {
                    var writer = JSONLineWriter(capacity: 256)
                    writer.beginObject()
                    writer.field("name", row.fields.name)
                    writer.field("kind", row.fields.kind)
                    writer.field("address", row.fields.address)
                    writer.field("person", row.fields.person)
                    writer.field("watcher", row.watcher)
                    writer.field("leaseUntil", row.leaseUntil?.instant)
                    if case .failure(let refusal) = row.calendar { writer.field("refused", refusal.description) }
                    writer.endObject()
                    StandardStreams.report(String(decoding: writer.bytes, as: UTF8.self) + "\n")
                }
                return
            }
            var lines = [["NAME", "KIND", "ADDRESS", "WATCHER", "LEASE"]]
            for row in rows {
                var watcher = row.watcher ?? "-"
                if case .failure = row.calendar { watcher += " (not read: calwatch fleet show)" }
                lines.append([
                    row.fields.name ?? "", row.fields.kind ?? "", row.fields.address ?? "", watcher,
                    FleetText.lease(row.leaseUntil, now: now),
                ])
            }
            StandardStreams.report(FleetText.table(lines.map { $0.map(FleetText.cell) }))
            StandardStreams.report("\(rows.count) calendar(s)\n")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one calendar of the fleet: its source, its watcher and lease, its last events.")

        @OptionGroup var database: FleetDatabaseOption

        @Argument(help: ArgumentHelp("The calendar's name.", valueName: "name"))
        var name: String

        func run() async throws {
            let name = name
            let (rows, events, signIns) = try await database.run { database in
                (
                    try database.calendars(named: [name]), try database.recentEvents(of: name, limit: 10),
                    try database.accountSignIns([name])
                )
            }
            let signIn = signIns[name]
            guard let row = rows.first else {
                StandardStreams.error("calwatch: the fleet has no calendar named \(name) (calwatch fleet list)\n")
                throw ExitCode.dataError
            }
            let now = CommandSupport.timestamp
            let fields = row.fields
            var text = "\(FleetText.cell(fields.name ?? ""))\n"
            text += "  source:   \(FleetText.cell(fields.kind ?? "")) \(FleetText.cell(fields.address ?? ""))\n"
            if fields.kind == "caldav" {
                let credential = fields.credential.map { "the credential \(FleetText.cell($0))" } ?? "none"
                text += "  account:  \(FleetText.cell(fields.username ?? "-")), password from \(credential)\n"
            }
            if fields.kind == "account" {
                text +=
                    "  signed in: "
                    + (signIn.map { kept in
                        (kept.user.map { "as \(FleetText.cell($0)), " } ?? "")
                            + (kept.signedIn.map { "\($0.instant), " } ?? "")
                            + "tokens last kept \(kept.saved.map { "\($0.instant)" } ?? "-") by "
                            + FleetText.cell(kept.savedBy ?? "-")
                    } ?? "no (calwatch fleet sign-in \(FleetText.cell(name)))") + "\n"
            }
            if let person = fields.person { text += "  person:   \(FleetText.cell(person))\n" }
            if case .failure(let refusal) = row.calendar {
                text += "  refused:  \(FleetText.cell(refusal.description))\n"
            }
            text += "  watcher:  \(row.watcher.map(FleetText.cell) ?? "none")"
            text += row.watcher == nil ? "\n" : ", lease \(FleetText.lease(row.leaseUntil, now: now))\n"
            if let claimed = row.claimedAt { text += "  claimed:  \(claimed.instant)\n" }
            if let synced = row.syncedAt { text += "  followed: \(synced.instant) (its watcher's last heartbeat)\n" }
            if let problem = row.lastProblem { text += "  problem:  \(FleetText.cell(problem))\n" }
            text += events.isEmpty ? "  no events stored yet\n" : "  last events (time, type, subject, sent by):\n"
            for event in events {
                text += "    \(event.map(FleetText.cell).joined(separator: "  "))\n"
            }
            StandardStreams.report(text)
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The fleet at a glance: its watchers, what each holds, its backlog and lateness, hand-overs.",
            discussion: """
                A watcher is alive when it was seen within its lease and its clock agrees with the database's \
                within a quarter of its lease (CLOCK: how far ahead or behind it was at its last heartbeat; one \
                further off claims and renews nothing). Lateness is how long after its time each \
                reminder of the last hour was committed, as the fleet's database has it; a hand-over's gap is how \
                long a calendar was free (released, or its lease expired) before another watcher took it.
                """)

        @OptionGroup var database: FleetDatabaseOption

        func run() async throws {
            let now = CommandSupport.timestamp
            let status = try await database.run { try $0.status(at: now) }
            StandardStreams.report(FleetText.status(status, now: now))
        }
    }
}

/// How the fleet's commands print.
enum FleetText {
    /// A value for one cell: on one line, its control characters shown, not obeyed.
    static func cell(_ text: String) -> String { TerminalText.safe(text, keepingLines: false) }

    /// Columns padded to their widest cell, by Unicode scalars.
    static func table(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        var widths = first.map { _ in 0 }
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.unicodeScalars.count) }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1
                    ? cell : cell + String(repeating: " ", count: widths[index] - cell.unicodeScalars.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    static func lease(_ until: Timestamp?, now: Timestamp) -> String {
        guard let until else { return "-" }
        let seconds = (until.millisecondsSinceEpoch - now.millisecondsSinceEpoch) / 1000
        return seconds >= 0 ? "\(seconds)s left" : "expired \(-seconds)s ago"
    }

    static func status(_ status: FleetDatabase.Status, now: Timestamp) -> String {
        var text = "\(status.calendars) calendar(s), \(status.watchers.filter(\.alive).count) watcher(s) alive; "
        text += "\(status.free) without a watcher, \(status.expired) whose lease expired\n\n"
        var rows = [
            [
                "WATCHER", "HOST", "PID", "STATE", "SEEN", "CLOCK", "CALENDARS", "BACKLOG", "REMINDERS 1H", "LATE P50",
                "LATE MAX",
            ]
        ]
        for watcher in status.watchers {
            let seen = (now.millisecondsSinceEpoch - watcher.seen.millisecondsSinceEpoch) / 1000
            let state =
                watcher.stopped
                ? "stopped"
                : watcher.clockRefused ? "clock off" : watcher.alive ? "alive" : seen < 0 ? "clock off" : "gone"
            rows.append([
                watcher.name, watcher.host, String(watcher.pid), state,
                seen < 0 ? "in \(-seen)s (its clock is ahead)" : "\(seen)s ago",
                watcher.clockSkew.map { String(format: "%+.1fs", Double($0) / 1000) } ?? "-",
                String(watcher.calendars),
                String(watcher.backlog), String(watcher.reminders),
                watcher.lateness.map { String(format: "%.1fs", $0.p50) } ?? "-",
                watcher.lateness.map { String(format: "%.1fs", $0.max) } ?? "-",
            ])
        }
        text += table(rows.map { $0.map(FleetText.cell) })
        let handovers = status.handovers
        text += "\nhand-overs in the last hour: \(handovers.count)"
        if handovers.count > 0 {
            text += " (\(handovers.expired) after a lease expired, \(handovers.released) given back); free for "
            text += String(format: "p50 %.1fs, max %.1fs", handovers.gapP50, handovers.gapMax)
        }
        return text + "\n"
    }
}
