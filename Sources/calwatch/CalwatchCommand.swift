import ArgumentParser

/// The `calwatch` command: calendars in, typed events out.
@main
struct CalwatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calwatch",
        abstract: "Read calendars and turn them into exact occurrences, with absolute times for every instance.",
        discussion: """
            Calendars are .ics files, vdir folders (vdirsyncer, khal), Radicale collections, CalDAV REPORT \
            exports (.xml) or - for standard input.

            Exit codes: 0 success, 64 usage error, 65 no calendar data could be read, 74 I/O error.
            """,
        subcommands: [Scan.self, Replay.self, Check.self]
    )
}
