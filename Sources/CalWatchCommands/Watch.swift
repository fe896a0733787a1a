import ArgumentParser
import CalWatchCore
import CalWatchPostgres
import CalWatchRemote
import CalWatchRuntime
import CalWatchServer
import CalWatchWebhook
import Foundation
import Logging
import Prometheus
import ServiceLifecycle
import UnixSignals

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
        var rescanEvery: String = "10m"

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
        var lease: String = "30s"

        func validate() throws {
            guard Logger.Level(rawValue: logLevel) != nil else {
                throw ValidationError(
                    "--log-level '\(logLevel)' is not one of trace, debug, info, notice, warning, error, critical.")
            }
            guard let seconds = DurationText.seconds(rescanEvery), (1...86_400).contains(seconds) else {
                throw ValidationError(
                    "--rescan-every '\(rescanEvery)' is not a duration from 1s to 1d; write it like 10m or 1h.")
            }
            guard (0...10_000).contains(debounceMs) else {
                throw ValidationError("--debounce-ms must be between 0 and 10000.")
            }
            guard let seconds = DurationText.seconds(lease), (3...3_600).contains(seconds) else {
                throw ValidationError("--lease '\(lease)' is not a duration from 3s to 1h; write it like 30s or 2m.")
            }
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
            let loaded = try settings.loadOrExit(calendars: calendars, useDefaultFile: true).named(instance)
            let fleet = fleet.map { url in
                FleetWatch(
                    url: url, configuration: loaded, lease: DurationText.seconds(lease) ?? 30, logger: logger)
            }
            let initial = try fleet?.settleOrExit(loaded) ?? loaded
            let instance = instance
            // A refused data file leaves flights without airports: said once, at start.
            for problem in ReferenceData.problems { logger.error("\(problem)") }
            let settings = settings
            let calendars = calendars
            let state = state
            // Only a watch without a configured zone follows the system's.
            let followsSystemZone = initial.timeZone == nil
            // A routing engine's answers, kept across reloads; asked by the poller below.
            let routeHistory = RouteHistoryFile(journal: state ?? initial.statePath)
            let routes = initial.travel.routing.map { _ in routeHistory.load() }
            // A weather forecast's answers, asked by the poller below.
            let weather = initial.travel.weather.map { _ in WeatherCache() }
            // A geocoder's answers, read from disk once and kept there by the poller below.
            let geocodes = initial.travel.geocoder.map(Geocoder.loadCache)
            let setup = WatchService<ContinuousClock>.Setup(
                load: {
                    let configuration = try settings.load(calendars: calendars, useDefaultFile: true)
                    // A fleet's watcher reads the calendars it holds (their feeds from cache folders it polls).
                    if let fleet { return try fleet.configuration(from: configuration) }
                    // Feeds are read from their cache folders, which the poller below keeps fresh.
                    var named = configuration.named(instance)
                    named.calendars += FeedPoller<ContinuousClock>.folders(configuration.feeds)
                    return named
                },
                open: { configuration, now in
                    let zone = try CommandSupport.zone(configuration.timeZone)
                    let journal = try CommandSupport.openJournal(state ?? configuration.statePath)
                    // What the fleet delivered about the calendars taken over counts as sent.
                    let handOver = await fleet?.opening(configuration, journal: journal)
                    // Hooks inherit it, so `calwatch snooze "$CE_ID"` in a hook finds this daemon's journal.
                    setenv("CALWATCH_STATE", journal.path, 1)
                    let sinks = try CommandSupport.openSinks(configuration.sinks, state: journal.path, logger: logger)
                    return try await CalendarWatch(
                        configuration: configuration, zone: zone, journal: journal, sinks: sinks, now: now,
                        routes: routes, geocodes: geocodes, weather: weather, handOver: handOver,
                        recordedTime: { CommandSupport.timestamp }, logger: logger)
                },
                changeCalendars: { watch, now in try await fleet?.changeCalendars(watch, at: now) },
                problems: { problems, roots in fleet?.member.noted(problems, roots: roots) })
            var options = WatchService<ContinuousClock>.Options()
            options.rescanEvery = .seconds(DurationText.seconds(rescanEvery) ?? 600)
            options.debounce = .milliseconds(debounceMs)
            let service = WatchService(
                setup: setup, options: options, clock: ContinuousClock(), wallClock: { CommandSupport.timestamp },
                logger: logger,
                systemZone: {
                    followsSystemZone ? TimeZoneDatabase.rules(named: TimeZoneDatabase.systemZoneName) : nil
                })
            var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
            // Metrics as the configuration at start asks (a reload does not move the file), and for the local
            // server's /metrics. The file's writer is first in the group, so it is stopped last, after the watch's
            // sinks have finished: its last write has their final counts.
            let registry = PrometheusCollectorRegistry()
            if initial.metrics.textfile != nil || initial.serve.enabled { PrometheusTextfile.bootstrap(registry) }
            if let path = initial.metrics.textfile {
                services.append(
                    .init(
                        service: PrometheusTextfile.Service(
                            PrometheusTextfile(path: path, registry: registry), every: .seconds(initial.metrics.every),
                            clock: ContinuousClock(),
                            failed: { logger.error("cannot write the metrics to \(path): \($0)") })))
            }
            // The fleet's heartbeat, before the watch in the group so that it stops after it: its calendars are
            // given back once the watch has stored what it committed. It joins before the watch starts, which then
            // reads what its first beat took; a watcher of the same name alive elsewhere stops this one here.
            if let fleet {
                fleet.onChange { service.calendarsChanged() }
                do {
                    try await fleet.member.start()
                } catch {
                    StandardStreams.error("calwatch: \(error)\n")
                    throw ExitCode.journalBusy
                }
                services.append(.init(service: fleet.member))
                services.append(.init(service: fleet.feeds))
            }
            // The feeds as the configuration at start names them (a reload does not change what is polled).
            if !initial.feeds.isEmpty {
                services.append(
                    .init(service: FeedPoller(feeds: initial.feeds, clock: ContinuousClock(), logger: logger)))
            }
            // The routing engine as the configuration at start names it.
            if let routing = initial.travel.routing, let routes {
                services.append(
                    .init(
                        service: RoutePoller(
                            routing: routing, replanAfter: initial.travel.replanAfter, cache: routes, logger: logger,
                            history: routeHistory, changed: { service.travelTimesChanged() })))
            }
            if let settings = initial.travel.weather, let weather {
                services.append(
                    .init(
                        service: WeatherPoller(
                            weather: settings, cache: weather, logger: logger,
                            changed: { service.travelTimesChanged() })))
            }
            if let geocoder = initial.travel.geocoder, let geocodes {
                services.append(
                    .init(
                        service: GeocodePoller(
                            geocoder: geocoder, cache: geocodes, logger: logger,
                            changed: { service.travelTimesChanged() })))
            }
            services.append(.init(service: service))
            // The local server (`serve:`): next, the day, the event stream, answers (a phone's signed buttons among
            // them, recorded in the journal the daemon reads) and metrics. After the watch, so it stops first.
            let journalPath = state ?? initial.statePath
            let answers = try CommandSupport.openJournalOrExit(journalPath)
            let buttonSnooze = initial.sinks.lazy.compactMap { ($0.kind as? WebhookSettings)?.answers?.snooze }.first
            do {
                services += try LocalServer.services(
                    initial.serve,
                    environment: .init(
                        journal: journalPath, view: { service.nextSource }, answers: { answers },
                        now: { CommandSupport.now }, timestamp: { CommandSupport.timestamp }, metrics: registry,
                        buttonSnooze: buttonSnooze,
                        configurationFile: journalPath == initial.statePath
                            ? initial.file.flatMap(ConfigurationLoader.realPath) : nil),
                    logger: logger)
            } catch {
                logger.error("no local server: \(error); calwatch next reads the calendars itself")
            }
            // One daemon per journal, held until the process ends.
            let lock = try CommandSupport.lockJournalOrExit(state ?? initial.statePath)
            defer { withExtendedLifetime(lock) {} }
            let group = ServiceGroup(
                configuration: .init(
                    services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            do {
                try await group.run()
            } catch {
                logger.critical("\(error)")
                throw ExitCode.ioError
            }
        }
    }
}
