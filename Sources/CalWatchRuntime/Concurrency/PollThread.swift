import CLinux
import CalWatchCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A thread blocked in `poll` on one descriptor and a stop pipe: calls `readable` each time the descriptor has data.
///
/// The thread owns the descriptor and closes it when it stops: closed by another thread while still being read,
/// its number could be reused by a new watcher whose events this thread would then take.
final class PollThread: Sendable {
    private let stopWrite: Int32
    private let stopRead: Int32

    init(descriptor: Int32, name: String, readable: @escaping @Sendable () -> Void) throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            let code = errno
            close(descriptor)
            throw WatchError(operation: "pipe", code: code)
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        stopRead = ends[0]
        stopWrite = ends[1]
        let stop = ends[0]
        let thread = Thread {
            var descriptors = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stop, events: Int16(POLLIN), revents: 0),
            ]
            while true {
                let ready = poll(&descriptors, 2, -1)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0, descriptors[1].revents == 0 else { break }
                if descriptors[0].revents != 0 { readable() }
            }
            close(stop)
            close(descriptor)
        }
        thread.name = name
        thread.start()
    }

    /// Ends the thread (it closes its end of the pipe).
    func stop() {
        var byte: UInt8 = 1
        _ = write(stopWrite, &byte, 1)
        close(stopWrite)
    }
}
