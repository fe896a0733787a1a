import ArgumentParser
import CalWatchCore
import CalWatchRuntime

/// The arguments every command that reads calendars takes: where they are, and the zone for their floating times.
struct CalendarOptions: ParsableArguments {
    @Argument(help: "Calendar files, vdir or Radicale folders, CalDAV .xml exports, or - for standard input.")
    var paths: [String] = []

    @Option(help: "Zone for floating and all-day values and for times without an offset (default: the system zone).")
    var tz: String?

    /// The zone `--tz` names, or the system zone.
    func zone() throws -> ZoneRules { try CommandSupport.zone(tz) }
}
