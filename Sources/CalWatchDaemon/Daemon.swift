public import CalWatchCore
import CalWatchPostgres
import CalWatchRemote
import CalWatchRuntime
import CalWatchServer
import CalWatchWebhook
import Foundation
public import Logging
import Prometheus
public import ServiceLifecycle
public import UnixSignals

/// `calwatch watch` assembled: the parts a configuration and the command line ask for, as services in the order
/// they start, and the journal's one-writer lock, held from the build until the run ends. The command parses its arguments
/// and runs what this builds; a test builds and runs it in process.
public struct Daemon: Sendable {
    /// A part of the daemon. The order of the cases is the order the services start (and how they compare): a
    /// `ServiceGroup` stops them in reverse, so each part stops after the parts below it, which use it.
    public enum Part: CaseIterable, Sendable, Comparable {
        /// The metrics file, stopped last, after the watch's sinks have finished: its last write has their counts.
        case metricsFile
        /// A fleet's heartbeat, stopped after the watch: its calendars are given back once the watch has stored what
        /// it committed. It joins before the watch starts, which then reads what its first beat took.
        case fleet
        /// The calendars on servers, polled while the configuration in use names them (a reload that names others
        /// changes what is polled) or, in a fleet, while the watcher holds them.
        case feeds
        /// The routing engine's answers for the ways planning lacks.
        case routes
        /// The weather forecast for the ways' hours.
        case weather
        /// The geocoder's answers for addresses without a point.
        case geocodes
        /// The flight-status service's answers for the flights planning has.
        case flightStatus
        /// Wallet passes' newer versions from their issuers' web services, into the folders the watch follows.
        case passes
        /// The calendars read and followed, the planner, the journal and the sinks.
        case watch
        /// The local server (`serve:`), stopped first: nothing asks a daemon that is going.
        case server
    }

    /// What the command line adds to the configuration.
    public struct Options: Sendable {
        /// `--state`: the journal, instead of the configuration's `state:`.
        public var state: String?
        /// `--rescan-every`.
        public var rescanEvery: Duration = .seconds(600)
        /// `--debounce-ms`.
        public var debounce: Duration = .milliseconds(100)
        /// `--instance`.
        public var instance: String?
        /// `--fleet` and `--lease` (seconds).
        public var fleet: (url: String, lease: Int64)?
        /// The configuration read again, as at start (SIGHUP): the file and the command line's calendars and zone.
        public var reload: @Sendable () throws -> Configuration
        /// The release, for what sinks tell their receivers.
        public var release = "0"

        public init(reload: @escaping @Sendable () throws -> Configuration) {
            self.reload = reload
        }
    }

    /// What keeps a daemon from being built, and the exit status it means (sysexits).
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public enum Kind: Sendable {
            /// A configuration a fleet's watcher cannot run with (64).
            case configuration
            /// The journal cannot be opened (74).
            case journal
            /// Another daemon holds the journal, or a watcher of the same name runs in the fleet (75).
            case busy
        }

        public var kind: Kind
        public var description: String
    }

    /// The parts built, in the order they start.
    public let parts: [(part: Part, service: ServiceGroupConfiguration.ServiceConfiguration)]
    /// One daemon per journal.
    private let lock: JournalLock

    /// The services of the daemon `configuration` and `options` describe, its journal locked. Logs go to `logger`.
    public static func build(
        configuration loaded: Configuration, options: Options, logger: Logger
    ) async throws(Failure) -> Daemon {
        let polled = PolledCalendars(logger: logger)
        let fleet = options.fleet.map { fleet in
            FleetWatch(url: fleet.url, configuration: loaded, lease: fleet.lease, feeds: polled, logger: logger)
        }
        let initial: Configuration
        do {
            initial = try fleet?.settle(loaded) ?? loaded
        } catch {
            throw Failure(kind: .configuration, description: error.description)
        }
        let state = options.state
        let journalPath = state ?? initial.statePath
        let lock: JournalLock
        do {
            lock = try JournalLock(journal: journalPath)
        } catch {
            throw Failure(kind: .busy, description: "\(error)")
        }
        // A refused data file leaves flights without airports: said once, at start.
        for problem in ReferenceData.problems { logger.error("\(problem)") }
        var parts: [(Part, ServiceGroupConfiguration.ServiceConfiguration)] = []
        func add(_ part: Part, _ service: some Service) { parts.append((part, .init(service: service))) }

        // Answers kept across reloads: a routing engine's, the weather's, the geocoder's.
        let routeHistory = RouteHistoryFile(journal: journalPath)
        let routes = initial.travel.routing.map { _ in routeHistory.load() }
        let weather = initial.travel.weather.map { _ in WeatherCache() }
        let geocodes = initial.travel.geocoder.map(Geocoder.loadCache)
        let statuses = initial.flights.status.map { _ in FlightStatusFile.load(journal: journalPath) }
        let service = watch(
            initial, options: options, fleet: fleet, polled: polled, routes: routes, weather: weather,
            geocodes: geocodes, statuses: statuses, logger: logger)
        add(.watch, service)
        let signIns = browserSignIns(initial, fleet: fleet != nil)
        polled.onSignInNeeded { notice in
            var notice = notice
            notice.signInPage = signIns?.page(for: notice.account)
            service.signInNeeded(notice)
        }

        // Metrics as the configuration at start asks (a reload does not move the file), and for /metrics.
        let registry =
            initial.metrics.textfile != nil || initial.serve.enabled
            ? PrometheusTextfile.daemonRegistry : PrometheusCollectorRegistry()
        if let path = initial.metrics.textfile {
            add(
                .metricsFile,
                PrometheusTextfile.Service(
                    PrometheusTextfile(path: path, registry: registry), every: .seconds(initial.metrics.every),
                    clock: ContinuousClock(), failed: { logger.error("cannot write the metrics to \(path): \($0)") }))
        }
        if let fleet {
            fleet.onChange { service.calendarsChanged() }
            do {
                try await fleet.member.start()
            } catch {
                throw Failure(kind: .busy, description: "\(error)")
            }
            add(.fleet, fleet.member)
        }
        add(.feeds, polled)
        if let routing = initial.travel.routing, let routes {
            add(
                .routes,
                RoutePoller(
                    routing: routing, replanAfter: initial.travel.replanAfter, cache: routes, logger: logger,
                    history: routeHistory, changed: { service.travelTimesChanged() }))
        }
        if let settings = initial.travel.weather, let weather {
            add(
                .weather,
                WeatherPoller(
                    weather: settings, cache: weather, logger: logger, changed: { service.travelTimesChanged() }))
        }
        if let geocoder = initial.travel.geocoder, let geocodes {
            add(
                .geocodes,
                GeocodePoller(
                    geocoder: geocoder, cache: geocodes, logger: logger, changed: { service.travelTimesChanged() }))
        }
        if let settings = initial.flights.status, let statuses {
            add(
                .flightStatus,
                FlightStatusPoller(
                    settings: settings, cache: statuses, journal: journalPath,
                    replanAfter: initial.travel.replanAfter, logger: logger,
                    changed: { service.travelTimesChanged() }))
        }
        // Passes' folders as the configuration at start names them (a reload does not move them).
        add(.passes, WalletPassUpdates(folders: initial.passes, logger: logger))
        // The local server: next, the day, the event stream, answers (a phone's signed buttons among them, recorded
        // in the journal the daemon reads) and metrics.
        let answers = try openJournal(journalPath)
        do {
            let buttonSnooze = initial.sinks.lazy.compactMap { ($0.kind as? WebhookSettings)?.answers?.snooze }.first
            let served = try LocalServer.services(
                initial.serve,
                environment: .init(
                    journal: journalPath, view: { service.nextSource }, answers: { answers },
                    now: { Timestamp.now.instant }, timestamp: { Timestamp.now }, metrics: registry,
                    buttonSnooze: buttonSnooze,
                    configurationFile: state == nil ? initial.file.flatMap(ConfigurationLoader.realPath) : nil,
                    accountSignIn: signIns.map { signIns in
                        .init(start: { signIns.start($0) }) { query in
                            switch await signIns.finish(query) {
                            case .signedIn(let account, let user):
                                (
                                    true,
                                    "Signed in to \(account)" + (user.map { " as \($0)" } ?? "") + "; calwatch reads "
                                        + "its calendars again within seconds. You can close this page."
                                )
                            case .refused(let account, let reason): (false, "\(account): \(reason)")
                            case nil: nil
                            }
                        }
                    }),
                logger: logger)
            parts += served.map { (.server, $0) }
        } catch {
            logger.error("no local server: \(error); calwatch next reads the calendars itself")
        }
        return Daemon(parts: parts.sorted { $0.0 < $1.0 }, lock: lock)
    }

    /// The watch: the configuration read again on SIGHUP (a fleet's watcher's calendars are those it holds;
    /// calendars on servers are read from the cache folders `polled` keeps fresh, and polled while the
    /// configuration in use names them), its journal and sinks opened at each (re)start.
    private static func watch(
        _ initial: Configuration, options: Options, fleet: FleetWatch?, polled: PolledCalendars, routes: RouteCache?,
        weather: WeatherCache?, geocodes: GeocodeCache?, statuses: FlightStatusCache?, logger: Logger
    ) -> WatchService<ContinuousClock> {
        let state = options.state
        let instance = options.instance
        let reload = options.reload
        let release = options.release
        // Only a watch without a configured zone follows the system's.
        let followsSystemZone = initial.timeZone == nil
        let setup = WatchService<ContinuousClock>.Setup(
            load: {
                let configuration = try reload()
                let unchanged = Self.readAtStartOnly(initial, configuration)
                if !unchanged.isEmpty {
                    logger.warning(
                        """
                        \(unchanged.joined(separator: ", ")) changed; read at start only, the one in use stays until \
                        calwatch watch is restarted
                        """)
                }
                if let fleet { return try fleet.configuration(from: configuration) }
                var named = configuration.named(instance).withAccountAddresses()
                named.calendars += FeedPoller<ContinuousClock>.folders(configuration.sources)
                return named
            },
            open: { configuration, now in
                let zoneName = configuration.timeZone ?? TimeZoneDatabase.systemZoneName
                guard
                    let zone = TimeZoneDatabase.rules(named: zoneName)
                        ?? WindowsZones.ianaName(for: zoneName).flatMap(TimeZoneDatabase.rules)
                else { throw Failure(kind: .configuration, description: "'\(zoneName)' is not a known zone") }
                let journal = try openJournal(state ?? configuration.statePath)
                // What the fleet delivered about the calendars taken over counts as sent.
                let handOver = await fleet?.opening(configuration, journal: journal)
                // Hooks inherit it, so `calwatch snooze "$CE_ID"` in a hook finds this daemon's journal.
                setenv("CALWATCH_STATE", journal.path, 1)
                let environment = SinkEnvironment(
                    now: { Timestamp.now.instant }, logger: logger, journal: journal.path, release: release)
                let sinks = try configuration.sinks.map { (sink) throws(SinkError) in try sink.open(in: environment) }
                let watch = try await CalendarWatch(
                    configuration: configuration, zone: zone, journal: journal, sinks: sinks, now: now,
                    routes: routes, geocodes: geocodes, weather: weather, statuses: statuses, handOver: handOver,
                    recordedTime: { Timestamp.now }, logger: logger)
                // What this configuration names is polled from now on; a reload that fails opens the one in use
                // again, and with it what it names.
                await polled.follow(configuration.sources)
                return watch
            },
            changeCalendars: { watch, now in try await fleet?.changeCalendars(watch, at: now) },
            problems: { problems, roots in fleet?.member.noted(problems, roots: roots) })
        var watchOptions = WatchService<ContinuousClock>.Options()
        watchOptions.rescanEvery = options.rescanEvery
        watchOptions.debounce = options.debounce
        return WatchService(
            setup: setup, options: watchOptions, clock: ContinuousClock(), wallClock: { Timestamp.now },
            logger: logger,
            systemZone: { followsSystemZone ? TimeZoneDatabase.rules(named: TimeZoneDatabase.systemZoneName) : nil })
    }

    /// The settings of `fresh` that differ from those the daemon started with but that only a start takes: where
    /// the journal, the metrics and the local server are, and the services planning asks (their caches and pollers
    /// are made at start).
    static func readAtStartOnly(_ initial: Configuration, _ fresh: Configuration) -> [String] {
        var changed: [String] = []
        if fresh.statePath != initial.statePath { changed.append("state:") }
        if fresh.metrics != initial.metrics { changed.append("metrics:") }
        if fresh.serve != initial.serve { changed.append("serve:") }
        if fresh.travel.routing != initial.travel.routing { changed.append("travel.routing:") }
        if fresh.travel.geocoder != initial.travel.geocoder { changed.append("travel.geocoder:") }
        if fresh.travel.weather != initial.travel.weather { changed.append("travel.weather:") }
        if fresh.flights.status != initial.flights.status { changed.append("flights.status:") }
        return changed
    }

    private static func openJournal(_ path: String) throws(Failure) -> JournalStore {
        do {
            return try JournalStore(path: path)
        } catch {
            throw Failure(kind: .journal, description: "cannot open the journal \(path): \(error)")
        }
    }

    /// The parts as one group, stopped gracefully on `signals`.
    public func group(gracefulShutdownSignals signals: [UnixSignal], logger: Logger) -> ServiceGroup {
        ServiceGroup(
            configuration: .init(
                services: parts.map(\.service), gracefulShutdownSignals: signals, logger: logger))
    }

    /// Runs the parts until they stop (on a signal, or when the task is cancelled), then gives the journal back:
    /// once this returns, another daemon may take it. A daemon runs once.
    public func run(gracefulShutdownSignals signals: [UnixSignal] = [.sigterm, .sigint], logger: Logger) async throws {
        defer { lock.release() }
        try await group(gracefulShutdownSignals: signals, logger: logger).run()
    }
}

extension Daemon {
    /// Sign-ins from the local server's page, for the accounts of `configuration`: where it listens on loopback TCP
    /// without TLS (the providers take `http://127.0.0.1:<port>` as a desktop application's redirect), and not for a
    /// fleet, whose accounts are signed in to with `calwatch fleet sign-in`.
    static func browserSignIns(_ configuration: Configuration, fleet: Bool) -> BrowserSignIns? {
        let accounts = configuration.sources.compactMap { $0.kind as? AccountSettings }
        guard !fleet, !accounts.isEmpty, configuration.serve.enabled, configuration.serve.tls == nil,
            let listen = configuration.serve.listen, listen.host == "127.0.0.1"
        else { return nil }
        return BrowserSignIns(accounts: accounts, redirect: "http://127.0.0.1:\(listen.port)")
    }
}
