import Foundation
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Writes whole buffers to a file descriptor, the way a pipeline expects.
public struct DescriptorWriter: Sendable {
    /// The reader went away (`calwatch … | head`): nothing more can be written, and that is not a failure.
    public struct Closed: Error {}

    /// A write failed for another reason (disk full, I/O error).
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var code: Int32
        public var description: String { Errno(rawValue: code).description }
    }

    public let descriptor: Int32

    /// Standard output; a closed pipe becomes `Closed` instead of a SIGPIPE that kills the process.
    public static func standardOutput() -> DescriptorWriter {
        signal(SIGPIPE, SIG_IGN)
        return DescriptorWriter(descriptor: 1)
    }

    /// Writes every byte, retrying interrupted and partial writes.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Writes every byte in memory, retrying interrupted and partial writes.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { throw Closed() }
                throw Failure(code: errno)
            }
            offset += written
        }
    }
}
