/// Writes each event as one JSON line to a file descriptor (standard output for `path: "-"`).
public actor JSONLinesSink: EventSink {
    public nonisolated let name: String
    private let output: DescriptorWriter
    private var buffer: [UInt8] = []

    /// A sink writing to standard output.
    public static func standardOutput() -> JSONLinesSink {
        JSONLinesSink(name: "jsonl:-", output: .standardOutput())
    }

    private init(name: String, output: DescriptorWriter) {
        self.name = name
        self.output = output
        buffer.reserveCapacity(1 << 16)
    }

    /// Writes the batch with one write; a reader that went away is `DescriptorWriter.Closed`, other failures a
    /// `SinkError`.
    public func deliver(_ batch: [JournalStore.Entry]) throws {
        buffer.removeAll(keepingCapacity: true)
        for entry in batch {
            buffer.append(contentsOf: entry.json.utf8)
            buffer.append(10)
        }
        do {
            try output.write(buffer)
        } catch let failure as DescriptorWriter.Failure {
            throw SinkError(sink: name, reason: failure.description)
        }
    }
}
