import Foundation
import Logging
import Synchronization
import Testing

/// A logger whose messages a test can read: what a user would see in the daemon's log.
final class LogRecorder: Sendable {
    private let recorded = Mutex<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])

    var messages: [String] { recorded.withLock { $0.map(\.message) } }

    /// The metadata of the messages logged, in order.
    var metadata: [Logger.Metadata] { recorded.withLock { $0.map(\.metadata) } }

    var logger: Logger {
        Logger(label: "calwatch.test") { _ in Handler(recorder: self) }
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            recorder.recorded.withLock { $0.append((event.level, "\(event.message)", merged)) }
        }
    }
}

/// A clock that moves only when the test says: timeouts, retry delays, debounces and rescans happen at the instant
/// the test advances to, never by waiting.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Int: Sleeper] = [:]
        var nextID = 0
    }
    private let state = Mutex(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// Sleepers waiting now: a test waits for the code under test to reach its sleep before advancing.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// How long from now each sleeper sleeps, shortest first: what a test that waits for a particular sleep saw.
    var sleeps: [Duration] {
        state.withLock { state in state.sleepers.values.map { state.now.duration(to: $0.deadline) } }.sorted()
    }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on, waking every sleeper whose deadline has come.
    func advance(by duration: Duration) {
        let woken = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            return Array(due.values)
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    /// Waits (in real time, generously: the machine may be busy) until a task sleeps on this clock for exactly
    /// `duration` from now: a retry's delay, a timeout, a debounce.
    func waitForSleeper(_ duration: Duration) async throws {
        try await eventually("a sleep of \(duration)") { hasSleeper(duration) }
    }

    /// Whether a task sleeps on this clock for exactly `duration` from now.
    func hasSleeper(_ duration: Duration) -> Bool { sleeps.contains(duration) }
}

/// Something a test waited for did not come.
struct Timeout: Error, CustomStringConvertible {
    var what: String
    var seconds: Double
    var description: String { "waited \(seconds.formatted()) s for \(what)" }
}

/// Waits (in real time, generously) until `condition` holds: for what the kernel or a child process does.
///
/// Two minutes, and a last look a second after them: when the whole suite starts, hundreds of tests share the
/// cooperative pool's two threads, and a test whose steps each wait behind CPU-bound parsing tests was seen to
/// take 80 s for what takes 50 ms alone. What the condition waits for (a service's loop, a sink's actor) needs the
/// same threads, and may get its turn only after the waiter's last one.
func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
    let start = ContinuousClock.now
    while try await !condition() {
        guard ContinuousClock.now - start < .seconds(120) else {
            try await Task.sleep(for: .seconds(1))
            if try await condition() { return }
            throw Timeout(what: what, seconds: Double((ContinuousClock.now - start).components.seconds))
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Runs blocking work (a child process waited for) on a thread of its own and awaits it, so that it never holds one
/// of the cooperative pool's threads (one per core) that every other test's async work needs.
func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

/// A task executor on a thread of its own, which a test can hold: what its tasks are woken for meanwhile runs in
/// order once it is let go, as on a cooperative pool busy with other tests' work, without holding that pool. Its
/// thread ends when it has nothing to do after `finish()`, and a job that comes later starts another.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var held = false
    private var finished = false
    private var running = false

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let start = condition.withLock {
            jobs.append(job)
            condition.signal()
            defer { running = true }
            return !running
        }
        if start { Thread { [self] in drain() }.start() }
    }

    private func drain() {
        while true {
            condition.lock()
            while (jobs.isEmpty && !finished) || held { condition.wait() }
            guard !jobs.isEmpty else {
                running = false
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    func hold() { condition.withLock { held = true } }

    func release() {
        condition.withLock {
            held = false
            condition.signal()
        }
    }

    func finish() {
        condition.withLock {
            finished = true
            condition.signal()
        }
    }
}

/// Runs each test of a suite on a thread of its own rather than on the cooperative pool's two threads: for tests
/// whose work is long and synchronous (rules expanded over decades, the classifier fuzzed, schemas parsed), which
/// would otherwise hold a pool thread for seconds while hundreds of other tests' steps, and their timeouts, wait.
struct OwnThread: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        let executor = ThreadExecutor()
        defer { executor.finish() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OwnThread {
    static var ownThread: Self { OwnThread() }
}

/// The process id a child wrote to `path` (`echo $$ > …`), once it is there.
func writtenPID(at path: String) async throws -> Int32 {
    var pid: Int32?
    try await eventually("a process id in \(path)") {
        pid = (try? String(contentsOfFile: path, encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return pid != nil
    }
    return pid!
}

/// Whether process `pid` has exited: gone, or a zombie its parent has not reaped yet.
func hasExited(_ pid: Int32) -> Bool {
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    return stat.isEmpty || stat.split(separator: ")").last?.hasPrefix(" Z") == true
}

struct ProgramFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs a program to its end off the cooperative pool; its output, or a failure with its error output. A program
/// that leaves a daemon behind (`pg_ctl start`) gets `discardOutput`, as the daemon may keep the output open.
func runProgram(_ arguments: [String], in directory: String? = nil, discardOutput: Bool = false) async throws
    -> String
{
    try await offCooperativePool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe()
        // Error output to a file, so that neither pipe can fill up and stop the child.
        let errorPath = TestFolders.path("program", suffix: ".err")
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errorPath) }
        process.standardOutput = discardOutput ? FileHandle.nullDevice : output
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        try process.run()
        let data = discardOutput ? Data() : output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let error = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            throw ProgramFailure(
                description: "\(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                    + String(error.suffix(2000)) + String(decoding: data.suffix(2000), as: UTF8.self))
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A time field of an event line as calwatch writes it (`time` in whole seconds or with milliseconds,
/// `recordedtime` with milliseconds): `nil` when the field is missing or not a timestamp.
func eventDate(_ line: some StringProtocol, _ field: String) -> Date? {
    let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    guard let text = object?[field] as? String else { return nil }
    let formatter = ISO8601DateFormatter()
    if text.contains(".") { formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds] }
    return formatter.date(from: text)
}

/// Where the tests put their files: one folder per test process, removed when the process exits, so that a run
/// leaves nothing in the machine's temporary folder (some tests write tens of megabytes, and the suite is run
/// often). A run that was killed leaves its folder behind; the next run removes the folders of processes gone.
enum TestFolders {
    private static let prefix = "calwatch-tests-"

    /// The process's folder, made (and its removal at exit arranged) on first use.
    static let root: String = {
        let temporary = NSTemporaryDirectory()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        where name.hasPrefix(prefix) {
            if let pid = pid_t(name.dropFirst(prefix.count)), kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(atPath: temporary + "/" + name)
            }
        }
        let root = (temporary as NSString).appendingPathComponent(prefix + "\(getpid())")
        try! FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        atexit {
            try? FileManager.default.removeItem(atPath: TestFolders.root)
        }
        return root
    }()

    private static let made = Atomic<Int>(0)

    /// A new path in the process's folder, `name` followed by a number and `suffix`; nothing is made there. Short,
    /// because a socket's whole path must fit in 107 bytes.
    static func path(_ name: String, suffix: String = "") -> String {
        root + "/" + name + "-\(made.add(1, ordering: .relaxed).newValue)" + suffix
    }
}

extension Process {
    /// Sends `signal` to the process unless it has ended: once it is reaped, its pid may be another process's (a
    /// hook of another test), which a late `kill` would stop.
    func signalIfRunning(_ signal: Int32) {
        if isRunning { kill(processIdentifier, signal) }
    }
}
