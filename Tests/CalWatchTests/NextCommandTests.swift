import Foundation
import Synchronization
import Testing

/// `calwatch next --follow` as a status bar runs it, in real time: the built executable on a folder, its lines read
/// through a pipe as they come. The line a minute when nothing changes is tested on a manual clock
/// (`NextFollowTests`), and the CPU it uses while idle is measured by `make bench-next`.
@Suite struct NextCommandTests {
    /// A running `calwatch next --follow`, its lines with when they arrived.
    final class Follower: Sendable {
        let process: Process
        private let lines = Mutex<[(line: String, at: ContinuousClock.Instant)]>([])

        init(_ arguments: [String], environment: [String: String] = [:]) throws {
            let process = Process()
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
            process.executableURL = CommandLineTests.executable
            process.arguments = ["next", "--follow"] + arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            self.process = process
            try process.run()
            let reader = pipe.fileHandleForReading
            let thread = Thread { [self] in
                var buffer: [UInt8] = []
                while true {
                    let data = reader.availableData
                    if data.isEmpty { return }
                    buffer += data
                    while let newline = buffer.firstIndex(of: 10) {
                        let line = String(decoding: buffer[..<newline], as: UTF8.self)
                        buffer.removeSubrange(...newline)
                        self.lines.withLock { $0.append((line, ContinuousClock.now)) }
                    }
                }
            }
            thread.start()
        }

        var all: [(line: String, at: ContinuousClock.Instant)] { lines.withLock { $0 } }

        /// Waits (generously, in real time) for a line satisfying `condition`; returns it and when it came.
        func waitFor(
            _ what: String, seconds: Double = 60, _ condition: (String) -> Bool
        ) async throws -> (line: String, at: ContinuousClock.Instant) {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                if let found = all.first(where: { condition($0.line) }) { return found }
                try await Task.sleep(for: .milliseconds(10))
            }
            throw Timeout(what: what, seconds: seconds)
        }

        func stop() async throws {
            if process.isRunning { process.terminate() }
            try await offCooperativePool { [process] in process.waitUntilExit() }
        }
    }

    static func stamp(_ seconds: Int) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
    }

    /// Waits (in real time) until the wall clock's second within its minute is in `seconds`.
    static func waitForSecondOfMinute(_ seconds: ClosedRange<Int>) async throws {
        while !seconds.contains(Int(Date().timeIntervalSince1970) % 60) {
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// Without a daemon, `--follow` polls the calendars on servers itself, on their `every:`.
    @Test func aFeedChangedOnItsServerChangesTheLine() async throws {
        try await FeedServer.with { server in
            let folder = try NextTests.Folder()
            let start = Int(Date().timeIntervalSince1970) + 7200
            func calendar(_ summary: String) throws {
                try [
                    "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT", "UID:polled",
                    "DTSTAMP:20270101T000000Z", "DTSTART:\(Self.stamp(start))", "DURATION:PT30M",
                    "SUMMARY:\(summary)", "END:VEVENT", "END:VCALENDAR", "",
                ].joined(separator: "\r\n").write(
                    toFile: server.folder + "/team.ics", atomically: true, encoding: .utf8)
            }
            try calendar("Planning")
            try """
            timezone: UTC
            calendars:
              - { url: "\(server.url("/f/team.ics"))", name: Team, every: 2s }
            """.write(toFile: folder.path + "/config.yml", atomically: true, encoding: .utf8)
            let follower = try Follower(
                ["--config", folder.path + "/config.yml", "--within", "1d"],
                environment: ["XDG_CACHE_HOME": folder.path + "/cache"])
            defer { if follower.process.isRunning { follower.process.terminate() } }
            _ = try await follower.waitFor("the feed's meeting", seconds: 120) { $0.contains("Planning") }
            try calendar("Retro")
            _ = try await follower.waitFor("the feed's meeting renamed on its server") { $0.contains("Retro") }
            try await follower.stop()
        }
    }

    @Test func anItemWrittenChangesTheLineAtOnceAndAStartFlipsItToLive() async throws {
        let folder = try NextTests.Folder()
        let follower = try Follower([folder.path, "--tz", "UTC", "--format", "waybar"])
        // Two minutes: a process started while the whole suite starts waits its turn for the two cores.
        let first = try await follower.waitFor("the first line", seconds: 120) { _ in true }
        #expect(first.line.contains(#""class":"none""#))

        // A meeting 6 s ahead, renamed into place as vdirsyncer writes, early in a minute: a line that comes at once
        // and one that waits for the next whole minute are then at least 40 s apart, however busy the machine.
        try await Self.waitForSecondOfMinute(2...20)
        let writtenAt = Date()
        let written = ContinuousClock.now
        let nextMinute = written + .seconds(60 - writtenAt.timeIntervalSince1970.truncatingRemainder(dividingBy: 60))
        let start = Int(writtenAt.timeIntervalSince1970) + 6
        try folder.write(
            "e2e", ["SUMMARY:Standup", "DTSTART:\(Self.stamp(start))", "DTEND:\(Self.stamp(start + 600))"])
        let soon = try await follower.waitFor("the meeting's line") { $0.contains("Standup") }
        #expect(soon.line.contains(#""class":"soon""#), "\(soon.line)")
        #expect(soon.at < nextMinute, "the line changed \(soon.at - written) after the write, with the minute's line")

        let live = try await follower.waitFor("the live line", seconds: 50) { $0.contains(#""class":"live""#) }
        let startsAfter = Duration.seconds(Double(start) - writtenAt.timeIntervalSince1970)
        #expect(live.at - written >= startsAfter, "live \(live.at - written) after the write, before the start")
        #expect(live.at < nextMinute, "live \(live.at - written - startsAfter) after the start, with the minute's line")
        #expect(live.line.contains("Standup: 10 min left"))

        // Deleted: the line clears. (Within a second when this test runs alone; in some full-suite runs the
        // clearing line came only with the next minute's line, a cause not yet found: see the issue note.)
        folder.remove("e2e")
        try await eventually("the line to clear") {
            follower.all.last?.line.contains(#""class":"none""#) == true
        }
        try await follower.stop()
    }

    /// The status-bar samples' click action: it opens the join link of the meeting shown, through the
    /// open-join-link.sh hook sample. The browser is a stand-in script that records what it was asked to open.
    @Test func theClickActionOpensTheJoinLinkOfTheMeetingShown() async throws {
        let folder = try NextTests.Folder()
        let start = Int(Date().timeIntervalSince1970) + 1200
        try folder.write(
            "zoom",
            [
                "SUMMARY:Sync", "DTSTART:\(Self.stamp(start))", "DTEND:\(Self.stamp(start + 1800))",
                "LOCATION:https://example.zoom.us/j/81234567890?pwd=abc",
            ])
        let bin = folder.path + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try "#!/bin/sh\nprintf '%s' \"$1\" > \"$(dirname \"$0\")/opened\"\n".write(
            toFile: bin + "/xdg-open", atomically: true, encoding: .utf8)
        chmod(bin + "/xdg-open", 0o755)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [root.path + "/samples/statusbar/join-next.sh", folder.path, "--tz", "UTC"]
        process.environment = [
            "PATH": [bin, CommandLineTests.executable.deletingLastPathComponent().path, "/usr/bin", "/bin"]
                .joined(separator: ":"),
            "HOME": folder.path,
        ]
        try process.run()
        try await offCooperativePool { process.waitUntilExit() }
        #expect(process.terminationStatus == 0)
        try await eventually("the browser to be started") { FileManager.default.fileExists(atPath: bin + "/opened") }
        try await eventually("the link to be written") {
            (try? String(contentsOfFile: bin + "/opened", encoding: .utf8))
                == "https://example.zoom.us/j/81234567890?pwd=abc"
        }
    }
}
