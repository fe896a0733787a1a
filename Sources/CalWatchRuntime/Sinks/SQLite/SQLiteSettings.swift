public import CalWatchCore

/// `type: sqlite`: the user-facing database of events (docs/sinks/sqlite.md).
public struct SQLiteSettings: SinkDriver {
    public static let type = "sqlite"
    public static let keys = ["path", "keep"]
    public var path: String
    /// Events older than this many seconds (before the newest one) are deleted; `nil`: kept for ever.
    public var keep: Int64?

    public init(path: String, keep: Int64? = nil) {
        self.path = path
        self.keep = keep
    }

    public init?(_ entry: ConfigurationSection) {
        guard let value = entry["path"] else {
            entry.note("has no `path:` for the database (for example ~/.local/share/calwatch/events.db)")
            return nil
        }
        guard let path = value.filePath() else { return nil }
        self.path = path
        keep = entry["keep"]?.duration(positive: true, atMost: ConfigurationLimits.keep)
    }

    public var defaultName: String { "sqlite:" + path }

    public func open(named name: String, in environment: SinkEnvironment) throws -> any EventSink {
        try SQLiteSink(path: path, name: name, keep: keep)
    }

    public func check(named name: String, in environment: SinkEnvironment) async -> [SinkFinding] {
        FileAccess.writeProblem(path).map { [.error($0)] } ?? []
    }

    public func delivery(of row: JournalStore.Journaled, sink name: String, in lookup: DeliveryLookup) async throws
        -> DecisionTrace.Delivery
    {
        lookup.records.sqlite(path, has: row.event)
            ? DecisionTrace.Delivery(state: "delivered", sink: name, detail: "stored in \(path)")
            : DecisionTrace.Delivery(
                state: "missing", sink: name,
                detail: "the sink took it, but \(path) has no row with its id (replaced or edited since)")
    }
}
