import ArgumentParser
import CalWatchCore
import CalWatchRuntime
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

extension CalwatchCommand {
    /// `calwatch replay`: the event pipeline over a time window on a virtual clock.
    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the event pipeline over a time window on a virtual clock, as fast as the machine allows.",
            discussion: """
                Finds flights and meetings (see `calwatch explain`), then plans reminders (30, 15 and 5 minutes \
                before each start, or before the time to leave for a flight's airport), flightDetected 60 days \
                ahead, and live activities (from 15 minutes before until the end, updated every minute) for every \
                occurrence, commits each event to a journal, and prints it as a CloudEvents 1.0 JSON line on \
                standard output. A summary goes to standard error. With `day:` in the configuration, the day's \
                events too: conflictDetected, overrunDetected, invitationPending, agendaDue and a live activity's \
                endingSoon (try `--config samples/day/config.yml --from 2027-03-07 --to 2027-03-15`).

                With --config the replay takes its reminders, live activities, zone, calendars and sinks (JSON Lines, \
                SQLite, PostgreSQL, hooks, desktop notifications, webhooks, MQTT) from that file; calendars named on the command line replace the configured \
                ones, and --tz the configured zone. The configuration's `state` journal is the daemon's and is not \
                used: pass --state to keep one. With `travel.routing` the ways to placed events are asked of the \
                engine before the replay (at most `requestsPerHour`), and with `travel.geocoder` up to 60 new \
                addresses (one a second); what went unanswered is said on standard error.

                Without --state the replay uses a fresh journal of its own, removed afterwards, so two replays of \
                the same input print the same events (apart from recordedtime) and the daemon's journal is never \
                touched. With --state it continues where that journal stopped: a replay interrupted at any point and \
                started again prints only the events it had not printed. SIGINT or SIGTERM stop it after the batches \
                in hand, with everything committed printed. A journal remembers how far it has handled time and \
                forgets delivered events a day after they expire; a replay of an earlier window with it starts \
                where it had got to, and says so.

                A sink that fails (a webhook receiver or MQTT broker down) is tried again with growing delays while \
                the replay runs; one that had worked earlier in the run is tried for up to --wait-for-sinks after \
                the last event is planned (a restart), one that never did (a wrong address or password) five more \
                times. What it still has not taken is counted in the summary and stays in the journal given with \
                --state.

                Exit status: 0 done; 64 usage error; 65 no calendar could be read; 74 the journal or the output \
                failed (events not delivered stay in the journal for the next run); 130 stopped by a signal.

                Examples:
                  calwatch replay samples/calendars --from 2027-03-03 --to 2027-03-04 --tz Europe/Berlin
                  calwatch replay ~/.calendars --from today --to tomorrow | jq -c 'select(.type == "calwatch.reminderDue")'
                  calwatch replay --config config.yml --from 2027-03-03 --to 2027-03-04
                """
        )

        @OptionGroup var calendars: CalendarOptions
        @OptionGroup var settings: ConfigurationOptions

        @Option(help: "Start of the virtual clock.")
        var from: String

        @Option(help: "End of the virtual clock, exclusive.")
        var to: String

        @Option(help: "The journal to continue (default: a fresh one of this replay's own, removed afterwards).")
        var state: String?

        @Option(
            name: .customLong("wait-for-sinks"),
            help: ArgumentHelp(
                "How long a sink that worked and then failed (a broker restarting) is still tried after the last event.",
                valueName: "duration"))
        var waitForSinks = DurationArgument("1m")

        func validate() throws {
            try waitForSinks.checked("", in: 0...86_400, example: "1m or 30s")
            if calendars.paths.isEmpty && settings.config == nil {
                throw ValidationError("Name the calendars to replay, or a --config that lists them.")
            }
            let zone = try calendars.zone()
            _ = try CommandSupport.window(
                from: CommandSupport.instant(from, zone: zone), to: CommandSupport.instant(to, zone: zone))
        }

        func run() async throws {
            try CommandSupport.requireReferenceData()
            let started = Date()
            let loaded = try settings.loadOrExit(calendars: calendars, useDefaultFile: false)
            // Before the calendars on servers are fetched: an account's poll is measured too.
            let metrics = loaded.metrics.textfile.map(PrometheusTextfile.init(path:))
            metrics?.bootstrap()
            let settings = await CommandSupport.fetchingFeeds(loaded)
            let zone = try CommandSupport.zone(settings.timeZone)
            let window = try CommandSupport.window(
                from: CommandSupport.instant(from, zone: zone), to: CommandSupport.instant(to, zone: zone))
            var configuration = settings.planner
            configuration.day?.zone = zone
            let options = PlanningLoop.expansion(for: window, zone: zone, configuration: configuration)
            // Written however the replay ends, so a failed one still shows its failures.
            defer {
                if let metrics {
                    CalwatchMetrics.planned(at: CommandSupport.timestamp)
                    do {
                        try metrics.write()
                    } catch {
                        StandardStreams.error("calwatch: cannot write the metrics to \(metrics.path): \(error)\n")
                    }
                }
            }
            let scan = CalendarScan(paths: settings.calendars, options: options).run()
            CalwatchMetrics.read(files: scan.sourceCount, problems: scan.problems)
            CommandSupport.report(scan.problems)
            if scan.nothingReadable { throw ExitCode.dataError }

            let temporary = state == nil
            let path =
                state
                ?? FileManager.default.temporaryDirectory
                .appendingPathComponent("calwatch-replay-\(getpid())-\(UUID().uuidString).db").path
            let lock = try CommandSupport.lockJournalOrExit(path)
            defer {
                withExtendedLifetime(lock) {}
                if temporary {
                    for suffix in ["", "-wal", "-shm", ".lock", ".notify-cards", ".answers-key"] {
                        try? FileManager.default.removeItem(atPath: path + suffix)
                    }
                }
            }
            let journal = try CommandSupport.openJournalOrExit(path, throwaway: temporary)
            CommandLogHandler.bootstrap()
            let logger = Logger(label: "calwatch.replay")
            let sinks = try CommandSupport.openSinksOrExit(settings.sinks, state: path, logger: logger)
            let classifier = await CommandSupport.classifier(
                settings, occurrences: scan.occurrences, now: window.start, addresses: 60, journal: state,
                keepsHistory: true,
                planning: { classifier in for occurrence in scan.occurrences { _ = classifier.facts(for: occurrence) } }
            )
            // Every item classified on all cores before planning starts, rather than one by one on the planner's
            // thread as it meets them (5,000 meetings with links and attendees: 0.8 s of a week's replay).
            _ = ParallelRuns.map(scan.occurrences) { classifier.prepare(Array($0)) }
            var replayOptions = CalWatchRuntime.Replay.Options()
            replayOptions.bus.finalWait = waitForSinks.duration
            let replay = CalWatchRuntime.Replay(
                occurrences: scan.occurrences, facts: classifier.facts(for:), configuration: configuration,
                journal: journal, sinks: sinks, recordedTime: { CommandSupport.timestamp }, options: replayOptions,
                logger: logger)
            // SIGTERM and SIGINT stop it at its next consistent point instead of mid-way.
            let run = CalWatchRuntime.Replay.Run(replay, from: window.start, to: window.end)
            let group = ServiceGroup(
                configuration: .init(
                    services: [.init(service: run, successTerminationBehavior: .gracefullyShutdownGroup)],
                    gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            let summary: CalWatchRuntime.Replay.Summary
            do {
                try await group.run()
                guard let finished = run.summary else { throw CancellationError() }
                summary = finished
            } catch {
                StandardStreams.error("calwatch: \(error)\n")
                throw ExitCode.ioError
            }
            var hooks: [String: HookSink.Counts] = [:]
            for case let hook as HookSink in sinks { hooks[hook.name] = await hook.counts }
            StandardStreams.error(
                Self.describe(
                    summary, hooks: hooks, window: window, seconds: Date().timeIntervalSince(started),
                    journalKept: !temporary))
            if summary.sinks.allSatisfy(\.closed) { return }  // the reader went away (`| head`): a quiet end
            if run.stoppedByShutdown { throw ExitCode.interrupted }
            if summary.sinks.contains(where: { $0.undelivered > 0 }) { throw ExitCode.ioError }
        }

        /// The summary on standard error: events by type, each sink, time taken.
        static func describe(
            _ summary: CalWatchRuntime.Replay.Summary, hooks: [String: HookSink.Counts], window: InstantWindow,
            seconds: Double, journalKept: Bool
        ) -> String {
            var text = ""
            if summary.start > window.start {
                text += "calwatch replay: the journal had handled everything before \(summary.start); started there\n"
            }
            let counts = EventType.allCases.compactMap { type in summary.counts[type].map { "\(type.rawValue) \($0)" } }
            text += "calwatch replay \(summary.start)..\(window.end): \(summary.total) events"
            if summary.stopped { text += " (stopped early)" }
            if !counts.isEmpty { text += "; " + counts.joined(separator: ", ") }
            text += String(format: "; %.2f s", seconds)
            if seconds > 0 { text += " (\(Int(Double(summary.total) / seconds)) events/s)" }
            text += "\n"
            for sink in summary.sinks {
                text += "  \(sink.name): \(sink.delivered) delivered"
                if sink.fromJournal > 0 { text += " (\(sink.fromJournal) read back from the journal)" }
                if sink.failures > 0 { text += ", \(sink.failures) failed attempts" }
                if sink.closed { text += ", reader went away" }
                if let runs = hooks[sink.name] {
                    text += " (\(runs.skipped) left out by its filters); runs: \(runs.succeeded) succeeded"
                    if runs.failed > 0 { text += ", \(runs.failed) failed" }
                    if runs.timedOut > 0 { text += " (\(runs.timedOut) timed out)" }
                    if runs.retried > 0 { text += ", \(runs.retried) retries" }
                }
                if sink.undelivered > 0 {
                    text +=
                        ", \(sink.undelivered) not delivered ("
                        + (journalKept
                            ? "kept in the journal for the next run"
                            : "the replay's journal is temporary: give --state to keep them for the next run")
                    text += sink.lastFailure.map { "; last failure: \($0))" } ?? ")"
                }
                text += "\n"
            }
            return text
        }
    }
}
