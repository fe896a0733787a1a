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
    /// the sink's consumer; it returns once `context.stopped` has come and the work in hand is done. The default has
    /// none.
    func run(_ context: SinkContext) async
    /// The newest event the sink's own records hold (the last line of a JSON Lines file, the newest row of a
    /// database), checked against the journal before anything is delivered; `nil` for a sink that keeps none.
    func newestRecord() async throws -> SinkRecord?
    /// Whether the sink stores an event once by its id however often it is delivered (PostgreSQL's key is the
    /// watcher, the time and the id): a journal made anew then costs nothing twice, so it is not refused.
    var storesEachEventOnce: Bool { get }
}

extension EventSink {
    public func run(_ context: SinkContext) async {}
    public func newestRecord() async throws -> SinkRecord? { nil }
    public var storesEachEventOnce: Bool { false }
}
