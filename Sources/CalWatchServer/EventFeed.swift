import CalWatchRuntime
import ServiceLifecycle
import Synchronization

/// Wakes the event stream's clients when the journal grows, and ends their streams when the daemon stops (a
/// stream never ends by itself, and the server waits for every response before it stops).
final class EventFeed: Sendable {
    private struct State {
        var last: Int64 = 0
        var closed = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
        var clients = 0
    }

    private let state = Mutex(State())

    /// The journal grew to `last`: every client waiting for less wakes.
    func published(_ last: Int64) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard last > state.last else { return [] }
            state.last = last
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// The daemon stops: every stream ends after what it has sent.
    func close() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closed = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    /// The journal's last sequence as last seen.
    var last: Int64 { state.withLock { $0.last } }

    /// A client connected (`+1`) or went (`-1`).
    func clients(_ change: Int) {
        CalwatchMetrics.serverStreams(
            state.withLock {
                $0.clients += change
                return $0.clients
            })
    }

    /// Waits until the journal holds more than `cursor`, the feed closes, or `timeout` passes.
    func wait(after cursor: Int64, timeout: Duration) async {
        if state.withLock({ $0.closed || $0.last > cursor }) { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.suspend(after: cursor) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func suspend(after cursor: Int64) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.closed || state.last > cursor || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Asks the journal for its last sequence every `every` until the daemon stops, then closes the feed; first in
    /// the server's services to stop.
    struct Poller: Service {
        let feed: EventFeed
        let every: Duration
        let last: @Sendable () async -> Int64?

        func run() async throws {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                if let last = await last() { feed.published(last) }
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: every) }
            }
            feed.close()
        }
    }
}
