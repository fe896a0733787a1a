import CalWatchCore

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
