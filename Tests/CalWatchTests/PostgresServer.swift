import CalWatchRuntime
import Foundation

/// A real PostgreSQL server from Debian's `postgresql` package for one test: `initdb` into a temporary folder,
/// listening on a Unix socket in that folder only (no port to collide with), trust authentication, stopped and
/// removed by `stop()`. PostgreSQL refuses to run as root, so as root its programs run as the `postgres` user the
/// package creates.
struct PostgresServer: Sendable {
    let folder: String
    var data: String { folder + "/data" }
    /// A database of its own for each test, `calwatch`.
    var url: String { "postgres:///calwatch?host=\(folder)&user=postgres" }

    /// PostgreSQL's programs: the newest installed major version.
    static let binaries: String = {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap { Int($0) }
        return versions.max().map { "\(root)/\($0)/bin" } ?? "\(root)/missing (install postgresql: make deps)"
    }()

    private static var asPostgres: [String] { geteuid() == 0 ? ["runuser", "-u", "postgres", "--"] : [] }

    /// Runs `body` with a new server, stopped and removed when `body` returns or throws.
    static func with<T>(
        settings: [String] = ["fsync=off", "full_page_writes=off"], _ body: (PostgresServer) async throws -> T
    ) async throws -> T {
        let server = try await start(settings: settings)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Starts a new server with `settings` (`-c name=value` each) and creates the `calwatch` database.
    private static func start(settings: [String] = ["fsync=off", "full_page_writes=off"]) async throws -> PostgresServer
    {
        let folder = TestFolders.path("calwatch-pg")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if geteuid() == 0 {
            try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: folder)
        }
        let server = PostgresServer(folder: folder, settings: settings)
        _ = try await runProgram(
            asPostgres + [
                binaries + "/initdb", "-D", server.data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync",
                "--locale=C.UTF-8",
            ])
        try await server.startAgain()
        _ = try await server.psql("CREATE DATABASE calwatch", database: "postgres")
        return server
    }

    let settings: [String]

    /// Starts the server (again, after `halt`), waiting until it takes connections.
    func startAgain() async throws {
        let options = (["-k", folder, "-c", "listen_addresses="] + settings.flatMap { ["-c", $0] })
            .joined(separator: " ")
        // The server keeps every descriptor pg_ctl had, and Foundation's Process learns of pg_ctl's exit only when
        // no process holds a socket it passed down: so they are closed first.
        let closeInherited = #"for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; exec "$@""#
        _ = try await runProgram(
            ["bash", "-c", closeInherited, "bash"] + Self.asPostgres + [
                Self.binaries + "/pg_ctl", "-D", data, "-o", options, "-l", folder + "/log", "-w", "start",
            ],
            discardOutput: true)
    }

    /// Stops the server (fast shutdown: connections are cut, as in a restart of a real database).
    func halt() async throws {
        _ = try await runProgram(Self.asPostgres + [Self.binaries + "/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"])
    }

    /// Stops the server and removes its folder.
    func stop() async {
        _ = try? await halt()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs SQL through `psql` and returns its rows, values separated by `|`.
    func psql(_ sql: String, database: String = "calwatch") async throws -> [String] {
        let output = try await runProgram([
            "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", folder, "-U", "postgres", "-d", database,
            "-c", sql,
        ])
        return output.split(separator: "\n").map(String.init)
    }

    /// The single value a query returns.
    func value(_ sql: String) async throws -> String {
        try await psql(sql).first ?? ""
    }
}
