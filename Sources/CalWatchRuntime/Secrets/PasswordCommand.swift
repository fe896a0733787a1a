import Foundation
import Subprocess
import SystemPackage

/// A `passwordCommand:` (`[pass, show, calwatch/db]`): run as argv, never through a shell, for at most 30 seconds,
/// in a session of its own so that a timeout stops everything it started (a `gpg-agent` it spawned, a pinentry
/// left waiting) with it; the first line it prints is the password. The 30 seconds are the program's own running
/// time (`ChildExit`), not how soon a busy calwatch heard of its end. Shared by the PostgreSQL sink and CalDAV
/// sources.
package enum PasswordCommand {
    /// Why no password came, worded for the user; it never holds what the command printed.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package static func run(_ command: [String], timeout: Duration = .seconds(30)) async throws(Failure) -> String {
        guard let program = command.first, !program.isEmpty else {
            throw Failure(description: "passwordCommand is empty; write the program that prints the password")
        }
        let executable: Executable = program.contains("/") ? .path(FilePath(program)) : .name(program)
        var options = PlatformOptions()
        options.createSession = true
        options.teardownSequence = [
            .gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(1)),
            .send(signal: .kill, toProcessGroup: true, allowedDurationToNextStep: .milliseconds(100)),
        ]
        let platformOptions = options
        let exit = ChildExit()
        typealias Run = ExecutionResult<Void, StringOutput<UTF8>, DiscardedOutput>
        let run: Run
        do {
            run = try await withThrowingTaskGroup(of: Run?.self) { race in
                race.addTask {
                    try await Subprocess.run(
                        executable, arguments: Arguments(Array(command.dropFirst())), platformOptions: platformOptions,
                        input: .none, output: .string(limit: 4096), error: .discarded
                    ) { execution in exit.watch(execution.processIdentifier) }
                }
                race.addTask {
                    try await Task.sleep(for: timeout)
                    guard await exit.overran() else { return nil }
                    throw Failure(
                        description: "passwordCommand \(program) did not finish within \(timeout.components.seconds) s")
                }
                defer { race.cancelAll() }
                // The timer's `nil` (the program had ended) leaves the run to come back.
                for try await case let run? in race { return run }
                throw CancellationError()
            }
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure(description: "cannot run passwordCommand \(program): \(error)")
        }
        guard case .exited(0) = run.terminationStatus else {
            throw Failure(description: "passwordCommand \(program) failed (\(run.terminationStatus))")
        }
        guard let line = run.standardOutput.split(whereSeparator: \.isNewline).first, !line.isEmpty else {
            throw Failure(description: "passwordCommand \(program) printed no password")
        }
        return String(line)
    }

    /// The first line of a password file (a systemd credential, `$CREDENTIALS_DIRECTORY/<name>`): at most 4 KiB
    /// read, on a thread of its own (the file may sit on slow storage); never what it holds in an error.
    package static func firstLine(ofFile path: String) async throws(Failure) -> String {
        let read: Result<String, Failure> = await withCheckedContinuation { continuation in
            Thread {
                guard let handle = FileHandle(forReadingAtPath: path) else {
                    return continuation.resume(returning: .failure(Failure(description: "cannot read \(path)")))
                }
                defer { try? handle.close() }
                let bytes = (try? handle.read(upToCount: 4096)) ?? nil
                let text = String(decoding: bytes ?? Data(), as: UTF8.self)
                guard let line = text.split(whereSeparator: \.isNewline).first, !line.isEmpty else {
                    return continuation.resume(returning: .failure(Failure(description: "\(path) holds no password")))
                }
                continuation.resume(returning: .success(String(line)))
            }.start()
        }
        return try read.get()
    }
}
