import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchPostgres
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
                    "--password-command", "pass", "show", "dav/carol",
                ])
            #expect(caldav.status == 0, "\(caldav.errors)")

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
            #expect(show.output.contains("account:  carol, password from pass"), "\(show.output)")
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
}
