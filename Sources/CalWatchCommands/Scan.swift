import ArgumentParser
import CalWatchCore
import CalWatchRuntime
import Foundation

extension CalwatchCommand {
    /// `calwatch scan`: print the occurrences (or alarm triggers) of calendars in a window.
    struct Scan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the occurrences of calendars in a time window, one JSON object per line.",
            discussion: """
                Occurrences overlapping [--from, --to) are printed sorted by start, then uid. Times without an \
                offset are wall time in --tz; all-day and floating values are resolved in --tz too.

                Examples:
                  calwatch scan ~/.calendars
                  calwatch scan work.ics --from 2027-03-01 --to 2027-04-01 --format table
                  calwatch scan ~/.calendars --alarms --from now --to tomorrow
                  curl -s https://example.com/cal.ics | calwatch scan -
                  calwatch scan webcal://example.com/team.ics
                  calwatch scan --config ~/.config/calwatch/config.yml   # its calendars, feeds and CalDAV accounts

                Without --config, ~/.config/calwatch/config.yml is read when it exists, as next, explain and check \
                read it: its zone (unless --tz), its rules and meeting services, and its calendars when none are \
                named here.

                Problems in a calendar go to standard error as FILE:LINE: warning|error: REASON; every other file \
                is still read. The exit code is 65 only when no calendar data could be read at all.
                """
        )

        @OptionGroup var calendars: CalendarOptions

        @OptionGroup var configurationOptions: ConfigurationOptions

        @Option(help: "Start of the window (default: today 00:00 in --tz).")
        var from: String?

        @Option(help: "End of the window, exclusive (default: 7 days after --from).")
        var to: String?

        @Flag(help: "Print the calendar's own VALARM triggers instead of occurrences.")
        var alarms = false

        @Flag(help: "Include VTODOs that have a DUE time, as occurrences at the instant they are due.")
        var todos = false

        @Flag(help: "Print every occurrence as a plain event, without looking for flights and meetings.")
        var noClassify = false

        @Option(help: "Output format: jsonl (one JSON object per line) or table (for people).")
        var format: OutputFormat = .jsonl

        enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
            case jsonl, table
        }

        func validate() throws {
            if calendars.paths.isEmpty && configurationOptions.file(useDefaultFile: true) == nil {
                throw ValidationError(
                    "Name at least one calendar (a .ics file, a vdir folder, a CalDAV .xml export, - or a feed's "
                        + "address), or --config for the configuration's calendars.")
            }
            if alarms && format == .table {
                throw ValidationError("--alarms prints JSON Lines only; leave out --format table.")
            }
            _ = try window(zone: calendars.zone())
        }

        /// The window the options name, in `zone`.
        func window(zone: ZoneRules) throws -> (zone: ZoneRules, window: InstantWindow) {
            let start = try CommandSupport.instant(from ?? "today", zone: zone)
            let end =
                try to.map { try CommandSupport.instant($0, zone: zone) }
                ?? zone.instant(for: zone.wallClock(at: start).adding(days: 7))
            return (zone, try CommandSupport.window(from: start, to: end))
        }

        func run() async throws {
            try CommandSupport.requireReferenceData()
            // The configuration (--config, or the default file), with the calendars and zone named here over its
            // own; calendars on servers are fetched into the cache and read from there.
            let configuration = await CommandSupport.fetchingFeeds(
                try configurationOptions.loadOrExit(calendars: calendars, useDefaultFile: true))
            let (zone, window) = try window(zone: CommandSupport.zone(configuration.timeZone))
            var options = ExpansionOptions(window: window, defaultZone: zone, includeTodos: todos)
            if alarms {
                options.lookBehind = AlarmExpander.reach
                options.lookAhead = AlarmExpander.reach
            }
            let paths = configuration.calendars
            let classifier = Classifier(configuration, passes: await CommandSupport.passes(of: configuration))
            let scan = CalendarScan(paths: paths, options: options)
            // JSON Lines are written as the occurrences are merged into order; a table or the alarms need them all.
            let streamed = !alarms && format != .table
            var (merge, result) = streamed ? scan.runMerging() : (OccurrenceMerge(inOrder: []), scan.run())
            CommandSupport.report(result.problems)

            let output = StandardStreams.Output()
            if alarms {
                AlarmJSON.writeLines(AlarmExpander.triggers(of: result.occurrences, in: window), flush: output.write)
            } else if format == .table {
                output.write(
                    Array(
                        OccurrenceTable.render(
                            result.occurrences, zone: zone, classifier: noClassify ? nil : classifier
                        )
                        .utf8))
            } else {
                OccurrenceJSON.writeLines(&merge, classifier: noClassify ? nil : classifier, flush: output.write)
            }
            if result.nothingReadable {
                throw ExitCode.dataError
            }
        }
    }
}
