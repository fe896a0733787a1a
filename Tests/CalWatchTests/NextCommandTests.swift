import Foundation
import Synchronization
import Testing

/// `calwatch next --follow` as a status bar runs it, in real time: the built executable on a folder, its lines read
/// through a pipe as they come.
@Suite struct NextCommandTests {
    /// A running `calwatch next --follow`, its lines with when they arrived.
    final class Follower: Sendable {
        let process: Process
        private let lines = Mutex<[(line: String, at: ContinuousClock.Instant)]>([])

        init(_ arguments: [String]) throws {
            let process = Process()
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
            throw Timeout(what: what)
        }

        /// User plus system CPU time the process has used, in seconds (from /proc).
        var cpuSeconds: Double {
            guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return .nan }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
            return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
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

    @Test func anItemWrittenChangesTheLineAtOnceAndAStartFlipsItToLive() async throws {
        let folder = try NextTests.Folder()
        let follower = try Follower([folder.path, "--tz", "UTC", "--format", "waybar"])
        let first = try await follower.waitFor("the first line") { _ in true }
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

    /// A status bar's process left alone for two minutes: one line at each whole minute and nothing between, and
    /// next to no CPU (the figure goes to BENCHMARKS.md).
    @Test func leftAloneItPrintsOneLineAMinuteAndSleeps() async throws {
        let folder = try NextTests.Folder()
        try folder.write(
            "later", ["SUMMARY:Planning", "DTSTART:20270405T080000Z", "DTEND:20270405T090000Z", "RRULE:FREQ=WEEKLY"])
        // Started, and its lines counted, away from a whole minute, so that a line late on a busy machine is not
        // counted as missing.
        try await Self.waitForSecondOfMinute(15...30)
        let follower = try Follower([folder.path, "--tz", "UTC"])
        _ = try await follower.waitFor("the first line") { _ in true }
        let started = Date()
        let cpuAtStart = follower.cpuSeconds
        try await Task.sleep(for: .seconds(125))
        try await Self.waitForSecondOfMinute(20...59)
        let cpu = follower.cpuSeconds - cpuAtStart
        let lines = follower.all
        let ended = Date()
        try await follower.stop()
        // Whole minutes passed between the start and the end, each one line.
        let minutes = Int(ended.timeIntervalSince1970 / 60) - Int(started.timeIntervalSince1970 / 60)
        #expect(lines.count == 1 + minutes, "\(lines.map(\.line))")
        // A minute apart (give or take a busy machine's delay), not on some other beat.
        for (earlier, later) in zip(lines.dropFirst(), lines.dropFirst(2)) {
            let gap = later.at - earlier.at
            #expect(gap > .seconds(45) && gap < .seconds(75), "lines \(gap) apart")
        }
        #expect(cpu < 0.5, "\(cpu) s of CPU in two minutes")
        print("next --follow, idle for 125 s: \(lines.count) lines, \(cpu) s CPU")
    }
}
