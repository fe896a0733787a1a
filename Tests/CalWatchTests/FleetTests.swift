import Foundation
import Logging
import Testing

@testable import CalWatchCore
@testable import CalWatchDaemon
@testable import CalWatchPostgres
@testable import CalWatchRemote
@testable import CalWatchRuntime

/// A fleet's calendars and leases in a real PostgreSQL server (Debian's, started per test), on instants the test
/// gives: who holds what after each heartbeat, what expires when, what is logged as a hand-over. And the
/// `calwatch fleet` commands an operator types.
@Suite(.timeLimit(.minutes(5))) struct FleetTests {
    let cli = CommandLineTests()

    /// An instant `seconds` after a fixed start.
    static func at(_ seconds: Int64) -> Timestamp {
        Timestamp(millisecondsSinceEpoch: (1_800_000_000 + seconds) * 1000)
    }

    /// `count` calendars named `c00`, `c01`, … (paths need not exist for the database).
    static func calendars(_ count: Int) -> [FleetCalendar] {
        (0..<count).map { FleetCalendar(name: String(format: "c%02d", $0), source: .path("/srv/calendars/\($0)")) }
    }

    static func database(_ server: PostgresServer) async throws -> FleetDatabase {
        try await offCooperativePool { try FleetDatabase(url: server.url) }
    }

    @Test func watchersShareTheCalendarsFairlyAndTakeOverOnlyAfterALeaseExpires() async throws {
        try await PostgresServer.with { server in
            let fleet = try await Self.database(server)
            try await offCooperativePool {
                try fleet.add(Self.calendars(10))
                try fleet.join(watcher: "a", host: "h", pid: 1, lease: 30, at: Self.at(0))
                // Alone, a takes everything.
                let alone = try fleet.heartbeat(watcher: "a", lease: 30, backlog: 0, at: Self.at(0))
                #expect(alone.held.count == 10 && alone.claimed.count == 10 && alone.excess == 0)

                // b joins: nothing is free yet, and a learns at its next beat that it holds five too many.
                try fleet.join(watcher: "b", host: "h", pid: 2, lease: 30, at: Self.at(1))
                let joined = try fleet.heartbeat(watcher: "b", lease: 30, backlog: 0, at: Self.at(1))
                #expect(joined.held.isEmpty && joined.watchers == 2)
                let crowded = try fleet.heartbeat(watcher: "a", lease: 30, backlog: 0, at: Self.at(2))
                #expect(crowded.held.count == 10 && crowded.excess == 5)
                let given = Array(crowded.held.suffix(5).map(\.name))
                #expect(try fleet.release(given, watcher: "a", at: Self.at(2)) == given)
                // A watcher cannot give back what it does not hold.
                #expect(try fleet.release(given, watcher: "a", at: Self.at(2)).isEmpty)
                let shared = try fleet.heartbeat(watcher: "b", lease: 30, backlog: 0, at: Self.at(3))
                #expect(shared.claimed.sorted() == given.sorted() && shared.excess == 0)

                // a stops beating (killed) at 2: its leases run to 32; b takes nothing before.
                let early = try fleet.heartbeat(watcher: "b", lease: 30, backlog: 0, at: Self.at(31))
                #expect(early.held.count == 5 && early.claimed.isEmpty && early.watchers == 2)
                // A watcher just back from being cut off renews, and takes nothing whose lease expired yet.
                let cautious = try fleet.heartbeat(
                    watcher: "b", lease: 30, backlog: 0, takingExpired: false, at: Self.at(33))
                #expect(cautious.held.count == 5 && cautious.claimed.isEmpty)
                let late = try fleet.heartbeat(watcher: "b", lease: 30, backlog: 0, at: Self.at(33))
                #expect(late.held.count == 10 && late.claimed.count == 5 && late.watchers == 1)

                // A watcher that comes back after its calendars were taken renews nothing it lost, and finds nothing
                // free: b gives back its excess at its next beat.
                let back = try fleet.heartbeat(watcher: "a", lease: 30, backlog: 0, at: Self.at(34))
                #expect(back.held.isEmpty && back.claimed.isEmpty && back.watchers == 2)
                #expect(try fleet.heartbeat(watcher: "b", lease: 30, backlog: 0, at: Self.at(35)).excess == 5)

                let log = try fleet.connection.execute(
                    "SELECT reason, count(*), max(extract(epoch FROM claimed_at - free_since))::integer FROM fleet_handovers "
                        + "GROUP BY reason ORDER BY reason")
                #expect(
                    log.map { $0.map { $0 ?? "-" } } == [
                        ["expired", "5", "1"], ["new", "10", "-"], ["released", "5", "1"],
                    ])
            }
        }
    }

    @Test func aWatcherOfTheSameNameIsRefusedWhileTheFirstLivesAndLeavingFreesEverything() async throws {
        try await PostgresServer.with { server in
            let fleet = try await Self.database(server)
            try await offCooperativePool {
                try fleet.add(Self.calendars(4))
                try fleet.join(watcher: "w", host: "one", pid: 10, lease: 30, at: Self.at(0))
                _ = try fleet.heartbeat(watcher: "w", lease: 30, backlog: 3, at: Self.at(0))
                #expect(throws: FleetDatabase.Failure.self) {
                    try fleet.join(watcher: "w", host: "two", pid: 11, lease: 30, at: Self.at(10))
                }
                // After its lease, the name is free again (the first one is gone).
                try fleet.join(watcher: "w", host: "two", pid: 11, lease: 30, at: Self.at(31))

                let status = try fleet.status(at: Self.at(31))
                #expect(status.calendars == 4 && status.free == 0 && status.expired == 4)
                try fleet.leave(watcher: "w", at: Self.at(32))
                let after = try fleet.status(at: Self.at(32))
                #expect(after.free == 4 && after.watchers.first?.stopped == true)
                #expect(after.watchers.first.map { !$0.alive } == true)
            }
        }
    }

    @Test func operatorsAddListShowAndRemoveCalendarsWithClearErrors() async throws {
        try await PostgresServer.with { server in
            let folder = TestFolders.path("calwatch-fleet")
            for person in ["alice", "bob"] {
                try FileManager.default.createDirectory(
                    atPath: folder + "/" + person, withIntermediateDirectories: true)
            }
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let database = ["--database", server.url]
            let added = try await cli.calwatch(
                ["fleet", "add"] + database + [folder + "/alice", folder + "/bob", "--person", "ops@example.org"])
            #expect(added.status == 0, "\(added.errors)")
            #expect(added.output.contains("added alice (path \(folder)/alice)"))
            let feed = try await cli.calwatch(
                ["fleet", "add"] + database + ["--feed", "https://example.org/team.ics", "--name", "team"])
            #expect(feed.status == 0, "\(feed.errors)")
            let caldav = try await cli.calwatch(
                ["fleet", "add"] + database + [
                    "--caldav", "https://dav.example.org/", "--user", "carol", "--name", "carol",
                    "--credential", "dav-carol",
                ])
            #expect(caldav.status == 0, "\(caldav.errors)")
            // A program to run is no longer kept: the row would run it on every watcher.
            let command = try await cli.calwatch(
                ["fleet", "add"] + database + [
                    "--caldav", "https://dav.example.org/", "--user", "dan", "--name", "dan",
                    "--password-command", "pass", "show", "dav/dan",
                ])
            #expect(command.status == 64 && command.errors.contains("--credential"), "\(command.errors)")
            // Out of bounds as a watcher would find it: refused before it is written.
            let often = try await cli.calwatch(
                ["fleet", "add"] + database + ["--feed", "https://example.org/x.ics", "--name", "x", "--every", "0s"])
            #expect(often.status == 64 && often.errors.contains("--every"), "\(often.errors)")
            let gopher = try await cli.calwatch(
                ["fleet", "add"] + database + ["--feed", "gopher://example.org/x", "--name", "x"])
            #expect(gopher.status == 64 && gopher.errors.contains("https, http, webcal URL"), "\(gopher.errors)")

            // A name taken, a password in a URL, a path that is not there: refused, nothing added.
            let twice = try await cli.calwatch(["fleet", "add"] + database + [folder + "/alice"])
            #expect(twice.status == 65 && twice.errors.contains("already has a calendar named alice"))
            let secret = try await cli.calwatch(
                ["fleet", "add"] + database + ["--feed", "https://me:hunter2@example.org/x.ics", "--name", "x"])
            #expect(secret.status == 64 && !secret.errors.contains("hunter2"), "\(secret.errors)")
            let missing = try await cli.calwatch(["fleet", "add"] + database + [folder + "/nobody"])
            #expect(missing.status == 66 && missing.errors.contains("no such file or folder here"))

            let list = try await cli.calwatch(["fleet", "list"] + database)
            #expect(list.status == 0)
            #expect(list.output.contains("4 calendar(s)"), "\(list.output)")
            #expect(list.output.contains("team   feed    https://example.org/team.ics"), "\(list.output)")
            let json = try await cli.calwatch(["fleet", "list", "--json"] + database)
            #expect(json.output.split(separator: "\n").count == 4)
            #expect(json.output.contains(#""name":"bob","kind":"path""#), "\(json.output)")
            // The password command is a reference: the secret itself is nowhere in the database.
            let show = try await cli.calwatch(["fleet", "show", "carol"] + database)
            #expect(show.output.contains("account:  carol, password from the credential dav-carol"), "\(show.output)")
            #expect(show.output.contains("watcher:  none") && show.output.contains("no events stored yet"))

            let removed = try await cli.calwatch(["fleet", "remove", "team", "nobody"] + database)
            #expect(removed.status == 65 && removed.output.contains("removed team"))
            #expect(removed.errors.contains("no calendar named nobody"))
            let status = try await cli.calwatch(["fleet", "status"] + database)
            #expect(
                status.output.hasPrefix("3 calendar(s), 0 watcher(s) alive; 3 without a watcher"), "\(status.output)")

            // No database named: said how to name one.
            let none = try await cli.calwatch(["fleet", "list"])
            #expect(none.status == 64 && none.errors.contains("--database"))
        }
    }

    /// A watcher of the fleet as `watch --fleet` makes it, with `access` and a clock `ahead` of the real one.
    static func member(
        _ name: String, server: PostgresServer, access: FleetAccess = FleetAccess(), credentials: String? = nil,
        ahead: Int64 = 0, lease: Int64 = 30
    ) -> FleetMember {
        var options = FleetMember.Options()
        options.lease = lease
        options.access = access
        options.credentialsDirectory = credentials
        return FleetMember(
            url: server.url, watcher: name, options: options,
            wallClock: { Timestamp(millisecondsSinceEpoch: Timestamp.now.millisecondsSinceEpoch + ahead) },
            backlog: { 0 }, changed: {}, logger: Logger(label: "test"))
    }

    /// Rows written by whoever can write the table, not by `fleet add`: none runs a program, reads a file outside
    /// the watcher's roots, polls out of bounds or stops the watcher; each is reported in `last_problem` and
    /// skipped, and the good rows beside them are read.
    @Test func hostileRowsAreReportedAndSkippedAndNothingInThemRunsOrLeaks() async throws {
        try await PostgresServer.with { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let root = folder + "/calendars"
            try FileManager.default.createDirectory(atPath: root + "/alice", withIntermediateDirectories: true)
            try "top secret: hunter2\n".write(toFile: folder + "/secret.txt", atomically: true, encoding: .utf8)
            try "dav-secret\n".write(toFile: folder + "/dav-file", atomically: true, encoding: .utf8)
            let marker = folder + "/ran"
            _ = try await Self.database(server)
            let rows: [(String, String, String, String, String, String)] = [
                // name, kind, address, credential, password_command, every
                ("alice", "path", root + "/alice", "NULL", "NULL", "600"),
                ("empty-command", "caldav", "https://dav.example.org/", "NULL", "'[]'", "600"),
                (
                    "shell", "caldav", "https://dav.example.org/", "NULL", "'[\"/bin/sh\",\"-c\",\"touch \(marker)\"]'",
                    "600"
                ),
                ("outside", "path", folder + "/secret.txt", "NULL", "NULL", "600"),
                ("climbing", "path", root + "/../secret.txt", "NULL", "NULL", "600"),
                ("tight-loop", "feed", "http://127.0.0.1:9/x.ics", "NULL", "NULL", "0"),
                ("negative", "feed", "http://127.0.0.1:9/x.ics", "NULL", "NULL", "-5"),
                ("gopher", "feed", "gopher://127.0.0.1:9/x", "NULL", "NULL", "600"),
                ("file-scheme", "feed", "file:///etc/passwd", "NULL", "NULL", "600"),
                ("secret-scheme", "feed", "gopher://me:hunter2@127.0.0.1:9/x", "NULL", "NULL", "600"),
                ("unknown-credential", "caldav", "https://dav.example.org/", "'nobody'", "NULL", "600"),
                ("sneaky-credential", "caldav", "https://dav.example.org/", "'../../secret.txt'", "NULL", "600"),
                ("carol", "caldav", "https://dav.example.org/", "'dav-carol'", "NULL", "600"),
                ("from-systemd", "caldav", "https://dav.example.org/other/", "'dav-file'", "NULL", "600"),
                // One address in two people's rows: two calendars, each read in its person's scope.
                ("holidays-ada", "feed", "https://example.org/holidays.ics", "NULL", "NULL", "600"),
                ("holidays-bob", "feed", "https://example.org/holidays.ics", "NULL", "NULL", "600"),
            ]
            for (name, kind, address, credential, command, every) in rows {
                _ = try await server.psql(
                    """
                    INSERT INTO calendars (name, kind, address, username, credential, password_command, every)
                    VALUES ('\(name)', '\(kind)', '\(address)', 'u', \(credential), \(command), \(every))
                    """)
            }
            // An address of a megabyte.
            _ = try await server.psql(
                "INSERT INTO calendars (name, kind, address) VALUES ('huge', 'feed', 'https://example.org/' || repeat('a', 1000000))"
            )
            let member = Self.member(
                "w", server: server,
                access: FleetAccess(roots: [root], credentials: ["dav-carol": ["/bin/echo", "x"]]),
                credentials: folder)
            try await member.start()
            // It holds every row (no other watcher takes them in a loop) and reads only the good ones.
            #expect(try await server.value("SELECT count(*) FROM calendars WHERE watcher = 'w'") == "\(rows.count + 1)")
            let configuration = member.configuration(from: Configuration(home: folder)) { server in
                FleetWatch.settings(for: server).flatMap { settings in
                    settings.open(root: folder + "/cache").map { (settings, $0.folder) }
                }
            }
            #expect(configuration.calendars.first == root + "/alice", "\(configuration.calendars)")
            #expect(
                configuration.scopes.values.sorted() == [
                    "alice", "carol", "from-systemd", "holidays-ada", "holidays-bob",
                ])
            #expect(Set(configuration.calendars).count == 5, "\(configuration.calendars)")
            let accounts = configuration.sources.compactMap { $0.kind as? CalDAVSettings }
            #expect(accounts.contains { $0.username == "u" && $0.passwordCommand == ["/bin/echo", "x"] })
            #expect(accounts.contains { $0.passwordFile == folder + "/dav-file" })
            #expect(!FileManager.default.fileExists(atPath: marker), "a row ran a program")
            let problems = Dictionary(
                uniqueKeysWithValues: try await server.psql(
                    "SELECT name || '|' || coalesce(last_problem, '') FROM calendars"
                ).map { line in
                    let parts = line.split(separator: "|", maxSplits: 1).map(String.init)
                    return (parts[0], parts.count > 1 ? parts[1] : "")
                })
            #expect(problems["alice"] == "" && problems["carol"] == "" && problems["from-systemd"] == "")
            for name in ["empty-command", "shell"] {
                #expect(problems[name]?.contains("credential") == true, "\(name)")
            }
            for name in ["outside", "climbing"] {
                #expect(problems[name]?.contains("outside the folders") == true, "\(name): \(problems[name] ?? "")")
            }
            for name in ["tight-loop", "negative"] {
                #expect(problems[name]?.contains("every 60 s") == true, "\(name)")
            }
            for name in ["gopher", "file-scheme", "secret-scheme"] {
                #expect(problems[name]?.contains("URL with a host") == true)
            }
            #expect(problems["huge"]?.contains("at most 2048 bytes") == true)
            #expect(problems["unknown-credential"]?.contains("no credential named nobody") == true)
            #expect(problems["sneaky-credential"]?.contains("letters, digits") == true)
            #expect(!problems.values.contains { $0.contains("hunter2") })

            // A file under the roots that is not a calendar: its problem reaches the row without its text.
            member.noted(
                [
                    CalendarProblem(
                        severity: .error, path: root + "/alice/notes.ics", line: 1, uid: "hunter2",
                        message: "not iCalendar data: expected BEGIN:VCALENDAR, found 'top secret: hunter2'")
                ], roots: [root + "/alice": "alice"])
            await member.beat()
            let noted = try await server.value("SELECT last_problem FROM calendars WHERE name = 'alice'")
            #expect(noted.hasPrefix(root + "/alice/notes.ics:1: error: not iCalendar data"), "\(noted)")
            #expect(!noted.contains("hunter2"), "\(noted)")
        }
    }

    /// A watcher whose clock is a day ahead claims and renews nothing, and `fleet status` shows it, with its
    /// skew, as not alive; a watcher whose clock agrees takes the calendars.
    @Test func aWatcherWhoseClockIsOffClaimsNothingAndStatusSaysSo() async throws {
        try await PostgresServer.with { server in
            let fleet = try await Self.database(server)
            try await offCooperativePool { try fleet.add(Self.calendars(3)) }
            let access = FleetAccess(roots: ["/srv/calendars"])
            let ahead = Self.member("ahead", server: server, access: access, ahead: 86_400_000)
            try await ahead.start()
            #expect(try await server.value("SELECT count(*) FROM calendars WHERE watcher IS NOT NULL") == "0")
            #expect(!(await ahead.beat()))
            let status = try await CommandLineTests().calwatch(["fleet", "status", "--database", server.url])
            #expect(status.output.hasPrefix("3 calendar(s), 0 watcher(s) alive"), "\(status.output)")
            let line = status.output.split(separator: "\n").first { $0.hasPrefix("ahead") } ?? ""
            // The skew as the database saw it, a moment after the watcher read its clock: a day, less that moment.
            let skew = try #require(line.firstMatch(of: /\+(\d+)\.\ds/).flatMap { Int($0.1) }, "\(status.output)")
            #expect(line.contains("clock off") && (86_000...86_400).contains(skew), "\(status.output)")
            let onTime = Self.member("on-time", server: server, access: access)
            try await onTime.start()
            #expect(try await server.value("SELECT count(*) FROM calendars WHERE watcher = 'on-time'") == "3")
        }
    }

    /// A watcher stalled between reading its clock and reaching the database (a busy machine, a slow journal:
    /// here 2.5 s against a tolerance of 1 s) is not a watcher whose clock is off: it renews what it holds, and
    /// nobody takes its calendars as expired.
    @Test func aStalledWatcherIsNotAWatcherWhoseClockIsOff() async throws {
        try await PostgresServer.with { server in
            let fleet = try await Self.database(server)
            try await offCooperativePool { try fleet.add(Self.calendars(3)) }
            var options = FleetMember.Options()
            options.lease = 4
            options.access = FleetAccess(roots: ["/srv/calendars"])
            let stalled = Locked(false)
            let member = FleetMember(
                url: server.url, watcher: "busy", options: options, wallClock: { Timestamp.now },
                backlog: {
                    if stalled.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(2_500)) }
                    return 0
                }, changed: {}, logger: Logger(label: "test"))
            try await member.start()
            #expect(try await server.value("SELECT count(*) FROM calendars WHERE watcher = 'busy'") == "3")
            stalled.withLock { $0 = true }
            await member.beat()
            let row = try await server.value(
                "SELECT abs(clock_skew_ms) < 1000 FROM fleet_watchers WHERE watcher = 'busy'")
            #expect(row == "t", "the stall was taken for a clock off")
            #expect(try await server.value("SELECT count(*) FROM calendars WHERE watcher = 'busy'") == "3")
        }
    }

    /// An account calendar's tokens in the database: sealed and bound to the calendar's name (a row's tokens copied
    /// to another row, or opened with another key, are nobody's), read only by the watcher holding the lease, and a
    /// refresh kept only over the version it started from (a sign-in in between wins).
    @Test func accountTokensAreSealedReadOnlyByTheHolderAndKeptOverTheVersionRefreshed() async throws {
        try await PostgresServer.with { server in
            let fleet = try await Self.database(server)
            let sealing = try #require(SealedTokens(secret: "a secret the watchers share, 32+ long"))
            #expect(SealedTokens(secret: "short") == nil)
            let tokens = AccountTokens(
                provider: "microsoft", clientId: "c", tenant: "common", refreshToken: "rt-secret-1",
                accessToken: "at-secret-1", expires: Date(timeIntervalSince1970: 1_800_003_600),
                user: "ada@example.org", saved: Date(timeIntervalSince1970: 1_800_000_000))
            let sealed = try sealing.seal(tokens, calendar: "ada")
            #expect(!sealed.contains("rt-secret") && sealing.open(sealed, calendar: "ada") == tokens)
            #expect(sealing.open(sealed, calendar: "bob") == nil)
            #expect(
                SealedTokens(secret: "another secret the watchers share, 32+")?.open(sealed, calendar: "ada") == nil)
            // A watcher reads an account row only with the account's application and the key in its own config.yml.
            let row = FleetCalendar(name: "ada", source: .account(account: "work", every: 300))
            func refusal(_ access: FleetAccess) -> String? {
                if case .failure(let refusal) = row.admitted(by: access, credentialsDirectory: nil) {
                    return refusal.description
                }
                return nil
            }
            #expect(refusal(FleetAccess())?.contains("no account named work") == true)
            var access = FleetAccess(credentials: ["key": ["cat", "/etc/key"]])
            access.accounts = ["work"]
            #expect(refusal(access)?.contains("fleet: tokenKey: NAME") == true)
            access.tokenKey = "key"
            #expect(
                row.admitted(by: access, credentialsDirectory: nil)
                    == .success(
                        .server(
                            FleetCalendar.Server(name: "ada", source: row.source, passwordCommand: ["cat", "/etc/key"]))
                    ))
            try await offCooperativePool {
                try fleet.add([
                    FleetCalendar(name: "ada", source: .account(account: "work", every: 300)),
                    FleetCalendar(name: "team", source: .feed(url: "https://example.org/team.ics", every: 300)),
                ])
                #expect(throws: FleetDatabase.Failure.self) {
                    try fleet.signIn("team", sealed: sealed, user: nil, at: Self.at(0))
                }
                try fleet.signIn("ada", sealed: sealed, user: "ada@example.org", at: Self.at(0))
                try fleet.join(watcher: "a", host: "h", pid: 1, lease: 30, at: Self.at(0))
                try fleet.join(watcher: "b", host: "h", pid: 2, lease: 30, at: Self.at(0))
                _ = try fleet.heartbeat(watcher: "a", lease: 30, backlog: 0, at: Self.at(1))
                let held = try #require(try fleet.accountTokens(of: "ada", watcher: "a", at: Self.at(2)))
                #expect(held.version == 1 && held.user == "ada@example.org" && held.sealed == sealed)
                // b does not hold it: it may not read the tokens, nor would it refresh them.
                #expect(throws: FleetDatabase.Failure.self) {
                    try fleet.accountTokens(of: "ada", watcher: "b", at: Self.at(2))
                }
                // Nor may a once its lease has run out.
                #expect(throws: FleetDatabase.Failure.self) {
                    try fleet.accountTokens(of: "ada", watcher: "a", at: Self.at(40))
                }
                #expect(
                    try fleet.keepAccountTokens(of: "ada", sealed: "v2", replacing: 1, watcher: "a", at: Self.at(3)))
                // A refresh started from version 1 is not kept over version 2.
                #expect(
                    !(try fleet.keepAccountTokens(of: "ada", sealed: "v2b", replacing: 1, watcher: "a", at: Self.at(3)))
                )
                let kept = try #require(try fleet.accountSignIns(["ada"])["ada"])
                #expect(kept.version == 2 && kept.savedBy == "a")
                #expect(try fleet.calendars(named: ["ada"]).first?.fields.person == "ada@example.org")
            }
        }
    }

    /// A watcher's vault: two requests that need a refresh at once refresh once; a refresh refused because another
    /// holder spent the token and kept newer ones (a lease that ran out mid-refresh) goes on with those; a refusal
    /// with nothing newer kept is the sign-in lapsing.
    @Test func aWatchersVaultRefreshesOnceAndTakesTokensAnotherHolderKept() async throws {
        try await PostgresServer.with { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let secret = "a secret the watchers share, 32+ long"
            try secret.write(toFile: folder + "/key", atomically: true, encoding: .utf8)
            let sealing = try #require(SealedTokens(secret: secret))
            @Sendable func tokens(_ refresh: String, access: String?, expires: Date) -> AccountTokens {
                AccountTokens(
                    provider: "microsoft", clientId: "c", tenant: "common", refreshToken: refresh,
                    accessToken: access, expires: expires, user: "ada@example.org", saved: Date())
            }
            let fleet = try await Self.database(server)
            try await offCooperativePool {
                try fleet.add([FleetCalendar(name: "ada", source: .account(account: "work", every: 300))])
                try fleet.signIn(
                    "ada",
                    sealed: try sealing.seal(tokens("rt-1", access: nil, expires: .distantPast), calendar: "ada"),
                    user: "ada@example.org", at: Timestamp.now)
            }
            // A lease far longer than the test: what is tested is the vault's turns, not a lease running out on a
            // busy machine.
            let member = Self.member("w", server: server, lease: 3600)
            try await member.start()
            let vault = FleetAccountVault(calendar: "ada", member: member, keyCommand: nil, keyFile: folder + "/key")
            let refreshes = Locked(0)
            let grant: @Sendable (String) async throws -> SignInGrant = { spent in
                refreshes.withLock { $0 += 1 }
                try await Task.sleep(for: .milliseconds(200))
                return SignInGrant(accessToken: "at-of-" + spent, refreshToken: spent + "+", expiresIn: 3600)
            }
            async let first = vault.accessToken(forcingRefresh: false, replacing: nil, now: Date(), refresh: grant)
            async let second = vault.accessToken(forcingRefresh: false, replacing: nil, now: Date(), refresh: grant)
            #expect(try await [first, second] == ["at-of-rt-1", "at-of-rt-1"])
            #expect(refreshes.withLock { $0 } == 1)
            #expect(vault.lastKnown?.refreshToken == "" && vault.lastKnown?.user == "ada@example.org")

            // Another holder refreshes and keeps version 3 while this one's refresh of version 2 is refused.
            let refused: @Sendable (String) async throws -> SignInGrant = { _ in
                let newer = try sealing.seal(
                    tokens("rt-other", access: "at-other", expires: Date().addingTimeInterval(3600)), calendar: "ada")
                _ = try await offCooperativePool {
                    try fleet.keepAccountTokens(of: "ada", sealed: newer, replacing: 2, watcher: "v", at: Timestamp.now)
                }
                throw AccountFailure(signIn: "invalid_grant", run: "calwatch fleet sign-in ada")
            }
            let taken = try await vault.accessToken(forcingRefresh: true, replacing: nil, now: Date(), refresh: refused)
            #expect(taken == "at-other")
            // Refused with nothing newer kept: the sign-in lapsed, and says what signs in again.
            let lapsed: @Sendable (String) async throws -> SignInGrant = { _ in
                throw AccountFailure(signIn: "invalid_grant", run: vault.signInCommand)
            }
            await #expect {
                _ = try await vault.accessToken(forcingRefresh: true, replacing: nil, now: Date(), refresh: lapsed)
            } throws: { error in
                (error as? AccountFailure)?.reason.contains("calwatch fleet sign-in ada") == true
            }
            await member.release(["ada"])
        }
    }
}
