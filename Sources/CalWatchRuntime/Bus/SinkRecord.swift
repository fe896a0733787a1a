import CalWatchCore

/// An event as a sink recorded it: its journal sequence number and its id.
public struct SinkRecord: Sendable, Hashable {
    public var sequence: Int64
    public var id: String

    public init(sequence: Int64, id: String) {
        self.sequence = sequence
        self.id = id
    }
}
