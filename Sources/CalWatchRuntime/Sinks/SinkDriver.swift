public import CalWatchCore
public import Logging

/// A kind of sink as the runtime knows it: its settings (`SinkKind`: the `type:` name and the reading of its
/// entry), how it opens, what `calwatch check` finds out about it, and how `calwatch why` explains a delivery.
/// Each lives in its sink's folder; the program's list of them is handed to `ConfigurationLoader`, so adding a
/// sink is a folder and a line in that list (docs/development.md, "A sink in one folder").
public protocol SinkDriver: SinkKind {
    /// Opens the sink; what keeps it from opening throws, worded for the user.
    func open(named name: String, in environment: SinkEnvironment) throws -> any EventSink
    /// What `calwatch check` finds without sending anything: what it reached, and what is wrong.
    func check(named name: String, in environment: SinkEnvironment) async -> [SinkFinding]
    /// Which events it leaves out (`on:`, `kinds:`, `offsets:`, `calendars:`), for `why` to say which one did.
    var filters: (any EventFilters)? { get }
    /// How an event the sink has taken was delivered, for `calwatch why`.
    func delivery(of row: JournalStore.Journaled, sink name: String, in lookup: DeliveryLookup) async throws
        -> DecisionTrace.Delivery
}

extension SinkDriver {
    public func check(named name: String, in environment: SinkEnvironment) async -> [SinkFinding] { [] }
    public var filters: (any EventFilters)? { nil }
    public func delivery(of row: JournalStore.Journaled, sink name: String, in lookup: DeliveryLookup) async throws
        -> DecisionTrace.Delivery
    {
        .taken(by: name)
    }
}

/// What a sink is opened and checked with.
public struct SinkEnvironment: Sendable {
    /// Timeouts and retry delays (a manual clock in tests).
    public var clock: any Clock<Duration>
    /// The wall clock, for expiry.
    public var now: @Sendable () -> Instant
    public var logger: Logger
    /// The journal's path: a sink keeps files of its own beside it (`<journal>.notify-cards`).
    public var journal: String
    /// The release, for what a sink tells its receivers (MQTT discovery's `sw_version`).
    public var release: String

    public init(
        clock: any Clock<Duration> = ContinuousClock(), now: @escaping @Sendable () -> Instant, logger: Logger,
        journal: String, release: String = "0"
    ) {
        self.clock = clock
        self.now = now
        self.logger = logger
        self.journal = journal
        self.release = release
    }
}

/// One thing `calwatch check` says of a sink.
public enum SinkFinding: Sendable, Hashable {
    /// What it reached: "PostgreSQL 16.4, calwatch layout 7 (current…)", listed under the sink's name.
    case found(String)
    /// What does not stop it (a receiver down now: the journal keeps its events until it is back).
    case warning(String)
    /// What keeps it from working (a folder it cannot write, a program that is not there, a refused login).
    case error(String)
}

/// What `calwatch why` reads to say how a sink delivered an event: the journal (a hook's runs) and the sinks' own
/// files, each read once.
public struct DeliveryLookup: Sendable {
    public let journal: JournalStore
    public let records: SinkRecords
    public let zone: ZoneRules

    /// An instant as `why` shows it.
    public func shown(_ instant: Instant) -> String { DecisionTrace.shown(instant, in: zone) }
}

extension SinkSettings {
    /// The runtime's side of the sink's kind; `nil` for a kind the program reads but cannot run.
    public var driver: (any SinkDriver)? { kind as? any SinkDriver }

    /// Opens the sink; what keeps it from opening is a `SinkError` naming it.
    public func open(in environment: SinkEnvironment) throws(SinkError) -> any EventSink {
        guard let driver else { throw SinkError(sink: name, reason: "this program cannot deliver to this kind") }
        do {
            return try driver.open(named: name, in: environment)
        } catch let error as SinkError {
            throw error
        } catch {
            throw SinkError(sink: name, reason: "\(error)")
        }
    }
}
