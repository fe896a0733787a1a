import CalWatchCore

/// A sink could not deliver, worded for the user.
public struct SinkError: Error, CustomStringConvertible, Sendable {
    public var sink: String
    public var reason: String
    /// A failure that waiting does not mend (credentials refused, a layout from a newer calwatch): a finishing
    /// replay does not wait for it (`EventBus.Policy.finalWait`).
    public var lasting: Bool
    /// How long the receiver asked to be left alone (a `Retry-After`): the next try waits at least this long.
    public var retryAfter: Duration?
    public var description: String { "\(sink): \(reason)" }

    public init(sink: String, reason: String, lasting: Bool = false, retryAfter: Duration? = nil) {
        self.sink = sink
        self.reason = reason
        self.lasting = lasting
        self.retryAfter = retryAfter
    }
}
