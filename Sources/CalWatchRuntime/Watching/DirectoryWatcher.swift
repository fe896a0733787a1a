import CLinux
import CalWatchCore
import Foundation
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// inotify on the calendar folders (docs/design.md §9): tells which files changed, which folders came or went, and when
/// the kernel's queue overflowed and everything must be looked at again.
///
/// One thread blocks in `poll` and reads the events, so an idle watcher uses no CPU. Notices are gathered into a
/// set and the handler is called only when the set was empty, so a burst (a sync writing a thousand files) costs one
/// wake-up of the daemon and memory bounded by the number of distinct paths.
public final class DirectoryWatcher: Sendable {
    /// What the daemon must do about what happened.
    public struct Notices: Sendable, Equatable {
        /// Files written, created, renamed or deleted (not yet known to be calendar items).
        public var files: Set<String> = []
        /// Of those, the ones last written in place or created: perhaps still being written, so they are read once
        /// quiet.
        public var written: Set<String> = []
        /// Of those, the ones renamed into place or deleted, which is atomic: they are read at once, and once quiet
        /// as well when a write came after (a close that comes late, because a process forked while the file was
        /// open for writing held a copy of its descriptor until its exec).
        public var replaced: Set<String> = []
        /// A folder came, went or was renamed, a collection's metadata changed, or events were lost: look at
        /// everything again.
        public var rescan = false

        public var isEmpty: Bool { files.isEmpty && !rescan }

        public init(
            files: Set<String> = [], written: Set<String> = [], replaced: Set<String> = [], rescan: Bool = false
        ) {
            self.files = files
            self.written = written
            self.replaced = replaced
            self.rescan = rescan
        }

        /// Adds later notices: a file's last event decides whether it waits for quiet.
        public mutating func merge(_ later: Notices) {
            files.formUnion(later.files)
            written.subtract(later.files.subtracting(later.written))
            written.formUnion(later.written)
            replaced.formUnion(later.replaced)
            rescan = rescan || later.rescan
        }
    }

    private static let fileEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE)
    private static let mask =
        fileEvents | UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)

    private let descriptor: Int32
    private let thread: PollThread
    private struct Watches {
        var pathOf: [Int32: String] = [:]
        var watchOf: [String: Int32] = [:]
    }
    /// What the watcher's thread and its users share.
    private final class Shared: Sendable {
        let watches = Locked(Watches())
        let pending = Locked(Notices())
    }
    private let shared = Shared()

    /// Starts watching nothing yet; `handler` is called (on the watcher's thread) when notices are waiting.
    public init(handler: @escaping @Sendable () -> Void) throws {
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { throw WatchError(operation: "inotify_init1", code: errno) }
        self.descriptor = descriptor
        let shared = self.shared
        thread = try PollThread(descriptor: descriptor, name: "calwatch-inotify") {
            Self.drain(descriptor, shared: shared, handler: handler)
        }
    }

    deinit {
        thread.stop()
    }

    /// What `follow` did.
    public struct Followed {
        /// Folders watched from now on that were not before: what was written into them before the watch began
        /// is only seen by listing them again.
        public var added: [String] = []
        /// Folders that could not be watched, with why (the inotify watch limit, a folder gone).
        public var failures: [(path: String, reason: String)] = []
    }

    /// Follows exactly these folders: watches are added for new ones and dropped for those no longer listed.
    @discardableResult
    public func follow(_ directories: [String]) -> Followed {
        var followed = Followed()
        shared.watches.withLock { watches in
            let wanted = Set(directories)
            for (path, watch) in watches.watchOf where !wanted.contains(path) {
                inotify_rm_watch(descriptor, watch)
                watches.watchOf[path] = nil
                watches.pathOf[watch] = nil
            }
            for path in directories where watches.watchOf[path] == nil {
                let watch = inotify_add_watch(descriptor, path, Self.mask)
                if watch < 0 {
                    let reason =
                        errno == ENOSPC
                        ? "the inotify watch limit is reached; raise fs.inotify.max_user_watches"
                        : Errno(rawValue: errno).description
                    followed.failures.append((path, reason))
                    continue
                }
                watches.watchOf[path] = watch
                watches.pathOf[watch] = path
                followed.added.append(path)
            }
        }
        return followed
    }

    /// Folders being watched.
    public var watchedCount: Int { shared.watches.withLock { $0.watchOf.count } }

    /// Takes the notices gathered since the last call.
    public func take() -> Notices {
        shared.pending.withLock { notices in
            defer { notices = Notices() }
            return notices
        }
    }

    /// Reads every waiting event and files it as a notice.
    private static func drain(_ descriptor: Int32, shared: Shared, handler: @Sendable () -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var notices = Notices()
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                while offset + 16 <= count {
                    let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = bytes[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                    let name = String(decoding: nameBytes, as: UTF8.self)
                    offset += 16 + length
                    classify(watch: watch, mask: mask, name: name, shared: shared, into: &notices)
                }
            }
        }
        guard !notices.isEmpty else { return }
        let wasEmpty = shared.pending.withLock { waiting in
            let wasEmpty = waiting.isEmpty
            waiting.merge(notices)
            return wasEmpty
        }
        if wasEmpty { handler() }
    }

    private static func classify(
        watch: Int32, mask: UInt32, name: String, shared: Shared, into notices: inout Notices
    ) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            notices.rescan = true
            return
        }
        if mask & UInt32(IN_IGNORED) != 0 {
            shared.watches.withLock { watches in
                if let path = watches.pathOf.removeValue(forKey: watch) { watches.watchOf[path] = nil }
            }
            return
        }
        if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
            notices.rescan = true
            return
        }
        guard mask & fileEvents != 0, let directory = shared.watches.withLock({ $0.pathOf[watch] }) else { return }
        if SourceDiscovery.isCollectionMetadata(name) {
            notices.rescan = true
        } else if name.hasPrefix(".") {
            return  // hidden: Radicale's temporary folders and caches, editors' swap files
        } else if mask & UInt32(IN_ISDIR) != 0 {
            notices.rescan = true
        } else {
            let path = String(path: directory, name)
            notices.files.insert(path)
            if mask & UInt32(IN_CLOSE_WRITE | IN_CREATE) != 0 {
                notices.written.insert(path)
            } else {
                notices.written.remove(path)
                notices.replaced.insert(path)
            }
        }
    }
}
