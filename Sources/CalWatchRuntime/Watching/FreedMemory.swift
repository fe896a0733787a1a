import CLinux
import Foundation
public import Logging

/// Keeps the daemon's memory to what it holds: large blocks in pages of their own, and the pages freed by a large
/// change given back to the system.
///
/// glibc's allocator keeps what is freed for the process's next allocations: after a first sync of 100,000 items,
/// 25-35 MB that held the sync's listing, the watcher's notices and the parsed batches stayed resident although
/// nothing used them. A daemon that then runs for weeks need not hold its busiest minute's memory.
public enum FreedMemory {
    /// Changed or removed files after which freed memory is given back (a sync writes its items a few dozen at a
    /// time, so they are counted over many changes).
    static let largeChange = 256

    /// The size from which a block gets pages of its own rather than a place among the small ones.
    static let largeBlock: Int32 = 128 * 1024

    /// Keeps large blocks (a sync's listing and answers, a batch of parsed files) out of the heap for good; the
    /// daemon calls it once, at start.
    ///
    /// glibc starts with this threshold but raises it to the size of each large block freed, up to 32 MB, so
    /// that after a sync's multi-megabyte listing the answers and batches that follow were placed among the
    /// items held; once freed, they left holes in the threads' heaps that could not be given back. A first
    /// sync of 100,000 items settled at 161-178 MB; with the threshold fixed, at 145-146 in nearly every run
    /// (BENCHMARKS.md). It costs a mapping per large block, a few hundred per sync: no slower, measured.
    public static func keepLargeBlocksApart() {
        _ = CLinux_set_mmap_threshold(largeBlock)
    }

    /// Bytes fetched from a server after which what the fetch freed is given back: a CalDAV sync holds its
    /// listing (every item's address and tag) until it ends, which may come after the daemon has read the items
    /// and given back what reading them freed.
    public static let largeFetch = 1 << 20

    /// Gives freed memory back, and logs at debug level how much the process held either side and how long it took.
    public static func giveBack(logger: Logger) {
        let started = ContinuousClock.now
        let before = resident()
        _ = CLinux_malloc_trim(0)
        let after = resident()
        let megabytes = { (bytes: Int?) in bytes.map { "\($0 >> 20) MB" } ?? "unknown" }
        logger.debug(
            "freed memory given back",
            metadata: [
                "memory.resident_before": "\(megabytes(before))", "memory.resident_after": "\(megabytes(after))",
                "memory.took": "\(started.duration(to: .now))",
            ])
    }

    /// The process's resident memory in bytes (`/proc/self/statm`), for the log; `nil` where it cannot be read.
    static func resident() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return pages * sysconf(Int32(_SC_PAGESIZE))
    }
}
