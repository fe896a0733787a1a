import CoreFoundation
import Foundation
import Testing

/// `calwatch next` while `calwatch watch` runs on the same configuration: the daemon's local server answers over its
/// socket (`GET /v1/next`) with
/// the line `next` would work out alone, picks up what changes, and leaves `next` to read the calendars itself
/// whenever it cannot promise that. Real processes, real time.
@Suite struct NextDaemonTests {
    /// An item of one event, `start` and `end` in seconds from now.
    static func item(_ uid: String, _ summary: String, start: Int, end: Int, join: String? = nil) -> String {
        let now = Int(Date().timeIntervalSince1970) / 60 * 60
        func stamp(_ seconds: Int) -> String {
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.string(from: Date(timeIntervalSince1970: Double(now + seconds)))
        }
        return
            ([
                "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT", "UID:\(uid)",
                "DTSTAMP:20270101T000000Z", "DTSTART:\(stamp(start))", "DTEND:\(stamp(end))", "SUMMARY:\(summary)",
            ] + (join.map { ["DESCRIPTION:Join \($0)"] } ?? []) + ["END:VEVENT", "END:VCALENDAR"])
            .joined(separator: "\r\n")
    }

    /// Writes an item as vdirsyncer does: a temporary name, then a rename into place.
    static func put(_ text: String, as name: String, in folder: String) throws {
        try text.write(toFile: folder + "/.\(name).tmp", atomically: false, encoding: .utf8)
        #expect(rename(folder + "/.\(name).tmp", folder + "/\(name)") == 0)
    }

    @Test func theRunningDaemonAnswersWithTheLineNextWouldReadItself() async throws {
        let folder = TestFolders.path("calwatch-next-daemon")
        try FileManager.default.createDirectory(atPath: folder + "/cal/work", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let configuration = """
            calendars: [cal]
            timezone: UTC
            state: state/journal.db
            metrics: { textfile: metrics.prom, every: 1s }
            sinks:
              - type: jsonl
                path: events.jsonl
            """
        try configuration.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let work = folder + "/cal/work"
        try Self.put(
            Self.item("review", "Design review", start: -600, end: 2400, join: "https://meet.google.com/abc-defg-hij"),
            as: "review.ics", in: work)
        try Self.put(
            Self.item("standup", "Standup", start: 1200, end: 2100, join: "https://zoom.us/j/123456789"),
            as: "standup.ics", in: work)
        try Self.put(Self.item("sam", "1:1 with Sam", start: 18_000, end: 19_800), as: "sam.ics", in: work)

        let process = try WatchCommandTests.watch(in: folder)
        defer { if process.isRunning { process.terminate() } }
        func read(_ name: String) -> String {
            (try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? ""
        }
        func waitFor(_ file: String, _ text: String, seconds: Double = 60) async throws -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while !read(file).contains(text) {
                if Date() > deadline { return false }
                try await Task.sleep(for: .milliseconds(100))
            }
            return true
        }
        #expect(try await waitFor("log.txt", "watching"), "\(read("log.txt"))")
        let socket = folder + "/state/journal.db.sock"
        var status = stat()
        #expect(stat(socket, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600, "only its owner may ask the daemon")

        let cli = CommandLineTests()
        let config = ["--config", folder + "/config.yml"]
        /// `next` through the daemon and alone, in that order; again when a minute turned between the two.
        func both(_ arguments: [String]) async throws -> (daemon: String, alone: String) {
            var pair = ("", "")
            for _ in 0..<3 {
                let daemon = try await cli.calwatch(["next"] + config + arguments)
                let alone = try await cli.calwatch(["next"] + config + arguments + ["--no-daemon"])
                #expect(daemon.status == 0 && alone.status == 0, "\(daemon.errors)\(alone.errors)")
                pair = (daemon.output, alone.output)
                // Each says when it was asked; what it shows otherwise is the same.
                func shown(_ text: String) -> String {
                    text.replacingOccurrences(of: #""now":"[^"]*""#, with: "", options: .regularExpression)
                        .replacingOccurrences(of: #""seconds":[0-9]+"#, with: "", options: .regularExpression)
                        .replacingOccurrences(of: #""progress":[0-9.e-]+"#, with: "", options: .regularExpression)
                }
                if shown(pair.0) == shown(pair.1) { return (shown(pair.0), shown(pair.1)) }
            }
            return pair
        }
        for format in ["text", "json", "waybar", "polybar", "i3blocks"] {
            let (daemon, alone) = try await both(["--format", format])
            #expect(daemon == alone, "\(format)")
            #expect(daemon.contains("Design review"), "\(format): \(daemon)")
        }
        let (kinds, kindsAlone) = try await both(["--kinds", "event", "--calendars", "work", "--max-width", "12"])
        #expect(kinds == kindsAlone)
        /// What the metrics file says of the requests answered `answer`, once it says at least `least`.
        func requests(_ answer: String, atLeast least: Int) async throws -> Int {
            let deadline = Date().addingTimeInterval(30)
            var count = 0
            repeat {
                let line = read("metrics.prom").split(separator: "\n").first {
                    $0.hasPrefix("calwatch_next_requests_total{answer=\"\(answer)\"}")
                }
                count = line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
                if count >= least { break }
                try await Task.sleep(for: .milliseconds(200))
            } while Date() < deadline
            return count
        }
        let answered = try await requests("line", atLeast: 6)
        #expect(answered >= 6, "every `next` above was answered by the daemon")
        #expect(try await requests("refused", atLeast: 0) == 0)

        // A meeting written while the daemon runs: its next answer has it.
        try Self.put(Self.item("soon", "Incident call", start: 60, end: 3000), as: "soon.ics", in: work)
        let deadline = Date().addingTimeInterval(30)
        var seen = ""
        while Date() < deadline {
            seen = try await cli.calwatch(["next"] + config + ["--format", "json"]).output
            if seen.contains("Incident call") { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(seen.contains("Incident call"), "\(seen)")
        #expect(try await requests("line", atLeast: answered + 1) > answered)
        #expect(try await requests("refused", atLeast: 0) == 0)

        // As far ahead as `next` looks: the daemon holds that (it plans flights two months ahead).
        let (far, farAlone) = try await both(["--within", "31d", "--format", "json"])
        #expect(far == farAlone)
        #expect(far.contains("Incident call"))
        // Someone else's bytes on the socket, and a question it cannot read: refused, and the daemon goes on.
        let garbage = try await offCooperativePool { try Self.ask(socket, "\u{1}\u{2}hello\r\n\r\n") }
        #expect(garbage.hasPrefix("HTTP/1.1 400"), "\(garbage)")
        let reply = try await offCooperativePool {
            try Self.ask(socket, "GET /v1/next?format=morse HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        }
        #expect(reply.hasPrefix("HTTP/1.1 400") && reply.contains(#""refused":"format is one of"#), "\(reply)")

        // The configuration changed but not read again (no SIGHUP): the daemon's answer would be the old one's, so
        // `next` reads the calendars itself, in the new zone.
        try configuration.replacingOccurrences(of: "timezone: UTC", with: "timezone: Asia/Tokyo")
            .write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let tokyo = try await cli.calwatch(["next"] + config + ["--format", "json"])
        #expect(tokyo.output.contains("+09:00"), "\(tokyo.output)")
        #expect(try await requests("refused", atLeast: 1) == 1)

        // Stopped: the socket goes with it, and `next` reads the calendars itself.
        process.terminate()
        try await offCooperativePool { process.waitUntilExit() }
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(try await cli.calwatch(["next"] + config + ["--format", "json"]).output.contains("Incident call"))
    }

    /// The `calwatch` front answers `next` alone (a copy of it with no program beside it prints the line) from the
    /// daemon that reads the same configuration file, found by the link under `XDG_RUNTIME_DIR`; it steps aside
    /// (runs the program, which reads the calendars itself) when the daemon's paths lead elsewhere for this user
    /// (another `HOME`) or the file changed since the daemon read it; the link goes when the daemon stops.
    @Test func theFrontAnswersFromTheDaemonOfTheSameFileAndStepsAsideOtherwise() async throws {
        let folder = TestFolders.path("calwatch-next-front")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (home, uid, summary) in [("one", "review", "Design review"), ("two", "budget", "Budget call")] {
            let calendar = folder + "/\(home)/cal/work"
            try FileManager.default.createDirectory(atPath: calendar, withIntermediateDirectories: true)
            try Self.put(Self.item(uid, summary, start: 1200, end: 2400), as: "\(uid).ics", in: calendar)
        }
        let runtime = folder + "/run"
        try FileManager.default.createDirectory(
            atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try """
        calendars: [~/cal]
        timezone: UTC
        state: state/journal.db
        sinks:
          - { type: jsonl, path: events.jsonl }
        """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let one = ["HOME": folder + "/one", "XDG_RUNTIME_DIR": runtime]
        let two = ["HOME": folder + "/two", "XDG_RUNTIME_DIR": runtime]
        // The front alone: whatever it does not answer itself ends in "cannot run calwatch-commands".
        let lonely = URL(fileURLWithPath: folder + "/lonely/calwatch")
        try FileManager.default.createDirectory(atPath: folder + "/lonely", withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CommandLineTests.executable, to: lonely)

        let daemon = try WatchCommandTests.watch(in: folder, environment: one)
        defer { if daemon.isRunning { daemon.terminate() } }
        try await eventually("the daemon watching") {
            ((try? String(contentsOfFile: folder + "/log.txt", encoding: .utf8)) ?? "").contains("watching")
        }
        let links = { (try? FileManager.default.contentsOfDirectory(atPath: runtime + "/calwatch")) ?? [] }
        #expect(links().count == 1 && links()[0].hasPrefix("next-"), "\(links())")
        let cli = CommandLineTests()
        let next = ["next", "--config", folder + "/config.yml"]

        for format in ["text", "waybar"] {
            var answered = CommandLineTests.Run(status: -1, output: "", errors: "")
            var alone = answered
            // Again when a minute turned between the two.
            for _ in 0..<3 {
                answered = try await cli.calwatch(next + ["--format", format], environment: one, executable: lonely)
                alone = try await cli.calwatch(next + ["--format", format, "--no-daemon"], environment: one)
                if answered.output == alone.output { break }
            }
            #expect(answered.status == 0 && answered.output == alone.output, "\(answered) \(alone)")
            #expect(answered.output.contains("Design review"), "\(answered.output)")
        }
        let cut = try await cli.calwatch(
            next + ["--max-width", "8", "--kinds", "event, meeting"], environment: one, executable: lonely)
        #expect(cut.status == 0 && cut.output == "Design …\n", "\(cut)")

        // Another HOME: ~/cal is another folder, so the daemon's answer would be wrong; the front steps aside.
        let elsewhere = try await cli.calwatch(next, environment: two, executable: lonely)
        #expect(elsewhere.status == 69 && elsewhere.errors.contains("cannot run calwatch-commands"), "\(elsewhere)")
        let read = try await cli.calwatch(next, environment: two)
        #expect(read.status == 0 && read.output.contains("Budget call"), "\(read)")
        // An argument the program refuses is the program's to say.
        let wrong = try await cli.calwatch(next + ["--max-width", "0"], environment: one)
        #expect(wrong.status == 64 && wrong.errors.contains("--max-width must be 1 or more"), "\(wrong)")

        // The file edited since the daemon read it (no SIGHUP): the daemon reads another configuration.
        let edited = try String(contentsOfFile: folder + "/config.yml", encoding: .utf8) + "# edited\n"
        try edited.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let stale = try await cli.calwatch(next, environment: one, executable: lonely)
        #expect(stale.status == 69, "\(stale)")

        try await LocalServerTests.stop(daemon)
        #expect(links().isEmpty, "\(links())")
    }

    /// Sends `text` to the socket at `path` and returns the reply.
    static func ask(_ path: String, _ text: String) throws -> String {
        try #require(path.utf8.count < 108, "\(path) is too long for a socket address")
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { return "" }
        _ = Array(text.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            reply += buffer.prefix(count)
        }
        return String(decoding: reply, as: UTF8.self)
    }
}
