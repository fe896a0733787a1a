import Foundation
import Testing

/// A Secret Service of its own for a test: Debian's gnome-keyring on a private session bus, in a temporary home,
/// its login collection made and unlocked with a password given on standard input (as a display manager does at
/// log-in). `secretTool` reads it as any other client would (libsecret's `secret-tool`).
struct KeyringSession: Sendable {
    let folder: String
    let bus: String

    /// What a calwatch run on this session needs.
    var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": bus] }

    /// `secret-tool` with `arguments` on this session's bus: its standard output.
    func secretTool(_ arguments: [String]) async throws -> String {
        try await runProgram(
            ["DBUS_SESSION_BUS_ADDRESS=" + bus, "timeout", "20", "secret-tool"] + arguments)
    }

    /// Locks the login collection, as a screen lock or a log-out does.
    func lock() async throws {
        _ = try await runProgram([
            "DBUS_SESSION_BUS_ADDRESS=" + bus, "dbus-send", "--session", "--print-reply",
            "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock",
            "array:objpath:/org/freedesktop/secrets/collection/login",
        ])
    }

    static func with<T: Sendable>(_ body: @Sendable (KeyringSession) async throws -> T) async throws -> T {
        let folder = SinkFixtures.folder()
        for sub in ["run", "data", "home"] {
            try FileManager.default.createDirectory(
                atPath: folder + "/" + sub, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        try DesktopSession.busConfiguration(listen: "unix:dir=" + folder).write(
            toFile: folder + "/bus.conf", atomically: true, encoding: .utf8)
        var processes: [Process] = []
        func stop() async {
            for process in processes.reversed() { process.signalIfRunning(SIGKILL) }
            let all = processes
            _ = try? await offCooperativePool { for process in all { process.waitUntilExit() } }
            try? FileManager.default.removeItem(atPath: folder)
        }
        do {
            let busDaemon = Process()
            busDaemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
            busDaemon.arguments = ["--config-file=" + folder + "/bus.conf", "--nofork", "--print-address=1"]
            _ = FileManager.default.createFile(atPath: folder + "/bus.txt", contents: nil)
            busDaemon.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/bus.txt"))
            busDaemon.standardError = FileHandle.nullDevice
            try busDaemon.run()
            processes.append(busDaemon)
            var bus = ""
            for _ in 0..<200 where bus.isEmpty {
                let text = (try? String(contentsOfFile: folder + "/bus.txt", encoding: .utf8)) ?? ""
                if text.contains("\n") { bus = String(text.split(separator: "\n")[0]) }
                try await Task.sleep(for: .milliseconds(50))
            }
            let keyring = Process()
            keyring.executableURL = URL(fileURLWithPath: "/usr/bin/gnome-keyring-daemon")
            keyring.arguments = ["--foreground", "--unlock", "--components=secrets"]
            keyring.environment = [
                "PATH": "/usr/bin:/bin", "HOME": folder + "/home", "XDG_DATA_HOME": folder + "/data",
                "XDG_RUNTIME_DIR": folder + "/run", "DBUS_SESSION_BUS_ADDRESS": bus,
            ]
            let password = Pipe()
            keyring.standardInput = password
            _ = FileManager.default.createFile(atPath: folder + "/keyring.log", contents: nil)
            keyring.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/keyring.log"))
            keyring.standardError = keyring.standardOutput
            try keyring.run()
            processes.append(keyring)
            try password.fileHandleForWriting.write(contentsOf: Data("calwatch-test-login".utf8))
            try password.fileHandleForWriting.close()
            let session = KeyringSession(folder: folder, bus: bus)
            // Looked at every 100 ms (each look is a process) for at most 30 s.
            var unlocked = false
            for _ in 0..<300 where !unlocked {
                let answer = try? await runProgram([
                    "DBUS_SESSION_BUS_ADDRESS=" + bus, "dbus-send", "--session", "--print-reply",
                    "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets/aliases/default",
                    "org.freedesktop.DBus.Properties.Get", "string:org.freedesktop.Secret.Collection", "string:Locked",
                ])
                unlocked = answer?.contains("boolean false") == true
                if !unlocked { try await Task.sleep(for: .milliseconds(100)) }
            }
            guard unlocked else {
                throw ProgramFailure(
                    description: "gnome-keyring did not unlock its login collection: "
                        + ((try? String(contentsOfFile: folder + "/keyring.log", encoding: .utf8)) ?? ""))
            }
            let result = try await body(session)
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }
}
