import CalWatchCore

/// At most `limit` holders at once, waiting in turn without blocking a thread: a hook's `concurrency`, the calendars
/// on servers fetched at once.
package final class Permits: Sendable {
    private struct State {
        var available: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
        var first = 0
        /// Waiters served before every one of `waiting` (a reminder before a day's conflicts), in their order.
        var urgent: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Locked<State>

    package init(_ limit: Int) {
        state = Locked(State(available: max(1, limit)))
    }

    /// Waits until a permit is free and takes it; `release` gives it back. An `urgent` waiter goes before every
    /// waiter that is not.
    package func acquire(urgent: Bool = false) async {
        await withCheckedContinuation { continuation in
            let granted = state.withLock { state in
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                if urgent { state.urgent.append(continuation) } else { state.waiting.append(continuation) }
                return false
            }
            if granted { continuation.resume() }
        }
    }

    /// Gives a permit back: to the longest urgent waiter, else the longest waiter, if any.
    package func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if !state.urgent.isEmpty { return state.urgent.removeFirst() }
            guard state.first < state.waiting.count else {
                state.available += 1
                return nil
            }
            let next = state.waiting[state.first]
            state.first += 1
            if state.first == state.waiting.count {
                state.waiting.removeAll(keepingCapacity: true)
                state.first = 0
            }
            return next
        }
        next?.resume()
    }

    /// Runs `body` holding a permit, in the caller's isolation (an actor's method can run inside).
    package func withPermit<T: Sendable>(isolation: isolated (any Actor)? = #isolation, _ body: () async -> T) async
        -> T
    {
        await acquire()
        defer { release() }
        return await body()
    }
}
