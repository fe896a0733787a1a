import ArgumentParser

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
        version: CalwatchVersion.report,
        subcommands: [Scan.self, Explain.self, Replay.self, Watch.self, Check.self]
    )
}
