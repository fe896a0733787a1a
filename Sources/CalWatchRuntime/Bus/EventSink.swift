import CalWatchCore

/// A consumer of journaled events (JSON Lines, SQLite, hooks, …).
///
/// A sink receives events in sequence order, in batches, only after they are committed to the journal; when
/// `deliver` returns, the batch is done and the sink's cursor moves past it. A sink that throws gets the same
/// events again later from its cursor, so delivery is at least once per sink. Sinks are actors (or otherwise
/// `Sendable`): each one is driven by its own child task of the `EventBus`.
public protocol EventSink: Sendable {
    /// The sink's name in the journal's cursor table and in messages (`jsonl:-`, `sqlite:/path`, …).
    var name: String { get }
    /// Handles a batch of committed events. Throwing `DescriptorWriter.Closed` means the reader went away for
    /// good (`| head`): the sink is stopped, and that is not a failure.
    func deliver(_ batch: [JournalStore.Entry]) async throws
    /// Work the sink keeps going after `deliver` returned (a hook's retries), run by the bus as a child task beside
    /// the sink's consumer until `stop` is called. The default has none.
    func run(_ context: SinkContext) async
    /// Asks `run` to return once the work in hand is done; what waits for later stays in the journal.
    func stop() async
}

extension EventSink {
    public func run(_ context: SinkContext) async {}
    public func stop() async {}
}

/// What the bus lends a sink's `run`: the journal, and how to turn a journaled event into an entry again.
public struct SinkContext: Sendable {
    public var journal: JournalStore
    public var entry: @Sendable (JournalStore.Journaled) -> JournalStore.Entry

    public init(journal: JournalStore, entry: @escaping @Sendable (JournalStore.Journaled) -> JournalStore.Entry) {
        self.journal = journal
        self.entry = entry
    }
}

/// A sink could not deliver, worded for the user.
public struct SinkError: Error, CustomStringConvertible, Sendable {
    public var sink: String
    public var reason: String
    public var description: String { "\(sink): \(reason)" }

    public init(sink: String, reason: String) {
        self.sink = sink
        self.reason = reason
    }
}
