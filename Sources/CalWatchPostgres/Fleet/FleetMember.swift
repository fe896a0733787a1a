public import CalWatchCore
import CalWatchRuntime
import Foundation
public import Logging
public import ServiceLifecycle

/// One watcher's part in a fleet (`calwatch watch --fleet`): a heartbeat every third of a lease that renews what it
/// holds, takes free calendars up to its fair share and gives back what is above it; on a graceful shutdown it
/// gives everything back at once.
///
/// The watch reads the calendars held through `configuration(from:)`; whenever they change, `changed` is called
/// (the daemon reloads: its bus finishes what was committed, then a watch of the new set opens). A calendar given
/// back is released in the database only after the watch without it has opened, so every event committed about it
/// was stored first; a calendar taken comes with what the fleet delivered about it (`opening`), so the new holder
/// sends only what was not sent. While the database cannot be reached, the watcher keeps what it holds.
public final class FleetMember: Service, Sendable {
    public struct Options: Sendable {
        /// How long a lease runs; renewed every third of it.
        public var lease: Int64 = 30
        /// What the rows may name on this machine (`fleet:` in config.yml).
        public var access = FleetAccess()
        /// systemd's `$CREDENTIALS_DIRECTORY`: credentials not in `access` are looked for there.
        public var credentialsDirectory: String?
        public init() {}
    }

    private struct State {
        /// The calendars held, by name, as the last heartbeat found them.
        var held: [String: FleetCalendar] = [:]
        /// What this watcher reads for each held calendar it admitted; a held calendar missing here is not read.
        var admitted: [String: FleetCalendar.Admitted] = [:]
        /// Held calendars not read, with why, as last written to their rows.
        var refused: [String: String] = [:]
        /// Whether the last heartbeat was refused for a clock too far from the database's.
        var clockRefused = false
        /// Held calendars being given back: out of the watch's configuration, released once it no longer has them.
        var leaving: Set<String> = []
        /// The calendars of the watch last opened.
        var opened: Set<String> = []
        var joined = false
        var failing = false
        /// The last heartbeat that reached the database.
        var lastBeat: Timestamp?
        /// Problems found reading calendars, by name, not yet written to the database.
        var problems: [String: String] = [:]
        /// No calendar whose lease expired is taken before this: after this watcher was cut off from the database
        /// for longer than a lease, so were the others, probably; they get a lease to renew what looks expired.
        var claimAfter: Timestamp?
    }

    public let watcher: String
    public let options: Options
    private let link: FleetLink
    private let listener: FleetListener
    private let state = Locked(State())
    private let wallClock: @Sendable () -> Timestamp
    private let backlog: @Sendable () async -> Int64
    private let changed: @Sendable () -> Void
    private let logger: Logger
    /// Calendars to give back once what was committed about them is stored, handled by `run`.
    private let releases: AsyncStream<(names: [String], stored: @Sendable () async -> Bool)>
    private let pendingReleases: AsyncStream<(names: [String], stored: @Sendable () async -> Bool)>.Continuation

    /// `backlog`: events the watcher's journal holds that the database has not stored; `changed`: the calendars
    /// held changed (reload the watch).
    public init(
        url: String, password: [String]? = nil, watcher: String, options: Options = Options(),
        wallClock: @escaping @Sendable () -> Timestamp, backlog: @escaping @Sendable () async -> Int64,
        changed: @escaping @Sendable () -> Void, logger: Logger
    ) {
        self.watcher = watcher
        self.options = options
        self.link = FleetLink(url: url, passwordCommand: password, watcher: watcher, options: options)
        self.listener = FleetListener(url: url, passwordCommand: password, watcher: watcher)
        self.wallClock = wallClock
        self.backlog = backlog
        self.changed = changed
        self.logger = logger
        (releases, pendingReleases) = AsyncStream.makeStream()
    }

    /// `base` (config.yml's rules, reminders and sinks) with the calendars this watcher holds, each path scoped by
    /// its name in the fleet, so one invitation in two people's calendars is two occurrences. Calendars on
    /// servers are read from their cache folders (`sources`: what to poll), as `open` makes them.
    public func configuration(from base: Configuration, open: Open) -> Configuration {
        var configuration = base
        configuration.fleet = true
        (configuration.calendars, configuration.scopes, configuration.sources) = held(open: open)
        configuration.people = people()
        return configuration
    }

    /// The roots of the calendars held (and not being given back) that this watcher admitted, whose calendar each
    /// is, and the calendars on servers to poll.
    private func held(open: Open) -> ([String], [String: String], [SourceSettings]) {
        var roots: [String] = []
        var scopes: [String: String] = [:]
        var sources: [SourceSettings] = []
        let held = state.withLock { state in
            state.held.keys.filter { !state.leaving.contains($0) }.compactMap { name in
                state.admitted[name].map { (name, $0) }
            }
        }
        for (name, admitted) in held.sorted(by: { $0.0 < $1.0 }) {
            let root: String
            switch admitted {
            case .server(let server):
                guard let (source, cache) = open(server) else { continue }
                sources.append(source)
                root = cache
            case .path(let path):
                root = path
            }
            roots.append(root)
            scopes[root] = name
        }
        return (roots, scopes, sources)
    }

    /// How the watcher's program reads a calendar on a server it admitted: its settings, and the cache folder
    /// (made) that holds its copy; `nil` when the program cannot read it.
    public typealias Open = (FleetCalendar.Server) -> (settings: SourceSettings, folder: String)?

    /// The sealed tokens of the account calendar `name`, read only while this watcher holds its lease (a refusal
    /// otherwise); `nil` when nobody signed in to it.
    public func accountTokens(of name: String) async throws -> FleetDatabase.AccountTokenRow? {
        try await link.accountTokens(of: name, at: wallClock())
    }

    /// Keeps an account calendar's refreshed tokens over the version they were refreshed from: whether they were.
    public func keepAccountTokens(of name: String, sealed: String, replacing version: Int64) async throws -> Bool {
        try await link.keepAccountTokens(of: name, sealed: sealed, replacing: version, at: wallClock())
    }

    /// The address of each calendar's person (`person`), by name: whose own attendee entries are whose.
    public func people() -> [String: [String]] {
        state.withLock { state in
            state.held.values.reduce(into: [:]) { people, calendar in
                if let person = calendar.person, person.contains("@") { people[calendar.name] = [person] }
            }
        }
    }

    /// What changed in the calendars held since the watch last took them in.
    public struct Change: Sendable {
        /// The roots to read now, whose calendar each is, and the calendars on servers to poll.
        public var roots: [String]
        public var scopes: [String: String]
        public var sources: [SourceSettings]
        /// The calendars taken from other watchers, with what those delivered.
        public var handOver: PlannerState.HandOver?
        /// The calendars being given back: release them (`release`) once what was committed about them is stored.
        public var given: [String]
        /// Whether the watch has anything to do.
        public var isEmpty: Bool { handOver == nil && given.isEmpty && !lost }
        var lost = false
    }

    /// What the watch in use must change to read the calendars held now (a heartbeat took, gave or lost some).
    public func change(open: Open) async -> Change {
        let (roots, scopes, sources) = held(open: open)
        let names = Set(scopes.values)
        let (taken, given, lost) = state.withLock { state in
            let taken = names.subtracting(state.opened)
            let given = state.leaving.intersection(state.opened)
            let lost = !state.opened.subtracting(names).subtracting(given).isEmpty
            state.opened = names
            return (taken, given, lost)
        }
        var change = Change(roots: roots, scopes: scopes, sources: sources, given: given.sorted(), lost: lost)
        if !taken.isEmpty { change.handOver = await handOver(taken) }
        return change
    }

    /// Gives calendars back, once the watch no longer reads them and has stored what it committed about them.
    /// When the database cannot be reached, they are kept (`keep`) instead of left unread until it answers.
    /// Gives calendars back once `stored` says the database has what the watch committed about them, without
    /// holding the watch up: asked every 50 ms for at most a third of a lease, after which (the database down)
    /// they are read again instead, so that no calendar goes unread while it cannot be handed over.
    public func release(_ given: [String], whenStored stored: @escaping @Sendable () async -> Bool) {
        pendingReleases.yield((given, stored))
    }

    private func releaseWhenStored(_ given: [String], stored: @Sendable () async -> Bool) async {
        let deadline = ContinuousClock.now.advanced(by: .seconds(max(1, options.lease / 3)))
        while await !stored() {
            // Stopping: leaving gives everything back.
            if Task.isCancelled { return }
            guard ContinuousClock.now < deadline else { return keep(given) }
            try? await Task.sleep(for: .milliseconds(50))
        }
        await release(given)
    }

    public func release(_ given: [String]) async {
        guard !given.isEmpty else { return }
        let released: [String]
        do {
            released = try await link.release(given, at: wallClock())
        } catch {
            logger.warning("cannot give calendars back (\(error)); reading them again until it can")
            keep(given)
            return
        }
        let holding = state.withLock { state in
            state.leaving.subtract(given)
            for name in given { state.held[name] = nil }
            return state.held.count - state.leaving.count
        }
        logger.info("gave calendars back", metadata: ["fleet.released": "\(released.count)"])
        CalwatchMetrics.fleet(holding: holding, claimed: 0, released: released.count, lost: 0)
    }

    /// Notes problems the watch found reading files (`path: …` as reported): each is written to its calendar's
    /// row at the next heartbeat, for `calwatch fleet show`.
    public func noted(_ problems: [CalendarProblem], roots: [String: String]) {
        let found: [(String, String)] = problems.compactMap { problem in
            guard problem.severity == .error,
                let name = roots.first(where: { problem.path == $0.key || problem.path.hasPrefix($0.key + "/") })?.value
            else { return nil }
            return (name, problem.withoutQuotedText)
        }
        guard !found.isEmpty else { return }
        state.withLock { state in for (name, text) in found { state.problems[name] = text } }
    }

    /// Reads calendars being given back again: what the watch committed about them could not be stored in time,
    /// or the database would not take them back. A later heartbeat gives them back again.
    public func keep(_ given: [String]) {
        state.withLock { $0.leaving.subtract(given) }
        changed()
    }

    /// What the fleet delivered about calendars taken now.
    private func handOver(_ taken: Set<String>) async -> PlannerState.HandOver {
        let now = wallClock()
        do {
            let delivered = try await link.delivered(Array(taken), at: now)
            logger.info(
                "took calendars over",
                metadata: ["fleet.calendars": "\(taken.count)", "fleet.delivered_before": "\(delivered.count)"])
            return PlannerState.HandOver(scopes: taken, at: now.instant, delivered: delivered)
        } catch {
            logger.warning(
                """
                cannot read what was delivered about the calendars taken (\(error)); PostgreSQL still stores each \
                event once, but other sinks may get a repeat of what was due in the hand-over
                """)
            return PlannerState.HandOver(scopes: taken, at: now.instant, delivered: [])
        }
    }

    /// The watch of `configuration` is opening: the calendars it no longer has are given back now (the watch
    /// before it finished storing what it committed), and what the fleet delivered about those it newly has is
    /// returned, to count as emitted.
    public func opening(_ configuration: Configuration) async -> PlannerState.HandOver? {
        let names = Set(configuration.scopes.values)
        let (taken, given) = state.withLock { state in
            let taken = names.subtracting(state.opened)
            let given = state.leaving.subtracting(names)
            state.opened = names
            return (taken, given)
        }
        await release(Array(given))
        return taken.isEmpty ? nil : await handOver(taken)
    }

    /// Joins the fleet and beats once, before the watch starts. Throws when a watcher of this name is alive
    /// elsewhere; a database that cannot be reached is only logged (the heartbeats go on trying).
    public func start() async throws {
        do {
            try await link.join(lease: options.lease, clock: wallClock, at: wallClock())
            state.withLock { $0.joined = true }
        } catch let failure as FleetDatabase.Failure where failure.isRefusal {
            throw failure
        } catch {}
        await beat()
    }

    /// One heartbeat now: joins the fleet the first time, renews, takes and gives back. Returns whether the
    /// calendars held changed (and calls `changed` when they did).
    @discardableResult
    public func beat() async -> Bool {
        let now = wallClock()
        let backlog = await backlog()
        let heartbeat: FleetDatabase.Heartbeat
        do {
            if !state.withLock({ $0.joined }) {
                try await link.join(lease: options.lease, clock: wallClock, at: now)
                state.withLock { $0.joined = true }
            }
            let takingExpired = state.withLock { state in
                if let last = state.lastBeat,
                    now.millisecondsSinceEpoch - last.millisecondsSinceEpoch > options.lease * 1000
                {
                    state.claimAfter = Timestamp(
                        millisecondsSinceEpoch: now.millisecondsSinceEpoch + options.lease * 1000)
                }
                return state.claimAfter.map { now >= $0 } ?? true
            }
            heartbeat = try await link.heartbeat(
                lease: options.lease, backlog: backlog, takingExpired: takingExpired, clock: wallClock, at: now)
            state.withLock { $0.lastBeat = now }
        } catch let failure as FleetDatabase.Failure where failure.clockSkew != nil {
            CalwatchMetrics.fleetHeartbeatFailed()
            // Whatever it holds expires on the others' clocks; reading on would send twice what they take.
            let (first, dropped) = state.withLock { state in
                defer { state.clockRefused = true }
                let dropped = !state.held.isEmpty
                state.held = [:]
                state.admitted = [:]
                state.leaving = []
                return (!state.clockRefused, dropped)
            }
            if first { logger.error("\(failure)") }
            if dropped { changed() }
            return dropped
        } catch {
            CalwatchMetrics.fleetHeartbeatFailed()
            let first = state.withLock { state in
                defer { state.failing = true }
                return !state.failing
            }
            if first {
                logger.warning(
                    """
                    cannot reach the fleet's database (\(error)); keeping the calendars held, retrying every \
                    \(max(1, options.lease / 3)) s
                    """)
            }
            return false
        }
        let problems = state.withLock { state in
            defer { state.problems.removeAll() }
            return state.problems
        }
        // The watch reports a problem that stays only once: one the database did not take waits for the next beat.
        if !problems.isEmpty, (try? await link.noteProblems(problems)) == nil {
            state.withLock { $0.problems.merge(problems) { old, _ in old } }
        }
        let (taken, lost, giving, holding) = state.withLock { state in
            if state.failing { logger.notice("the fleet's database answers again") }
            if state.clockRefused { logger.notice("this watcher's clock agrees with the fleet database's again") }
            state.failing = false
            state.clockRefused = false
            state.admitted = heartbeat.admitted
            let now = Dictionary(heartbeat.held.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
            let lost = Set(state.held.keys).subtracting(now.keys)
            let taken = Set(now.keys).subtracting(state.held.keys)
            state.held = now
            state.leaving.formIntersection(now.keys)
            // Above the fair share: the last by name, of those not already leaving, go back.
            let staying = now.keys.filter { !state.leaving.contains($0) }.sorted()
            let giving = staying.suffix(max(0, heartbeat.excess - state.leaving.count))
            state.leaving.formUnion(giving)
            return (taken, lost, giving.count, now.count - state.leaving.count)
        }
        let newlyRefused = state.withLock { state in
            let refused = heartbeat.refused.mapValues(\.description)
            defer { state.refused = refused }
            return refused.filter { state.refused[$0.key] != $0.value }
        }
        for (name, why) in newlyRefused.sorted(by: { $0.key < $1.key }) {
            logger.error("not reading a calendar of the fleet: \(why)", metadata: ["fleet.calendar": "\(name)"])
        }
        if !lost.isEmpty {
            logger.warning(
                "another watcher took calendars whose lease expired while this one could not renew it",
                metadata: ["fleet.lost": "\(lost.count)"])
        }
        CalwatchMetrics.fleet(holding: holding, claimed: taken.count, released: 0, lost: lost.count)
        guard !taken.isEmpty || !lost.isEmpty || giving > 0 else { return false }
        logger.info(
            "calendars held changed",
            metadata: [
                "fleet.taken": "\(taken.count)", "fleet.giving_back": "\(giving)", "fleet.lost": "\(lost.count)",
                "fleet.holding": "\(holding)", "fleet.watchers": "\(heartbeat.watchers)",
            ])
        changed()
        return true
    }

    /// Heartbeats every third of a lease, and at once when another watcher gives calendars back or joins (a
    /// notification), until a graceful shutdown, which gives every calendar back (the watch has finished by
    /// then: it stops before this service, being later in the group).
    public func run() async throws {
        let every = Duration.seconds(max(1, options.lease / 3))
        let listener = listener
        await withTaskGroup(of: Void.self) { group in
            // Releases waiting for the database, one after another; ended with the heartbeats.
            group.addTask {
                for await (names, stored) in self.releases { await self.releaseWhenStored(names, stored: stored) }
            }
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                let started = ContinuousClock.now
                await cancelWhenGracefulShutdown { await listener.wait(upTo: every) }
                guard !Task.isCancelled && !Task.isShuttingDownGracefully else { break }
                // A burst of notifications (every watcher giving back at once) makes one beat a quarter second.
                let quiet = started.advanced(by: .milliseconds(250)) - ContinuousClock.now
                if quiet > .zero { try? await Task.sleep(for: quiet) }
                await beat()
            }
            pendingReleases.finish()
            group.cancelAll()
        }
        do {
            try await link.leave(at: wallClock())
            logger.info("left the fleet; its calendars are free for the other watchers")
        } catch {
            logger.warning("cannot give the calendars back (\(error)); they are free once their lease expires")
        }
    }
}

/// The member's connection to the fleet's database, on a thread of its own (every libpq call blocks); made again
/// after a failure.
actor FleetLink {
    private let executor = BlockingExecutor(name: "calwatch-fleet")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let url: String
    private let passwordCommand: [String]?
    private let watcher: String
    private let options: FleetMember.Options
    private var database: FleetDatabase?

    init(url: String, passwordCommand: [String]?, watcher: String, options: FleetMember.Options) {
        self.url = url
        self.passwordCommand = passwordCommand
        self.watcher = watcher
        self.options = options
    }

    private func connected() async throws -> FleetDatabase {
        if let database, database.connection.isUsable { return database }
        database = nil
        let password = try await passwordCommand.asyncMap { try await PasswordCommand.run($0) }
        do {
            let opened = try FleetDatabase(url: url, password: password, applicationName: "calwatch " + watcher)
            database = opened
            return opened
        } catch let error as PostgresError {
            throw FleetDatabase.Failure(description: ConnectionString(url).scrubbed(error.message))
        }
    }

    /// Runs `body` on the connection; a failure drops it, so the next call connects again.
    private func using<T>(_ body: (FleetDatabase) throws -> T) async throws -> T {
        let database = try await connected()
        do {
            return try body(database)
        } catch let refusal as FleetDatabase.Failure where refusal.isRefusal {
            throw refusal
        } catch {
            self.database = nil
            throw error
        }
    }

    func join(lease: Int64, clock: @escaping @Sendable () -> Timestamp, at: Timestamp) async throws {
        try await using {
            try $0.join(
                watcher: watcher, host: ProcessInfo.processInfo.hostName, pid: getpid(), lease: lease,
                clockTolerance: FleetDatabase.clockTolerance(lease: lease), clock: clock, at: at)
        }
    }

    /// How each calendar held was admitted, kept while its row is unchanged: resolving paths and credentials anew
    /// at every heartbeat would look at the file system for every calendar every third of a lease.
    private var admissions: [FleetCalendar: Result<FleetCalendar.Admitted, FleetCalendar.Refusal>] = [:]

    /// A heartbeat, and how this watcher reads each calendar held (on this actor's thread: it looks at files);
    /// one it does not admit is refused like a bad row, and its row says why once.
    func heartbeat(
        lease: Int64, backlog: Int64, takingExpired: Bool, clock: @escaping @Sendable () -> Timestamp, at: Timestamp
    ) async throws -> FleetDatabase.Heartbeat {
        var beat = try await using {
            try $0.heartbeat(
                watcher: watcher, lease: lease, backlog: backlog, takingExpired: takingExpired,
                clockTolerance: FleetDatabase.clockTolerance(lease: lease), clock: clock, at: at)
        }
        var kept: [FleetCalendar: Result<FleetCalendar.Admitted, FleetCalendar.Refusal>] = [:]
        var newlyRefused: [String: String] = [:]
        for calendar in beat.held {
            let admission =
                admissions[calendar]
                ?? calendar.admitted(by: options.access, credentialsDirectory: options.credentialsDirectory)
            if admissions[calendar] == nil, case .failure(let refusal) = admission {
                newlyRefused[calendar.name] = refusal.description
            }
            kept[calendar] = admission
            switch admission {
            case .success(let admitted): beat.admitted[calendar.name] = admitted
            case .failure(let refusal): beat.refused[calendar.name] = refusal
            }
        }
        // A refusal the database did not take is worked out and written again at the next heartbeat.
        if !newlyRefused.isEmpty, (try? await using { try $0.noteProblems(newlyRefused, watcher: watcher) }) == nil {
            kept = kept.filter { newlyRefused[$0.key.name] == nil }
        }
        admissions = kept
        return beat
    }

    func release(_ names: [String], at: Timestamp) async throws -> [String] {
        try await using { try $0.release(names, watcher: watcher, at: at) }
    }

    func delivered(_ names: [String], at: Timestamp) async throws -> [PlannerState.Delivered] {
        try await using { try $0.delivered(names, at: at) }
    }

    func noteProblems(_ problems: [String: String]) async throws {
        try await using { try $0.noteProblems(problems, watcher: watcher) }
    }

    func leave(at: Timestamp) async throws {
        try await using { try $0.leave(watcher: watcher, at: at) }
    }

    func accountTokens(of name: String, at: Timestamp) async throws -> FleetDatabase.AccountTokenRow? {
        try await using { try $0.accountTokens(of: name, watcher: watcher, at: at) }
    }

    func keepAccountTokens(of name: String, sealed: String, replacing version: Int64, at: Timestamp) async throws
        -> Bool
    {
        try await using {
            try $0.keepAccountTokens(of: name, sealed: sealed, replacing: version, watcher: watcher, at: at)
        }
    }
}

/// A connection that LISTENs on the fleet's channel, on a thread of its own (waiting blocks it).
actor FleetListener {
    private let executor = BlockingExecutor(name: "calwatch-fleet-listen")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let url: String
    private let passwordCommand: [String]?
    private let watcher: String
    private var connection: PostgresConnection?

    init(url: String, passwordCommand: [String]?, watcher: String) {
        self.url = url
        self.passwordCommand = passwordCommand
        self.watcher = watcher
    }

    /// Waits up to `duration` for a notification, in slices of a quarter second so that a cancelled task ends
    /// at once. Without a connection (the database down) it waits the whole time, and connects again next time.
    func wait(upTo duration: Duration) async {
        let deadline = ContinuousClock.now.advanced(by: duration)
        if connection?.isUsable != true {
            connection = nil
            do {
                let password = try await passwordCommand.asyncMap { try await PasswordCommand.run($0) }
                let opened = try PostgresConnection(
                    url: url, password: password, applicationName: "calwatch " + watcher, timeout: 5)
                try opened.execute("LISTEN \(FleetDatabase.channel)")
                connection = opened
            } catch {
                try? await Task.sleep(until: deadline)
                return
            }
        }
        while !Task.isCancelled, ContinuousClock.now < deadline, let connection {
            do {
                if try !connection.notifications(waitingUpTo: 250).isEmpty { return }
            } catch {
                self.connection = nil
                try? await Task.sleep(until: deadline)
                return
            }
        }
    }
}

extension Optional {
    fileprivate func asyncMap<U>(_ transform: (Wrapped) async throws -> U) async rethrows -> U? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
