import Dispatch
import Foundation
import Synchronization
public import CalWatchCore

#if canImport(Glibc)
    import Glibc
#endif

/// One run of a hook program: argv (never a shell), bytes on its standard input, its standard error kept, in a
/// process group of its own so that a timeout stops the program together with everything it started.
struct HookProcess {
    /// How a run ended.
    enum Outcome: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)
        /// Still running at the timeout: its group got SIGTERM, then SIGKILL.
        case timedOut
        /// The program could not be started (not found, not executable).
        case notStarted(String)
    }

    struct Result: Sendable {
        var outcome: Outcome
        /// The end of what it wrote to standard error.
        var standardErrorTail: String
    }

    var arguments: [String]
    /// `NAME=value` entries.
    var environment: [String]
    var input: [UInt8]
    var timeout: Duration
    /// Between SIGTERM and SIGKILL.
    var grace: Duration = .seconds(2)

    /// Bytes of standard error kept for the log.
    static let tailLimit = 2048

    /// Runs the program on a thread of its own (it blocks in `poll` and `waitpid`) and returns when it ended.
    func run() async -> Result {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: runBlocking()) }
        }
    }

    func runBlocking() -> Result {
        var input: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        let spawned = Self.spawnLock.withLock { _ -> Swift.Result<pid_t, SpawnError> in
            // Pipes are made close-on-exec and the program started under one lock, so no other hook started at
            // the same moment inherits this one's pipe ends (which would keep its standard input from ending).
            guard Self.privatePipe(&input), Self.privatePipe(&errors) else { return .failure(SpawnError(rawValue: errno)) }
            return spawn(standardInput: input[0], standardError: errors[1])
        }
        for descriptor in [input[0], errors[1]] where descriptor >= 0 { close(descriptor) }
        guard case .success(let pid) = spawned else {
            for descriptor in [input[1], errors[0]] where descriptor >= 0 { close(descriptor) }
            if case .failure(let code) = spawned {
                return Result(outcome: .notStarted(Self.text(code.rawValue)), standardErrorTail: "")
            }
            return Result(outcome: .notStarted("unknown"), standardErrorTail: "")
        }
        return supervise(pid: pid, input: input[1], errors: errors[0])
    }

    private static let spawnLock = Mutex(())

    private static func privatePipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }

    private struct SpawnError: Error { var rawValue: Int32 }

    private func spawn(standardInput: Int32, standardError: Int32) -> Swift.Result<pid_t, SpawnError> {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, standardError, 2)
        // A group of its own (so a timeout reaches its children), default signal handling (calwatch ignores
        // SIGPIPE, which a program would otherwise inherit), nothing blocked.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signalNumber in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signalNumber) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        // posix_spawnp looks a program without a slash up in PATH, as a shell would, but runs no shell.
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, &argv, &envp)
        return result == 0 ? .success(pid) : .failure(SpawnError(rawValue: result))
    }

    /// Feeds standard input, collects standard error, and waits for the end or the timeout.
    private func supervise(pid: pid_t, input: Int32, errors: Int32) -> Result {
        var input = input
        var errors = errors
        _ = fcntl(input, F_SETFL, fcntl(input, F_GETFL) | O_NONBLOCK)
        _ = fcntl(errors, F_SETFL, fcntl(errors, F_GETFL) | O_NONBLOCK)
        var written = 0
        var tail: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        var exited = false

        func readErrors() {
            while errors >= 0 {
                let count = chunk.withUnsafeMutableBytes { read(errors, $0.baseAddress!, $0.count) }
                if count > 0 {
                    tail.append(contentsOf: chunk[..<count])
                    if tail.count > Self.tailLimit * 2 { tail.removeFirst(tail.count - Self.tailLimit) }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    if count == 0 {
                        close(errors)
                        errors = -1
                    }
                    return
                }
            }
        }

        if self.input.isEmpty {
            close(input)
            input = -1
        }
        while !exited {
            let now = ContinuousClock.now
            if now >= deadline { break }
            var fds: [pollfd] = []
            if input >= 0 { fds.append(pollfd(fd: input, events: Int16(POLLOUT), revents: 0)) }
            if errors >= 0 { fds.append(pollfd(fd: errors, events: Int16(POLLIN), revents: 0)) }
            // The process's end is noticed by `waitpid` between polls: at once when it closes standard error on
            // exit, within 50 ms when something it started keeps that open.
            let wait = min(deadline - now, .milliseconds(50))
            let milliseconds = Int32(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)
            _ = poll(&fds, nfds_t(fds.count), max(milliseconds, 1))
            for fd in fds where fd.revents != 0 {
                if fd.fd == input {
                    let count = self.input.withUnsafeBytes { write(input, $0.baseAddress! + written, $0.count - written) }
                    if count > 0 { written += count }
                    if written == self.input.count || (count < 0 && errno != EAGAIN && errno != EINTR) {
                        // All written, or the program closed its end (EPIPE): it gets end of file.
                        close(input)
                        input = -1
                    }
                } else {
                    readErrors()
                }
            }
            if waitpid(pid, &status, WNOHANG) == pid { exited = true }
        }
        if input >= 0 { close(input) }
        if !exited { stop(group: pid) }
        let outcome = exited ? Self.outcome(status) : .timedOut
        readErrors()
        if errors >= 0 { close(errors) }
        let text = String(decoding: tail.suffix(Self.tailLimit), as: UTF8.self)
        return Result(outcome: outcome, standardErrorTail: text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// SIGTERM to the whole group, SIGKILL to what is left after the grace period, and the leader reaped.
    private func stop(group pid: pid_t) {
        kill(-pid, SIGTERM)
        let end = ContinuousClock.now + grace
        var status: Int32 = 0
        var reaped = false
        while ContinuousClock.now < end {
            if waitpid(pid, &status, WNOHANG) == pid {
                reaped = true
                // The leader is gone; children that ignored SIGTERM may not be. Give them the rest of the grace.
                if kill(-pid, 0) != 0 { return }
            }
            usleep(10_000)
        }
        kill(-pid, SIGKILL)
        if !reaped { waitpid(pid, &status, 0) }
    }

    private static func outcome(_ status: Int32) -> Outcome {
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    private static func text(_ code: Int32) -> String { String(cString: strerror(code)) }
}
