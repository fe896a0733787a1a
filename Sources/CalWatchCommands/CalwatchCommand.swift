import ArgumentParser
import CLinux

/// The `calwatch` command: calendars in, typed events out.
@main
struct CalwatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calwatch",
        abstract: "Read calendars and turn them into reminders and live activities for JSON Lines, SQLite and hooks.",
        discussion: """
            Calendars are .ics files, vdir folders (vdirsyncer, khal), Radicale collections, CalDAV REPORT \
            exports (.xml) or - for standard input. config.yml documents the configuration that replay, watch and \
            check read with --config.

            Exit codes: 0 success, 64 usage or configuration error, 65 unreadable calendar data, 74 I/O error.
            """,
        subcommands: [
            Scan.self, Explain.self, Next.self, Why.self, Replay.self, Watch.self, Snooze.self, Dismiss.self, Ack.self,
            Check.self, Fleet.self, Pass.self, Account.self,
        ]
    )

    /// A flag of this command's own rather than `CommandConfiguration.version`: argument-parser reads the
    /// configuration on every run, and the report loads the airport and airline tables (60 ms of every start).
    @Flag(help: "Show the version, and the data and libraries calwatch carries.")
    var version = false

    /// The process is named as typed: the `calwatch` front runs this program as `calwatch-commands` in its own
    /// place, and `killall calwatch`, `pgrep -x calwatch` and `top` know a process by its file's name.
    static func main() async {
        _ = CLinux_set_thread_name("calwatch")
        await main(nil)
    }

    func run() async throws {
        guard version else { throw CleanExit.helpRequest(self) }
        print(CalwatchVersion.report)
    }
}
