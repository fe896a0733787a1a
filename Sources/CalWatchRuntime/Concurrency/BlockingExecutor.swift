import CLinux
import Dispatch
import Foundation
import Synchronization

/// A serial executor with a thread of its own, for actors whose work blocks: SQLite calls, writes to a file or a
/// pipe. Their jobs never park a thread of Swift's cooperative pool (one per core), so a slow disk, a busy database
/// or a reader that stopped reading stalls that actor alone, the way GRDB gives each connection its own queue.
///
/// The actor that owns it returns it as its `unownedExecutor`; the thread ends when the executor is released,
/// which happens only after the actor is gone (a queued job keeps its actor alive).
public final class BlockingExecutor: SerialExecutor {
    /// The jobs waiting, shared with the thread (which must not keep the executor alive).
    private final class Queue: Sendable {
        private struct State {
            var jobs: [UnownedJob] = []
            var next = 0
            var stopped = false
        }
        private let state = Mutex(State())
        private let ready = DispatchSemaphore(value: 0)

        func push(_ job: UnownedJob) {
            state.withLock { $0.jobs.append(job) }
            ready.signal()
        }

        func stop() {
            state.withLock { $0.stopped = true }
            ready.signal()
        }

        /// The next job, waiting for one; `nil` once stopped and empty.
        func pop() -> UnownedJob? {
            while true {
                ready.wait()
                let job: UnownedJob?? = state.withLock { state in
                    if state.next < state.jobs.count {
                        let job = state.jobs[state.next]
                        state.next += 1
                        if state.next == state.jobs.count {
                            state.jobs.removeAll(keepingCapacity: true)
                            state.next = 0
                        }
                        return .some(job)
                    }
                    return state.stopped ? .some(nil) : nil
                }
                if let job { return job }
            }
        }
    }

    private let queue = Queue()

    /// Starts the thread; `name` shows in debuggers and `top -H`.
    public init(name: String) {
        let queue = queue
        // Unowned: the executor outlives every job it runs (each job keeps its actor, which keeps the executor).
        let executor = UnownedSerialExecutor(ordinary: self)
        let name = String(name.prefix(15))  // the kernel keeps 15 bytes
        let thread = Thread {
            _ = CLinux_set_thread_name(name)
            while let job = queue.pop() { job.runSynchronously(on: executor) }
        }
        thread.start()
    }

    deinit {
        queue.stop()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        queue.push(UnownedJob(job))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
