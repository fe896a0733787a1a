import Foundation
import Synchronization
import SystemPackage

/// The one writer of a journal: `watch` and `replay` hold an exclusive `flock` on `<journal>.lock` for as long as
/// they run, with their process id in it. Two daemons on one journal would each plan and deliver every event, so
/// the second is refused and told who holds it. The kernel lets go when the process ends, however it ends, so a
/// crash leaves no stale lock.
public final class JournalLock: Sendable {
    public let path: String
    /// The locked file; -1 once released.
    private let descriptor: Mutex<Int32>

    /// Why the lock was not taken, worded for the user.
    public struct Held: Error, CustomStringConvertible {
        public var description: String
    }

    public init(journal: String) throws(Held) {
        path = journal + ".lock"
        let folder = (journal as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw Held(description: "cannot open \(path): \(Errno(rawValue: errno))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(descriptor, &buffer, buffer.count, 0)
            close(descriptor)
            let holder = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            throw Held(
                description:
                    "the journal \(journal) is in use by another calwatch (process \(holder.isEmpty ? "?" : holder)); "
                    + "stop it first, or give this one a journal of its own with --state")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.count, 0)
        self.descriptor = Mutex(descriptor)
    }

    /// Lets go at once, rather than whenever the last reference goes (which may be on another thread, after the
    /// caller has gone on to take the journal again).
    public func release() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    deinit {
        release()
    }
}
