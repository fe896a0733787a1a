import Foundation

/// A value behind a lock: `Synchronization.Mutex`'s interface on a pthread mutex (`NSLock`).
///
/// Mutex waits on a futex that ThreadSanitizer does not see, so `make test-tsan` reported every value it guards,
/// when touched from two threads, as a race, and a real race would have been lost among them. A pthread mutex is
/// what ThreadSanitizer understands; uncontended, both cost tens of nanoseconds.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var value: Value

    package init(_ value: consuming sending Value) {
        self.value = value
    }

    package func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
