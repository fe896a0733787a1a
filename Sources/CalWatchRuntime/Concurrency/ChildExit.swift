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

    /// Whether the child has exited: its pidfd is readable from then on. False when it was never watched.
    var hasExited: Bool {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return false }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLIN) != 0
        }
    }

    /// Called once the timeout's sleep has ended: whether the program really overran. While it has exited but its
    /// run is not yet back, waits up to `grace` of real time (an exited program whose pipe a process it left
    /// behind keeps open never comes back); false when cancelled meanwhile, which is the run coming back.
    func overran(grace: Duration = .seconds(10)) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        while hasExited, clock.now < deadline {
            do { try await clock.sleep(for: .milliseconds(50)) } catch { return false }
        }
        return !Task.isCancelled
    }

    deinit {
        let descriptor = descriptor.withLock { $0 }
        if descriptor >= 0 { close(descriptor) }
    }
}
