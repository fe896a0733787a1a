import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writes each event as one JSON line to a file descriptor (standard output for `path: "-"`).
public final class JSONLinesSink: EventSink {
    public let name: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []

    /// A sink writing to standard output.
    public static func standardOutput() -> JSONLinesSink {
        // A reader that goes away (`| head`) is an EPIPE error, not a signal that kills the process.
        signal(SIGPIPE, SIG_IGN)
        return JSONLinesSink(name: "jsonl:-", descriptor: 1, owns: false)
    }

    private init(name: String, descriptor: Int32, owns: Bool) {
        self.name = name
        self.descriptor = descriptor
        self.ownsDescriptor = owns
        buffer.reserveCapacity(1 << 16)
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// The reader of the stream has gone away; nothing more can be delivered.
    public struct Closed: Error {}

    public func deliver(_ batch: [JournalStore.Entry]) throws {
        buffer.removeAll(keepingCapacity: true)
        for entry in batch {
            buffer.append(contentsOf: entry.json.utf8)
            buffer.append(10)
        }
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { throw Closed() }
                throw SinkError(sink: name, reason: String(cString: strerror(errno)))
            }
            offset += written
        }
    }
}
