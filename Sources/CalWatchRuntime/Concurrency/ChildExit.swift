import CalWatchCore
import Foundation
import Subprocess

#if canImport(Glibc)
    import Glibc
#endif

/// Whether a child process started through swift-subprocess has exited, asked of the kernel through a pidfd of its
/// own (a duplicate of the library's, valid however long the run takes to be heard of).
///
/// A timeout races a sleep against the run, and both are resumed on the cooperative pool. On a pool kept busy (a
/// burst of work in the daemon, a whole test run on two cores) the sleep can be resumed before the news of an exit
/// that came in time, and a program that took a millisecond would count as one that hung. A timeout asks this first:
/// it is the program's running time that is limited, not how soon calwatch heard of its end.
final class ChildExit: Sendable {
    private let descriptor = Locked<Int32>(-1)

    init() {}

    /// Called from the run's body, while the library's pidfd is open.
    func watch(_ identifier: ProcessIdentifier) {
        guard identifier.processDescriptor >= 0 else { return }
        let copy = fcntl(identifier.processDescriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return }
        descriptor.withLock { $0 = copy }
    }

    /// Whether the child is known to be running: watched, and its pidfd not readable (it is from its exit on).
    var isRunning: Bool {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return false }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            return !(poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLIN) != 0)
        }
    }

    /// Called once the timeout's sleep has ended: whether the program really overran. While it has exited (or is not
    /// watched yet: the run has not got as far as its body) and its run is not back, looks again every 50 ms for
    /// `grace`, then says it overran (a spawn that never came back, an exited program whose pipe a process it left
    /// behind keeps open); false when cancelled meanwhile, which is the run coming back. Counted in looks rather
    /// than by a deadline, each taking its turn on the global pool where swift-subprocess resumes the run's steps,
    /// so that a pool that holds every task for longer than `grace` also gives the run as many turns to come back
    /// (even to a caller on an executor of its own).
    func overran(grace: Duration = .seconds(10)) async -> Bool {
        var looks = Int(grace / .milliseconds(50))
        while !isRunning, looks > 0 {
            do {
                try await withTaskExecutorPreference(globalConcurrentExecutor) {
                    try await Task.sleep(for: .milliseconds(50))
                }
            } catch {
                return false
            }
            looks -= 1
        }
        return !Task.isCancelled
    }

    deinit {
        let descriptor = descriptor.withLock { $0 }
        if descriptor >= 0 { close(descriptor) }
    }
}
