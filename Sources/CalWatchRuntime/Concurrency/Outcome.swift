import CalWatchCore

/// A value set once by one task and awaited by others: how an owner learns what a child task produced (a bus's
/// reports), or how a stop is announced to every task that waits for it. A wait ends early, with `nil`, when its
/// task is cancelled, so a wait can be raced against a sleep in a task group.
package final class Outcome<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [Int: CheckedContinuation<Value?, Never>] = [:]
        var nextWaiter = 0
    }
    private let state = Locked(State())

    package init() {}

    /// Sets the value (the first one set stays) and wakes every waiter.
    package func set(_ value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value?, Never>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// Whether the value is set.
    package var isSet: Bool { state.withLock { $0.value != nil } }

    /// The value if it is set, without waiting.
    package var value: Value? { state.withLock { $0.value } }

    /// The value once set; `nil` if the waiting task is cancelled first.
    package func wait() async -> Value? {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Value?? in
                    if let value = state.value { return .some(value) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }
}

extension Outcome where Value == Void {
    /// Announces it (a stop).
    package func set() { set(()) }
}
