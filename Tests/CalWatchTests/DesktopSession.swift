import Foundation

@testable import CalWatchCore
@testable import CalWatchDesktop

/// A private desktop for the notification tests: a session bus (`dbus-daemon --session` in a temporary folder), an
/// X server with no screen (Xvfb), and dunst on them, printing every notification it shows (`dunst -print`) and
/// answering its context menu from a file (`dmenu` is a script that picks the line naming `choice`). Stopped at the
/// end of `with`.
struct DesktopSession {
    let folder: String
    /// The bus address, for `notify: { bus: … }` and `DBUS_SESSION_BUS_ADDRESS`.
    let bus: String
    let display: String

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus
        environment["DISPLAY"] = display
        return environment
    }

    /// What dunst printed for each notification it showed, in order: its fields by name.
    var shown: [[String: String]] {
        let text = (try? String(contentsOfFile: folder + "/dunst.log", encoding: .utf8)) ?? ""
        var cards: [[String: String]] = []
        var card: [String: String] = [:]
        /// A quoted value that runs on over lines (`formatted: '<b>…</b>` then the body), until its closing quote.
        var open: (key: String, text: String)?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let (key, text) = open {
                let joined = text + "\n" + line
                if line.hasSuffix("'") {
                    card[key] = String(joined.dropLast())
                    open = nil
                } else {
                    open = (key, joined)
                }
                continue
            }
            if line == "{" { card = [:] } else if line == "}" { cards.append(card) }
            let trimmed = line.drop { $0 == "\t" || $0 == " " }
            guard let colon = trimmed.firstIndex(of: ":"), line.first == "\t", !line.hasPrefix("\t\t") else { continue }
            let key = String(trimmed[..<colon])
            let value = trimmed[trimmed.index(after: colon)...].drop { $0 == " " }
            if value.hasPrefix("'") && (value.count < 2 || !value.hasSuffix("'")) {
                open = (key, String(value.dropFirst()))
            } else if value.hasPrefix("'") {
                card[key] = String(value.dropFirst().dropLast())
            } else {
                card[key] = String(value)
            }
        }
        return cards
    }

    /// The NotificationClosed signals seen on the bus: (id, reason).
    var closed: [(id: UInt32, reason: UInt32)] {
        let text = (try? String(contentsOfFile: folder + "/monitor.log", encoding: .utf8)) ?? ""
        var result: [(UInt32, UInt32)] = []
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        for (index, line) in lines.enumerated()
        where line.contains("member=NotificationClosed") && index + 2 < lines.count {
            if let id = UInt32(lines[index + 1].replacingOccurrences(of: "uint32 ", with: "")),
                let reason = UInt32(lines[index + 2].replacingOccurrences(of: "uint32 ", with: ""))
            {
                result.append((id, reason))
            }
        }
        return result
    }

    /// A notification sink's settings for this desktop's bus.
    var settings: NotifySettings {
        var settings = NotifySettings()
        settings.bus = bus
        return settings
    }

    /// The Notify calls the monitor saw, in order: what any server was asked to show.
    var notifyCalls: [(replaces: UInt32, summary: String, body: String)] {
        let text = (try? String(contentsOfFile: folder + "/monitor.log", encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n").map(String.init)
        var calls: [(UInt32, String, String)] = []
        for (index, line) in lines.enumerated() where line.contains("member=Notify") && index + 5 < lines.count {
            // app_name, replaces_id, app_icon, summary, body: one argument a line, as `string "…"` or `uint32 N`.
            func string(_ line: String) -> String {
                let value = line.trimmingCharacters(in: .whitespaces).dropFirst("string ".count)
                return String(value.dropFirst().dropLast())
            }
            let replaces = UInt32(lines[index + 2].trimmingCharacters(in: .whitespaces).dropFirst("uint32 ".count)) ?? 0
            calls.append((replaces, string(lines[index + 4]), string(lines[index + 5])))
        }
        return calls
    }

    /// Runs `dunstctl` with `arguments` on this desktop.
    func dunstctl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dunstctl")
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Opens dunst's context menu on the newest card and picks the action whose label contains `label`.
    func choose(_ label: String) throws {
        try label.write(toFile: folder + "/choice", atomically: true, encoding: .utf8)
        _ = try dunstctl(["context"])
    }

    /// The notification server: dunst, or GNOME's notification-daemon (what it was asked to show is read from
    /// the bus: `notifyCalls`).
    enum Server { case dunst, notificationDaemon }

    /// A session bus of its own for `dbus-daemon --config-file`, listening at `listen`, with no service files:
    /// nothing is started on demand (the system's dunst or gnome-keyring would be). Without `eavesdrop`, gdbus
    /// clients time out connecting.
    static func busConfiguration(listen: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>\(listen)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
    }

    /// `expireAfter`: how long dunst shows a normal card (seconds; its default is 10). `busPath`: where the bus
    /// listens, as a login session's bus is always at `$XDG_RUNTIME_DIR/bus` (default: a new name in the folder).
    static func with<T: Sendable>(
        server: Server = .dunst, expireAfter: Int? = nil, busPath: String? = nil,
        _ body: @Sendable (DesktopSession) async throws -> T
    ) async throws -> T {
        let folder = SinkFixtures.folder()
        var processes: [Process] = []
        func stop() async {
            // SIGKILL: a child started from a thread of the test runner inherits its blocked signals, SIGTERM
            // among them, and only dunst unblocks it.
            for process in processes.reversed() { process.signalIfRunning(SIGKILL) }
            let all = processes
            _ = try? await offCooperativePool { for process in all { process.waitUntilExit() } }
            try? FileManager.default.removeItem(atPath: folder)
        }
        func start(_ path: String, _ arguments: [String], environment: [String: String]? = nil, output: String)
            throws -> Process
        {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: folder)
            if let environment { process.environment = environment }
            _ = FileManager.default.createFile(atPath: folder + "/" + output, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/" + output))
            // Xvfb writes its display number alone on standard output, and its complaints on standard error.
            _ = FileManager.default.createFile(atPath: folder + "/" + output + ".err", contents: nil)
            process.standardError =
                output == "x.txt"
                ? try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/x.txt.err")) : process.standardOutput
            try process.run()
            processes.append(process)
            return process
        }
        func firstLine(_ file: String) async throws -> String {
            for _ in 0..<200 {
                let text = (try? String(contentsOfFile: folder + "/" + file, encoding: .utf8)) ?? ""
                if let line = text.split(separator: "\n").first, text.contains("\n") { return String(line) }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: folder + "/" + file])
        }
        do {
            try Self.busConfiguration(listen: busPath.map { "unix:path=" + $0 } ?? "unix:dir=" + folder)
                .write(toFile: folder + "/bus.conf", atomically: true, encoding: .utf8)
            _ = try start(
                "/usr/bin/dbus-daemon", ["--config-file=" + folder + "/bus.conf", "--nofork", "--print-address=1"],
                output: "bus.txt")
            let bus = try await firstLine("bus.txt")
            // -displayfd: Xvfb picks a free display and writes its number.
            _ = try start(
                "/usr/bin/Xvfb", ["-displayfd", "1", "-screen", "0", "800x600x24", "-nolisten", "tcp"], output: "x.txt")
            let number = try await firstLine("x.txt")
            guard number.allSatisfy(\.isNumber) else { throw CocoaError(.fileReadCorruptFile) }
            let display = ":" + number
            try """
            [global]
                # As dunst ships it (/etc/xdg/dunst/dunstrc): body markup read, and announced as body-markup.
                markup = full
                dmenu = \(folder)/pick.sh
                history_length = 100
            \(expireAfter.map { "[urgency_normal]\n    timeout = \($0)" } ?? "")
            """.write(toFile: folder + "/dunstrc", atomically: true, encoding: .utf8)
            _ = SinkFixtures.script(
                "tee -a \"\(folder)/menu.txt\" | grep -m1 -F -- \"$(cat \"\(folder)/choice\")\"", in: folder,
                name: "pick.sh")
            let session = DesktopSession(folder: folder, bus: bus, display: display)
            _ = try start(
                "/usr/bin/dbus-monitor",
                [
                    "--address", bus, "type='signal',interface='org.freedesktop.Notifications'",
                    "type='method_call',interface='org.freedesktop.Notifications'",
                ],
                output: "monitor.log")
            switch server {
            case .dunst:
                _ = try start(
                    "/usr/bin/dunst", ["-config", folder + "/dunstrc", "-print"], environment: session.environment,
                    output: "dunst.log")
                // dunst owns org.freedesktop.Notifications once it answers.
                for _ in 0..<200 {
                    let paused = try? await offCooperativePool { try session.dunstctl(["is-paused"]) }
                    if paused?.contains("false") == true { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
            case .notificationDaemon:
                _ = try start(
                    "/usr/lib/notification-daemon/notification-daemon", ["--replace"], environment: session.environment,
                    output: "daemon.log")
                for _ in 0..<200 {
                    if case .success = await NotifySink.probe(session.settings) { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
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

/// `eventually` looking a tenth of a second apart: each look reads dunst's whole log, and the suite shares two cores.
func slowly(_ what: String, _ condition: () async throws -> Bool) async throws {
    try await eventually(what) {
        try await Task.sleep(for: .milliseconds(100))
        return try await condition()
    }
}
