import CalWatchCore

/// What the bus lends a sink's `run`: the journal, how to turn a journaled event into an entry again, and the stop
/// (the sink's consumer has handled everything; what waits for later stays in the journal).
public struct SinkContext: Sendable {
    public var journal: JournalStore
    public var entry: @Sendable (JournalStore.Journaled) -> JournalStore.Entry
    private let stop = Outcome<Void>()

    public init(journal: JournalStore, entry: @escaping @Sendable (JournalStore.Journaled) -> JournalStore.Entry) {
        self.journal = journal
        self.entry = entry
    }

    /// Returns once `stopRun` was called (or at once, if the waiting task is cancelled).
    public func stopped() async { _ = await stop.wait() }

    /// Whether `stopRun` was called.
    public var isStopped: Bool { stop.isSet }

    /// Tells `run` to finish.
    public func stopRun() { stop.set() }
}
