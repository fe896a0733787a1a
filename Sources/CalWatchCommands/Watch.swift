import ArgumentParser
import CalWatchCore
import CalWatchDaemon
import CalWatchRuntime
import Foundation
import Logging

extension CalwatchCommand {
    /// `calwatch watch`: the daemon.
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Follow the calendars and emit reminders, flights and live activities as they come due.",
            discussion: """
                Reads every configured calendar (or the paths given), then follows them with inotify: a file \
                renamed into place or deleted (the way vdirsyncer, khal and Radicale write) is read again at once, \
                one written in place or hard-linked once it has been quiet for --debounce-ms, and only that file. \
                A new meeting gets its reminders, \
                a moved one gets new ones and none of the old, a deleted or cancelled one ends its live activity \
                (reason removed or cancelled), a flight whose time changes is detected again. Events are committed \
                to the journal (`state:`) and then handed to the configured sinks.

                A file caught half-written is given two seconds to settle; one that stays broken is reported once \
                and the version read before stays in effect until it is repaired. Every folder is looked at again \
                on a new folder, when inotify loses events, and every --rescan-every as a safety net.

                Calendars on servers (`calendars:` entries with `url:` for an ICS feed or `caldav:` for a CalDAV \
                account) are polled on their `every:`, with jitter and a growing delay after failures, into \
                $XDG_CACHE_HOME/calwatch, and followed there like any folder: an unchanged feed costs one \
                conditional request, an unchanged CalDAV account one PROPFIND. A server that fails is reported once \
                and the copy kept stays in effect. A reload does not change which servers are polled.

                When to leave: reminders count back from the time to leave where `reminders.anchor` or a rule says \
                `leaveBy`. It comes from the item's X-APPLE-TRAVEL-DURATION, the `travelTime` of its place in \
                `places:` or of its rule, or the routing engine of `travel.routing` (OSRM or Valhalla) for the way \
                from where the event before it ends, asked for the ways it lacks within its hourly budget and again \
                as a way's hour nears; while it fails a way keeps its last answer, and a way it never answered is \
                estimated (the way's usual time at that hour of the week, kept in <journal>.routes.json, else the \
                straight line at a typical speed, plus travel.estimate.margin) and marked so. With `prep:`, \
                prepareDue comes at the time to leave less the time to get ready. `travel.weather` (Open-Meteo) \
                lengthens a drive in rain, snow, cold or fog. The geocoder of `travel.geocoder` places a LOCATION \
                that is only an address, one request a second.

                Flights: with `flights.status` (AeroDataBox, AeroAPI or aviationstack) each flight is asked about \
                hourly from a day before it leaves and every 10 minutes in its last 3 hours, within the month's \
                budget (counted in <journal>.flights.json); a departure moved by more than travel.replanAfter moves \
                the time to leave and the reminders, and a new gate, a cancellation or a diversion is a \
                flightChanged event. Boarding passes in the folders of `passes:` are followed, and wallet passes ask \
                their airline's web service for a newer version on the same schedule.

                Answers: `calwatch snooze`, `dismiss` and `ack`, a desktop card's buttons, the page's, and with \
                `answers:` on an ntfy webhook the phone's Snooze and Dismiss buttons, which post to this daemon's \
                local server. Each is applied within a second.

                Local server (`serve:`, docs/server.md): on a socket beside the journal (<journal>.sock, mode \
                0600), and with `serve: { listen: 127.0.0.1:8787 }` on loopback TCP behind the token in \
                <journal>.token: GET /v1/next (what `calwatch next` asks), /v1/day, /v1/events (a live stream, \
                resumable with Last-Event-ID), POST /v1/answers/snooze|dismiss|ack, /metrics, and the day as a \
                page at / (`calwatch next --open-page`). `serve: off` runs none.

                Time: calwatch sleeps until the next event in chunks of at most a minute on a clock that counts \
                suspended time, re-plans at once when the wall clock is set, and follows a change of the system \
                zone. After a suspend or a restart a missed reminder whose anchor has not passed comes once, \
                marked late (several missed offsets collapse into the latest); a live activity still running is \
                started.

                A fleet: with --fleet URL it is one of several watchers that share the calendars of a PostgreSQL \
                database (calwatch fleet add): it claims its share under a lease (--lease, 30 s) renewed every \
                third of it, takes the calendars of a watcher that stopped renewing, and sends only what that one \
                did not, and gives them all back when stopped; config.yml gives the rules, reminders and sinks \
                (not calendars:, and no day:), and the events are stored in that database once each. Give each \
                watcher its own --instance and --state. See docs/fleet.md.

                Signals: SIGTERM and SIGINT stop it gracefully (sinks finish what was committed, hooks in flight get \
                their timeout); SIGHUP reads the configuration again, and keeps the one in use when the new one has \
                problems. Logs go to standard error.

                Exit status: 0 stopped by a signal; 64 usage or configuration error; 74 the journal or a sink \
                cannot be opened; 75 another daemon holds the journal, or a watcher of the same name runs in the \
                fleet.

                Examples:
                  calwatch watch                                   # ~/.config/calwatch/config.yml, else ~/.calendars
                  calwatch watch --config config.yml --log-level debug
                  calwatch watch ~/.calendars --tz Europe/Berlin --state /tmp/journal.db
                  systemctl --user start calwatch                  # samples/calwatch.service
                  calwatch watch --fleet postgres://db/calwatch --instance w1 --config fleet.yml
                """
        )

        @OptionGroup var calendars: CalendarOptions
        @OptionGroup var settings: ConfigurationOptions

        @Option(help: "The journal (default: the configuration's state, ~/.local/state/calwatch/journal.db).")
        var state: String?

        @Option(
            help: ArgumentHelp(
                "How much to log on standard error: trace, debug, info (each change and wake), notice, warning, error.",
                valueName: "level"))
        var logLevel: String = "info"

        @Option(help: ArgumentHelp("How often every folder is looked at again (safety net).", valueName: "duration"))
        var rescanEvery = DurationArgument("10m")

        @Option(
            help: ArgumentHelp(
                "Quiet time after a file's last write in place before it is read (a rename into place is read at once).",
                valueName: "ms"))
        var debounceMs: Int = 100

        @Option(
            help: ArgumentHelp(
                "Be one watcher of a fleet: take calendars from the PostgreSQL database at this URL (calwatch fleet "
                    + "add) instead of the configured ones, and store events there once each.",
                valueName: "url"))
        var fleet: String?

        @Option(
            help: ArgumentHelp(
                "This watcher's name (instance: in config.yml), which every watcher of a fleet needs its own of.",
                valueName: "name"))
        var instance: String?

        @Option(
            help: ArgumentHelp(
                "With --fleet: how long a calendar stays with a watcher that stops renewing it (renewed every third "
                    + "of it).",
                valueName: "duration"))
        var lease = DurationArgument("30s")

        func validate() throws {
            guard Logger.Level(rawValue: logLevel) != nil else {
                throw ValidationError(
                    "--log-level '\(logLevel)' is not one of trace, debug, info, notice, warning, error, critical.")
            }
            try rescanEvery.checked("--rescan-every", in: 1...86_400, example: "10m or 1h")
            guard (0...10_000).contains(debounceMs) else {
                throw ValidationError("--debounce-ms must be between 0 and 10000.")
            }
            try lease.checked("--lease", in: 3...3_600, example: "30s or 2m")
            if fleet != nil && !calendars.paths.isEmpty {
                throw ValidationError(
                    "--fleet takes the calendars from the fleet's database; add paths there (calwatch fleet add) "
                        + "instead of naming them here.")
            }
            if let instance, instance.isEmpty || instance.unicodeScalars.count > 200 {
                throw ValidationError("--instance needs a name of 1 to 200 characters.")
            }
            _ = try calendars.zone()
        }

        func run() async throws {
            // A daemon keeps what it reads for weeks: large blocks it frees must not leave holes among that.
            FreedMemory.keepLargeBlocksApart()
            let level = Logger.Level(rawValue: logLevel) ?? .info
            LoggingSystem.bootstrap { label in
                var handler = TerminalSafeLogHandler(inner: StreamLogHandler.standardError(label: label))
                handler.logLevel = level
                return handler
            }
            let logger = Logger(label: "calwatch")
            // Read once here, so that a configuration with problems is a usage error before anything starts.
            let configuration = try settings.loadOrExit(calendars: calendars, useDefaultFile: true).named(instance)
            let (settings, calendars) = (settings, calendars)
            var options = Daemon.Options { try settings.load(calendars: calendars, useDefaultFile: true) }
            options.state = state
            options.instance = instance
            options.rescanEvery = rescanEvery.duration
            options.debounce = .milliseconds(debounceMs)
            options.fleet = fleet.map { ($0, lease.seconds ?? 30) }
            options.release = CalwatchVersion.release
            let daemon: Daemon
            do {
                daemon = try await Daemon.build(configuration: configuration, options: options, logger: logger)
            } catch {
                // A configuration's problem names its file and line already.
                StandardStreams.error((error.kind == .configuration ? "" : "calwatch: ") + "\(error)\n")
                switch error.kind {
                case .configuration: throw ExitCode.usageError
                case .journal: throw ExitCode.ioError
                case .busy: throw ExitCode.journalBusy
                }
            }
            do {
                try await daemon.run(logger: logger)
            } catch {
                logger.critical("\(error)")
                throw ExitCode.ioError
            }
        }
    }
}
