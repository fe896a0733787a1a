import ArgumentParser
import CalWatchCore
import CalWatchRuntime
import Foundation

extension CalwatchCommand {
    /// `calwatch why`: the decision trace of one occurrence.
    struct Why: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Explain what calwatch planned for one occurrence, and what became of each reminder.",
            discussion: """
                Names an item by its UID (the occurrence running at --at, else one that ended in the 12 hours \
                before it, else the next one, else the last before), or one occurrence by its subject, UID/START as events carry it in `subject` and hooks in \
                CE_SUBJECT (START in UTC, or the RECURRENCE-ID).

                For each reminder, flightDetected and live-activity event the planner makes for it: when it is \
                due, and what became of it. planned: still to come. emitted: committed to the journal at the time \
                shown. skipped: never planned (declined, cancelled, all-day with reminders off). collapsed: \
                missed while calwatch was not running, and delivered as one late reminder. missed: its time and \
                anchor passed with calwatch not running. moved: emitted for an earlier time of the occurrence, \
                planned again for the new one. forgotten: the journal no longer holds it (a day after expiry).

                For each emitted event and each sink: delivered (a hook's run with its exit status and time, the \
                line in a JSON Lines file, the row in a SQLite file), filtered (which of a hook's on, kinds, \
                offsets or calendars left it out), waiting, retrying, failed, or expired before the sink took \
                it. These are read from the journal and the sinks' own files, not worked out.

                The journal is the configuration's `state` (the daemon's), or --state.

                A time to leave is explained step by step: where to, where the way starts and why there, and how \
                long it takes. With `travel.routing` or `travel.geocoder` configured, the routing engine and the \
                geocoder are asked first for what this occurrence needs.

                Examples:
                  calwatch why 7h2k9m4n6p8q@google.com
                  calwatch why 'standup-42/2027-03-03T08:30:00Z' --format json
                  calwatch why BA987-20270303 --config config.yml --at 2027-03-03T05:00
                """
        )

        @Argument(help: "The item's UID, or one occurrence's subject UID/START.")
        var item: String

        @OptionGroup var settings: ConfigurationOptions

        @Option(help: "Zone for times shown and for --at (default: the configured zone, else the system zone).")
        var tz: String?

        @Option(help: ArgumentHelp("The moment the question is about (default: now).", valueName: "time"))
        var at: String?

        @Option(help: "The journal to read (default: the configuration's state).")
        var state: String?

        @Option(help: "Output format: text (for people) or json.")
        var format: Format = .text

        enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

        func run() async throws {
            try CommandSupport.requireReferenceData()
            let configuration = await CommandSupport.fetchingFeeds(
                try settings.loadOrExit(calendars: nil, useDefaultFile: true))
            let zone = try CommandSupport.zone(tz ?? configuration.timeZone)
            let now = try at.map { try CommandSupport.instant($0, zone: zone) } ?? CommandSupport.now

            // Far enough back for an occurrence whose reminders someone asks about afterwards, and ahead to the
            // horizon of flightDetected.
            let expansion = ExpansionOptions(
                window: InstantWindow(
                    start: now.adding(seconds: -14 * 86_400),
                    end: now.adding(seconds: min(configuration.planner.horizon, 62 * 86_400) + 86_400)),
                defaultZone: zone, includeTodos: configuration.planner.includeTodos)
            let scan = CalendarScan(paths: configuration.calendars, options: expansion).run()
            CommandSupport.report(scan.problems.filter { $0.severity == .error })
            let (uid, occurrence) = DecisionTrace.occurrence(named: item, in: scan.occurrences, at: now)

            let path = state ?? configuration.statePath
            let journal =
                FileManager.default.fileExists(atPath: path) ? try CommandSupport.openJournalOrExit(path) : nil
            let classifier = await CommandSupport.classifier(
                configuration, occurrences: scan.occurrences, now: now, journal: path,
                planning: { classifier in _ = occurrence.map(classifier.facts(for:)) })
            let trace = try await DecisionTrace.trace(
                occurrence, uid: uid, classifier: classifier,
                inputs: .init(
                    configuration: configuration, journal: journal, now: now, zone: zone,
                    occurrences: scan.occurrences))
            if occurrence == nil && trace.steps.isEmpty {
                StandardStreams.error(
                    "calwatch: no item with UID \(uid) in \(configuration.calendars.joined(separator: ", ")) "
                        + "from \(expansion.window.start) to \(expansion.window.end), and nothing about it in "
                        + (journal == nil ? "a journal (there is none at \(path))" : "the journal \(path)") + "\n")
                throw ExitCode.dataError
            }
            switch format {
            case .text: StandardStreams.report(trace.text(zone: zone))
            case .json: StandardStreams.Output().write(Array((trace.json + "\n").utf8))
            }
        }
    }
}
