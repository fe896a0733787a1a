public import CalWatchCore
import CalWatchPostgres
public import CalWatchRemote
import CalWatchRuntime
import Foundation
import Logging
import ServiceLifecycle

/// `calwatch watch --fleet`: the daemon as one watcher of a fleet. The calendars are those the fleet's database
/// gives it (`FleetMember`), read like configured ones and scoped by their name in the fleet; config.yml gives
/// the rest (rules, reminders, sinks), and a PostgreSQL sink into the fleet's database is added when it names
/// none, because that is where every watcher learns what was delivered.
final class FleetWatch: Sendable {
    let url: String
    let instance: String
    let member: FleetMember
    /// The daemon's polled calendars, which follow the calendars on servers held.
    let feeds: PolledCalendars
    /// What tells the daemon its calendars changed; set once the daemon is made.
    private let reload = Locked<(@Sendable () -> Void)?>(nil)
    /// The PostgreSQL sink into the fleet's database: what it has stored decides when a calendar may go.
    private let sink: String
    /// The journal of the watch in use, for the backlog each heartbeat reports.
    private let journal = Locked<JournalStore?>(nil)
    /// The accounts of config.yml (`accounts:`) the fleet's `account` rows may name: the applications signed in with.
    private let accounts: [String: AccountSettings]
    /// Each account calendar's tokens in the fleet's database, kept while this watcher runs.
    private let vaults = Locked<[String: FleetAccountVault]>([:])

    /// A watcher of the fleet at `url` named as `configuration` says. When config.yml names a PostgreSQL sink into
    /// that database, its name and its `passwordCommand` are the fleet's too.
    init(url: String, configuration: Configuration, lease: Int64, feeds: PolledCalendars, logger: Logger) {
        self.url = url
        self.instance = configuration.instance
        var options = FleetMember.Options()
        options.lease = lease
        options.access = configuration.fleetAccess
        let accounts = configuration.sources.compactMap { $0.kind as? AccountSettings }
        self.accounts = Dictionary(accounts.map { ($0.name, $0) }) { first, _ in first }
        options.access.accounts = Set(self.accounts.keys)
        options.credentialsDirectory = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"]
        let reload = reload
        let journal = journal
        let named = Self.sink(into: url, of: configuration)
        let sink = named?.name ?? Self.sinkName(url)
        self.sink = sink
        member = FleetMember(
            url: url, password: named?.postgres.passwordCommand, watcher: instance, options: options,
            wallClock: { Timestamp.now },
            backlog: {
                guard let journal = journal.withLock({ $0 }) else { return 0 }
                let last = (try? await journal.lastSequence()) ?? 0
                return max(0, last - ((try? await journal.cursor(for: sink)) ?? last))
            },
            changed: { reload.withLock { $0 }?() }, logger: logger)
        self.feeds = feeds
    }

    /// The PostgreSQL sink of `configuration` into the database at `url`, if it names one.
    private static func sink(
        into url: String, of configuration: Configuration
    ) -> (name: String, postgres: PostgresSettings)? {
        for sink in configuration.sinks {
            if let postgres = sink.kind as? PostgresSettings, postgres.url == url { return (sink.name, postgres) }
        }
        return nil
    }

    /// The PostgreSQL sink's name for the fleet's database, unless config.yml names it.
    private static func sinkName(_ url: String) -> String { "postgres:" + ConnectionString(url).redacted }

    /// Calls `action` whenever the calendars held change.
    func onChange(_ action: @escaping @Sendable () -> Void) {
        reload.withLock { $0 = action }
    }

    /// Changes the calendars `watch` reads to those held now: the files of calendars taken are read, with what
    /// the fleet delivered about them; calendars given go once the fleet's database has stored every event
    /// committed so far (`FleetMember.release(_:whenStored:)`).
    func changeCalendars(_ watch: CalendarWatch, at now: Instant) async throws -> CalendarWatch.Report? {
        let change = await member.change(open: open)
        guard !change.isEmpty else { return nil }
        await feeds.follow(change.sources)
        let report = try await watch.calendarsChanged(
            roots: change.roots, scopes: change.scopes, people: member.people(), handOver: change.handOver, at: now)
        guard !change.given.isEmpty, let journal = journal.withLock({ $0 }) else { return report }
        let committed = try await journal.lastSequence()
        let sink = sink
        member.release(change.given) { ((try? await journal.cursor(for: sink)) ?? 0) >= committed }
        return report
    }

    /// What a fleet's watcher takes from config.yml: everything but `calendars:`, with the fleet's database as a
    /// PostgreSQL sink. `day:` is refused: conflicts and agendas are one person's, and a watcher of a fleet holds
    /// many people's calendars.
    func settle(_ configuration: Configuration) throws(Refusal) -> Configuration {
        if configuration.planner.day != nil {
            throw Refusal(
                description: "\(configuration.file ?? "config.yml"): error: day: conflicts, overruns and agendas are "
                    + "not available with --fleet: they are one person's, and a watcher of a fleet holds many "
                    + "people's calendars; remove day: from the fleet's configuration")
        }
        var settled = configuration
        settled.calendars = []
        settled.sources = []
        var found = false
        for index in settled.sinks.indices {
            guard var postgres = settled.sinks[index].kind as? PostgresSettings, postgres.url == url else { continue }
            postgres.fleet = true
            settled.sinks[index].kind = postgres
            found = true
        }
        if !found {
            var postgres = PostgresSettings(url: url, watcher: instance)
            postgres.fleet = true
            settled.sinks.append(SinkSettings(name: Self.sinkName(url), kind: postgres))
        }
        return settled
    }

    /// A configuration a fleet's watcher cannot run with.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// The configuration with the calendars this watcher holds now.
    func configuration(from configuration: Configuration) throws -> Configuration {
        member.configuration(from: try settle(configuration.named(instance)), open: open)
    }

    /// A calendar on a server the fleet gave this watcher, as calwatch's own kinds read it, and its cache folder.
    func open(_ server: FleetCalendar.Server) -> (settings: SourceSettings, folder: String)? {
        guard let settings = settings(for: server), let folder = FeedPoller<ContinuousClock>.folders([settings]).first
        else { return nil }
        return (settings, folder)
    }

    /// A fleet's `account` row is the account of config.yml it names, read for the row's calendar (its copy's
    /// folder and notices are the row's) with the tokens the fleet's database keeps for it. Renewal by device code
    /// is the user's own: in a fleet, `calwatch fleet sign-in` signs in again.
    func settings(for server: FleetCalendar.Server) -> SourceSettings? {
        guard case .account(let name, let every) = server.source else { return Self.settings(for: server) }
        guard var account = accounts[name] else { return nil }
        account.scope = server.name
        account.renewByDeviceCode = false
        let vault = vaults.withLock { vaults in
            if let kept = vaults[server.name] { return kept }
            let made = FleetAccountVault(
                calendar: server.name, member: member, keyCommand: server.passwordCommand,
                keyFile: server.passwordFile)
            vaults[server.name] = made
            return made
        }
        account.vault = AccountVaultReference(vault)
        return SourceSettings(account, every: every)
    }

    /// A fleet's `feed` row is an ICS feed under the calendar's name; a `caldav` row, an account whose collections
    /// keep their own names. Each is kept in a cache folder of its own scope (the calendar's name), so that two
    /// people's rows with one address are two calendars, each read in its person's scope.
    static func settings(for server: FleetCalendar.Server) -> SourceSettings? {
        switch server.source {
        case .path, .account: nil
        case .feed(let url, let every):
            SourceSettings(ICSFeedSettings(address: url, scope: server.name), name: server.name, every: every)
        case .caldav(let url, let username, _, let every):
            SourceSettings(
                CalDAVSettings(
                    address: url, username: username, passwordCommand: server.passwordCommand,
                    passwordFile: server.passwordFile, scope: server.name),
                every: every)
        }
    }

    /// A watch of `configuration` opens on `journal`: what the fleet delivered about the calendars it takes over is
    /// returned. (The daemon polls the calendars on servers the configuration holds once the watch is open.)
    func opening(_ configuration: Configuration, journal: JournalStore) async -> PlannerState.HandOver? {
        self.journal.withLock { $0 = journal }
        return await member.opening(configuration)
    }
}

extension Configuration {
    /// The configuration with `instance` (`--instance`) as this calwatch's name, in its PostgreSQL sinks too.
    public func named(_ instance: String?) -> Configuration {
        guard let instance else { return self }
        var named = self
        named.instance = instance
        for index in named.sinks.indices {
            if var postgres = named.sinks[index].kind as? PostgresSettings {
                postgres.watcher = instance
                named.sinks[index].kind = postgres
            }
        }
        return named
    }
}

extension FleetAccess {
    /// The key of `fleet: tokenKey:` as a watcher on this machine reads it: the credential resolved (a program of
    /// `fleet.credentials:`, else a systemd credential), its secret read and checked, never shown.
    public func sealingKey() async throws(AccountFailure) -> SealedTokens {
        switch FleetCalendar.tokenKey(
            access: self, credentialsDirectory: ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"])
        {
        case .success(let (command, file)): return try await SealedTokens.read(command: command, file: file)
        case .failure(let refusal): throw AccountFailure(reason: refusal.description)
        }
    }
}
