import CLinux
import CalWatchCore
import Foundation
import Subprocess
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// One run of a hook program through swift-subprocess: argv (never a shell), bytes on its standard input, the end
/// of its standard error kept, in a session and process group of its own so that a timeout stops the program
/// together with everything it started.
///
/// Nothing here blocks a thread: swift-subprocess waits for the exit on its own monitor thread (pidfd and epoll)
/// and does the pipe I/O asynchronously. The timeout is a race against a sleep on the caller's clock; when the
/// sleep wins and the program is still running (`ChildExit`), the group gets SIGTERM, then SIGKILL after `grace`,
/// while its standard error is read to the end.
struct HookProcess: Sendable {
    struct Result: Sendable {
        var outcome: HookOutcome
        /// The end of what it wrote to standard error.
        var standardErrorTail: String
    }

    var arguments: [String]
    /// The whole environment the program gets, as `NAME=value` entries.
    var environment: [String]
    var input: [UInt8]
    var timeout: Duration
    /// Between SIGTERM and SIGKILL.
    var grace: Duration = .seconds(2)

    /// Bytes of standard error kept for the log; the rest is read and dropped, so a chatty hook costs no memory.
    static let tailLimit = 2048

    /// Runs the program and returns when it has ended, timed on `clock`.
    func run(clock: any Clock<Duration>) async -> Result {
        let started = Started()
        let outcome = await withTaskGroup(of: HookOutcome?.self) { race in
            race.addTask { await self.spawn(started) }
            race.addTask {
                // A cancelled sleep (the program ended first) is not a timeout.
                do { try await clock.sleep(for: timeout) } catch { return nil }
                return await started.exit.overran() ? HookOutcome.timedOut : nil
            }
            var first: HookOutcome?
            while first == nil, let next = await race.next() { first = next }
            if first == .timedOut, let leader = started.state.withLock({ $0.leader }) {
                // Stopped by signals rather than by cancelling the run, so that what the program said before it
                // was stopped is read to the end of the pipe, not only as far as the reader had got.
                race.addTask {
                    await Self.stop(group: leader, grace: grace)
                    return nil
                }
                _ = await race.next()
            }
            // Cancelling the run stops what is left of the program's group (SIGTERM, then SIGKILL) and waits for
            // its end.
            race.cancelAll()
            return first ?? .timedOut
        }
        let (leader, tail) = started.state.withLock { ($0.leader, $0.errorTail) }
        // Whatever the program started and left behind in its group goes with it after a timeout (the leader may
        // have gone on SIGTERM while a child ignored it). The group keeps its id while any member lives.
        if outcome == .timedOut, let leader { kill(-leader, SIGKILL) }
        let text = String(decoding: tail.suffix(Self.tailLimit), as: UTF8.self)
        return Result(outcome: outcome, standardErrorTail: text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// SIGTERM to the group, SIGKILL after `grace`, then a second for the pipe to close; cancelled as soon as the
    /// program's run has ended. A program that left the group and kept standard error open is not waited for.
    private static func stop(group leader: pid_t, grace: Duration) async {
        kill(-leader, SIGTERM)
        do { try await Task.sleep(for: grace) } catch { return }
        kill(-leader, SIGKILL)
        try? await Task.sleep(for: .seconds(1))
    }

    private func spawn(_ started: Started) async -> HookOutcome? {
        var options = PlatformOptions()
        // A session of its own: its own process group, no controlling terminal, so signals to the group reach
        // everything it started and nothing of calwatch.
        options.createSession = true
        options.teardownSequence = [
            .gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: grace),
            .send(signal: .kill, toProcessGroup: true, allowedDurationToNextStep: .milliseconds(100)),
        ]
        // posix_spawnp-style lookup: a name without a slash is found in PATH, as a shell would, but runs no shell.
        let program = arguments[0]
        let executable: Executable = program.contains("/") ? .path(FilePath(program)) : .name(program)
        // Standard input is an anonymous file holding the event, not a pipe: a hook may read it or not, and
        // exit at any point, without a write to block on or an EPIPE to handle.
        let input: FileDescriptor
        do {
            input = try Self.inputFile(self.input)
        } catch {
            return .notStarted("cannot prepare its standard input: \(error)")
        }
        do {
            let run = try await Subprocess.run(
                executable, arguments: Arguments(Array(arguments.dropFirst())),
                // NUL-terminated, as swift-subprocess hands raw entries to the program as they are.
                environment: .custom(environment.map { Array($0.utf8) + [0] }),
                platformOptions: options, input: .fileDescriptor(input, closeAfterSpawningProcess: true),
                output: .discarded, error: .sequence
            ) { execution in
                started.state.withLock { $0.leader = execution.processIdentifier.value }
                started.exit.watch(execution.processIdentifier)
                // Read as it comes, so a timeout still has what the program said before it was stopped.
                for try await chunk in execution.standardError {
                    chunk.withUnsafeBytes { bytes in
                        started.state.withLock { state in
                            state.errorTail.append(contentsOf: bytes)
                            if state.errorTail.count > Self.tailLimit * 2 {
                                state.errorTail.removeFirst(state.errorTail.count - Self.tailLimit)
                            }
                        }
                    }
                }
            }
            switch run.terminationStatus {
            case .exited(let code): return .exited(code)
            case .signaled(let signal): return .signaled(signal)
            }
        } catch let error as SubprocessError where !Task.isCancelled {
            return .notStarted(Self.reason(error))
        } catch {
            // Cancelled by the timeout: the race has its answer.
            return Task.isCancelled ? nil : .notStarted("\(error)")
        }
    }

    /// A memory-backed file (memfd) holding `bytes`, read from its start; closed on exec in calwatch's other children.
    private static func inputFile(_ bytes: [UInt8]) throws -> FileDescriptor {
        let descriptor = CLinux_memfd_create("calwatch-event", CLinux_MFD_CLOEXEC)
        guard descriptor >= 0 else { throw Errno(rawValue: errno) }
        let file = FileDescriptor(rawValue: descriptor)
        do {
            _ = try file.writeAll(bytes)
            _ = try file.seek(offset: 0, from: FileDescriptor.SeekOrigin.start)
        } catch {
            try? file.close()
            throw error
        }
        return file
    }

    /// What the run learns as it goes: the program's process id (also its group's) and the end of its standard
    /// error.
    private final class Started: Sendable {
        struct State {
            var leader: pid_t?
            var errorTail: [UInt8] = []
        }
        let state = Locked(State())
        let exit = ChildExit()
    }

    /// "No such file or directory" rather than the error's own wording, where the system says why.
    private static func reason(_ error: SubprocessError) -> String {
        if let underlying = error.underlyingError { return Errno(rawValue: underlying.rawValue).description }
        return "\(error)"
    }
}
