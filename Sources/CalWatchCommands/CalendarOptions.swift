import ArgumentParser
import CalWatchCore
import CalWatchRemote
import CalWatchRuntime

/// The arguments every command that reads calendars takes: where they are, and the zone for their floating times.
struct CalendarOptions: ParsableArguments {
    @Argument(
        help: """
            Calendar files, vdir or Radicale folders, CalDAV .xml exports, - for standard input, or the address of \
            an ICS feed (https://…, webcal://…).
            """)
    var paths: [String] = []

    /// The arguments that are feed addresses rather than paths.
    var feeds: [SourceSettings] {
        paths.filter(Self.isAddress).map { SourceSettings(ICSFeedSettings(address: $0)) }
    }

    /// The arguments that are paths.
    var files: [String] { paths.filter { !Self.isAddress($0) } }

    static func isAddress(_ argument: String) -> Bool {
        let lowered = argument.lowercased()
        return ["https://", "http://", "webcal://"].contains { lowered.hasPrefix($0) }
    }

    @Option(help: "Zone for floating and all-day values and for times without an offset (default: the system zone).")
    var tz: String?

    /// The zone `--tz` names, or the system zone.
    func zone() throws -> ZoneRules { try CommandSupport.zone(tz) }
}
