import Foundation

/// One configured sink.
public struct SinkSettings: Sendable, Hashable {
    /// What the sink writes.
    public enum Output: Sendable, Hashable {
        /// JSON Lines to a file, or to standard output when `path` is `nil` (`path: "-"`).
        case jsonLines(path: String?)
        /// The user-facing SQLite database; events older than `keep` seconds (before the newest one) are
        /// deleted, `nil`: kept for ever.
        case sqlite(path: String, keep: Int64? = nil)
        /// A program run for each event.
        case hook(HookSettings)
        /// A PostgreSQL database shared by many watchers.
        case postgres(PostgresSettings)
        /// Desktop notifications on the session bus.
        case notify(NotifySettings)
        /// An HTTP POST per event, signed.
        case webhook(WebhookSettings)
        /// An MQTT publish per event, with retained state and Home Assistant discovery.
        case mqtt(MQTTSettings)
    }

    /// The sink's cursor name in the journal and its name in messages. Renaming a sink starts it from the
    /// beginning of what the journal holds.
    public var name: String
    public var output: Output

    public init(name: String, output: Output) {
        self.name = name
        self.output = output
    }
}
