public import CalWatchCore
/// A consumer of journaled events (JSON Lines, SQLite, hooks, …).
///
/// A sink receives events in sequence order, in batches, only after they are committed to the journal; when
/// `deliver` returns, the batch is done and the sink's cursor moves past it. A sink that throws gets the same
/// events again later from its cursor, so delivery is at least once per sink. Sinks are actors (or otherwise
/// `Sendable`): each one is driven by its own task on the `EventBus`.
public protocol EventSink: Sendable {
    /// The sink's name in the journal's cursor table and in messages (`jsonl:-`, `sqlite:/path`, …).
    var name: String { get }
    /// Handles a batch of committed events. Throwing `DescriptorWriter.Closed` means the reader went away for
    /// good (`| head`): the sink is stopped, and that is not a failure.
    func deliver(_ batch: [JournalStore.Entry]) async throws
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
