import CLinux
import Foundation

/// A serial executor with a thread of its own, for actors whose work blocks: SQLite calls, writes to a file or a
/// pipe. Their jobs never park a thread of Swift's cooperative pool (one per core), so a slow disk, a busy database
/// or a reader that stopped reading stalls that actor alone, the way GRDB gives each connection its own queue.
///
/// The actor that owns it returns it as its `unownedExecutor`; the thread ends when the executor is released,
/// which happens only after the actor is gone (a queued job keeps its actor alive).
public final class BlockingExecutor: SerialExecutor {
    private let queue = JobQueue()

    /// Starts the thread; `name` shows in debuggers and `top -H`.
    public init(name: String) {
        // Unowned: the executor outlives every job it runs (each job keeps its actor, which keeps the executor).
        let executor = UnownedSerialExecutor(ordinary: self)
        queue.serve(name: name) { $0.runSynchronously(on: executor) }
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

/// The jobs waiting, shared with the thread (which must not keep the executor alive).
///
/// A pthread mutex and condition variable (`NSCondition`): ThreadSanitizer sees the order they give, which it
/// cannot see through Synchronization's `Mutex` and a `DispatchSemaphore` (neither library is instrumented), and
/// so it reported every job handed to the thread as a race.
private final class JobQueue: @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var next = 0
    private var stopped = false

    func push(_ job: UnownedJob) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    /// Starts the thread that runs the jobs, one after another, until stopped.
    func serve(name: String, _ run: @escaping @Sendable (UnownedJob) -> Void) {
        let name = String(name.prefix(15))  // the kernel keeps 15 bytes
        Thread { [self] in
            _ = CLinux_set_thread_name(name)
            while let job = pop() { run(job) }
        }.start()
    }

    /// The next job, waiting for one; `nil` once stopped and empty.
    private func pop() -> UnownedJob? {
        condition.lock()
        defer { condition.unlock() }
        while next == jobs.count && !stopped { condition.wait() }
        guard next < jobs.count else { return nil }
        let job = jobs[next]
        next += 1
        if next == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            next = 0
        }
        return job
    }
}

/// A task executor with a thread of its own, for tasks whose steps block now and then (a calendar's copy written and
/// synced, a token saved, a page of events parsed): handed as a task group's executor preference, their steps and
/// those of their children run there, never on Swift's cooperative pool, where a reminder's wake waits for a thread.
public final class BlockingTaskExecutor: TaskExecutor {
    private let queue = JobQueue()

    /// Starts the thread; `name` shows in debuggers and `top -H`.
    public init(name: String) {
        // Unowned: each job holds its task, and the executor is kept by whoever prefers it while tasks run.
        let executor = UnownedTaskExecutor(ordinary: self)
        queue.serve(name: name) { $0.runSynchronously(on: executor) }
    }

    deinit {
        queue.stop()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        queue.push(UnownedJob(job))
    }
}
