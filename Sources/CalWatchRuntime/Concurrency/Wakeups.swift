import CalWatchCore

/// Reasons to wake a loop, gathered until it asks: signalled from any thread (inotify's, a signal handler's task),
/// taken all at once, so a burst is one wake and none is lost between two waits.
final class Wakeups<Reason: Hashable & Sendable>: Sendable {
    private struct State {
        var pending: Set<Reason> = []
        var waiter: CheckedContinuation<Set<Reason>?, Never>?
    }
    private let state = Locked(State())

    init() {}

    /// Adds a reason, waking the loop if it waits.
    func signal(_ reason: Reason) {
        let woken = state.withLock { state -> (CheckedContinuation<Set<Reason>?, Never>, Set<Reason>)? in
            state.pending.insert(reason)
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            defer { state.pending = [] }
            return (waiter, state.pending)
        }
        if let (waiter, reasons) = woken { waiter.resume(returning: reasons) }
    }

    /// Every reason signalled since the last call, waiting for one if there is none; `nil` when the waiting task
    /// is cancelled first (the reasons then wait for the next call). One loop waits at a time.
    func next() async -> Set<Reason>? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Set<Reason>?? in
                    if !state.pending.isEmpty {
                        defer { state.pending = [] }
                        return .some(state.pending)
                    }
                    if Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}

extension Wakeups {
    /// The reasons signalled by `deadline` on `clock`, or none when the deadline came first.
    func next<C: Clock>(orUntil deadline: C.Instant, on clock: C) async -> Set<Reason> {
        await withTaskGroup(of: Set<Reason>?.self) { race in
            race.addTask { await self.next() }
            race.addTask {
                try? await clock.sleep(until: deadline, tolerance: nil)
                return []
            }
            var reasons: Set<Reason> = (await race.next() ?? nil) ?? []
            race.cancelAll()
            // Reasons taken by the losing side at the same moment are kept too.
            for await case let more? in race { reasons.formUnion(more) }
            return reasons
        }
    }
}
