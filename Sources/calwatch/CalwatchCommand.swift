import ArgumentParser

/// The `calwatch` command: calendars in, typed events out.
@main
struct CalwatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calwatch",
        abstract: "Watch calendars and turn their flights, meetings and events into reminders and live activities.",
        discussion: """
            Calendars are .ics files, vdir folders (vdirsyncer, khal), Radicale collections, CalDAV REPORT \
            exports (.xml) or - for standard input.

            Exit codes: 0 success, 64 usage error, 65 no calendar data could be read, 74 I/O error.
            """,
        subcommands: [Scan.self]
    )
}
