import CLinux
import Foundation

/// Gives the pages of memory freed by a large change back to the system.
///
/// glibc's allocator keeps what is freed for the process's next allocations: after a first sync of 100,000 items,
/// 25-35 MB that held the sync's listing, the watcher's notices and the parsed batches stayed resident although
/// nothing used them. A daemon that then runs for weeks need not hold its busiest minute's memory.
enum FreedMemory {
    /// Changed or removed files after which freed memory is given back (a sync writes its items a few dozen at a
    /// time, so they are counted over many changes).
    static let largeChange = 256

    static func returnToSystem() {
        _ = CLinux_malloc_trim(0)
    }

    /// The process's resident memory in bytes (`/proc/self/statm`), for the log; `nil` where it cannot be read.
    static func resident() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return pages * sysconf(Int32(_SC_PAGESIZE))
    }
}
