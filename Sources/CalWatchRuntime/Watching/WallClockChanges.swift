import CLinux
import CalWatchCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Tells at once when the system's wall clock is set (by NTP stepping it, by hand, or on resume from a long
/// suspend): a `timerfd` armed on `CLOCK_REALTIME` with `TFD_TIMER_CANCEL_ON_SET`, which the kernel cancels on
/// every discontinuous change. Idle, it costs nothing.
public final class WallClockChanges: Sendable {
    private let thread: PollThread

    public init(handler: @escaping @Sendable () -> Void) throws {
        let descriptor = timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        guard descriptor >= 0 else { throw WatchError(operation: "timerfd_create", code: errno) }
        guard Self.arm(descriptor) else {
            let code = errno
            close(descriptor)
            throw WatchError(operation: "timerfd_settime", code: code)
        }
        thread = try PollThread(descriptor: descriptor, name: "calwatch-clock") {
            var expirations: UInt64 = 0
            if read(descriptor, &expirations, 8) < 0 && errno == ECANCELED {
                handler()
            }
            _ = Self.arm(descriptor)
        }
    }

    deinit {
        thread.stop()
    }

    /// Arms the timer at the far future, so it only ever wakes when cancelled by a clock change.
    private static func arm(_ descriptor: Int32) -> Bool {
        var value = itimerspec()
        value.it_value.tv_sec = Int(Int32.max)
        return timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET), &value, nil) == 0
    }
}
