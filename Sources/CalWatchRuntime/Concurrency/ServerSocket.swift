import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What calwatch's small servers (the daemon's answer to `next`, a phone's answers) share: one connection at a time,
/// each bounded in time.
package enum ServerSocket {
    /// The next connection on `listener`, waiting up to half a second for one (so the server sees a shutdown), with
    /// each of its reads and writes bounded by `seconds`; `nil` when none came.
    package static func accept(_ listener: Int32, timeout seconds: Int) -> Int32? {
        var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, 500) == 1 else { return nil }
        let connection = Glibc.accept(listener, nil, nil)
        guard connection >= 0 else { return nil }
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        return connection
    }
}
