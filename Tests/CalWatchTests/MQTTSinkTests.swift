import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRemote
@testable import CalWatchRuntime

/// The MQTT sink against a real broker (Debian's mosquitto on loopback, in a folder of its own) and its own
/// clients (`mosquitto_sub`), through `calwatch replay` as a user runs it.
@Suite struct MQTTSinkTests {
    /// A running mosquitto and the file its log goes to.
    struct Broker {
        let process: Process
        let log: String

        /// Waits until the broker has taken `count` subscriptions in all.
        func subscriptions(_ count: Int) async throws {
            try await eventually("\(count) subscriptions") {
                ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").components(
                    separatedBy: "Received SUBSCRIBE"
                )
                .count - 1 >= count
            }
        }
    }

    /// Starts mosquitto on `port` with its log in `folder`, and waits until it listens.
    static func startBroker(port: Int, folder: String) async throws -> Broker {
        try """
        listener \(port) 127.0.0.1
        allow_anonymous true
        persistence false
        log_dest stderr
        log_type all
        """.write(toFile: folder + "/mosquitto.conf", atomically: true, encoding: .utf8)
        let log = folder + "/mosquitto-\(UUID().uuidString.prefix(6)).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let broker = Process()
        broker.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        broker.arguments = ["-c", folder + "/mosquitto.conf"]
        broker.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        broker.standardError = broker.standardOutput
        try broker.run()
        try await eventually("the broker listening") {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("listen socket on port")
        }
        return Broker(process: broker, log: log)
    }

    /// A broker on a free loopback port, stopped at the end of `body`.
    static func withBroker<T>(
        _ body: (_ port: Int, _ broker: Broker, _ folder: String) async throws -> T
    ) async throws -> T {
        let folder = SinkFixtures.folder()
        // A free port: bound by the kernel's choice, then let go for the broker.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &length) }
        }
        close(probe)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let broker = try await startBroker(port: port, folder: folder)
        defer {
            kill(broker.process.processIdentifier, SIGKILL)
            try? FileManager.default.removeItem(atPath: folder)
        }
        return try await body(port, broker, folder)
    }

    /// A `mosquitto_sub` printing topic, retain flag, QoS and payload of what `topics` receive into `file`.
    static func subscribe(_ topics: [String], port: Int, into file: String, extra: [String] = []) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        process.arguments =
            [
                "-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-F", "%t\t%r\t%q\t%p", "-i",
                "calwatch-test-" + UUID().uuidString.prefix(8),
            ]
            + topics.flatMap { ["-t", $0] } + extra
        _ = FileManager.default.createFile(atPath: file, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    static func received(_ file: String) -> [[String]] {
        ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n")
            .map { $0.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false).map(String.init) }
    }

    @Test func eachEventIsPublishedAndHomeAssistantFindsTheState() async throws {
        try await Self.withBroker { port, broker, folder in
            let watcher = try Self.subscribe(["calwatch/#", "homeassistant/#"], port: port, into: folder + "/all.txt")
            defer { kill(watcher.processIdentifier, SIGKILL) }
            try await broker.subscriptions(1)
            let work = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: work) }
            try FileManager.default.createDirectory(atPath: work + "/cal", withIntermediateDirectories: true)
            try NotifySinkTests.calendar(WebhookSinkTests.items)
                .write(toFile: work + "/cal/items.ics", atomically: true, encoding: .utf8)
            try """
            calendars: [cal]
            timezone: UTC
            instance: test
            reminders: { offsets: [15m, 5m] }
            liveActivity: { lead: 5m, updateEvery: 5m }
            sinks:
              - { type: jsonl, path: events.jsonl }
              - { type: mqtt, url: "mqtt://127.0.0.1:\(port)" }
            """.write(toFile: work + "/config.yml", atomically: true, encoding: .utf8)
            let replay = try await CommandLineTests().calwatch([
                "replay", "--config", work + "/config.yml", "--from", "2027-03-03T09:00:00Z", "--to",
                "2027-03-03T11:00:00Z",
            ])
            #expect(replay.status == 0, "\(replay.errors)")
            let lines = SinkFixtures.lines(work + "/events.jsonl")
            try await slowly("every event and the offline status") {
                Self.received(folder + "/all.txt").filter { $0.first?.hasPrefix("calwatch/test/") == true }.count
                    >= lines.count && Self.received(folder + "/all.txt").contains { $0.last == "offline" }
            }
            let all = Self.received(folder + "/all.txt")
            // Each event once, on its type's topic, its payload the line the JSON Lines sink wrote, with QoS 1.
            let events = all.filter { $0[0].hasPrefix("calwatch/test/") && $0[0].split(separator: "/").count == 3 }
                .filter { !["status", "live", "next", "leave_by"].contains(String($0[0].split(separator: "/")[2])) }
            #expect(events.map { $0[3] } == lines, "\(events.map { $0[0] })")
            for event in events {
                let type = String(event[0].split(separator: "/")[2])
                #expect(event[3].contains(#""type":"calwatch.\#(type)""#) && event[2] == "1", "\(event)")
            }
            // In a meeting during the standup, not after it.
            #expect(
                all.filter { $0[0] == "calwatch/test/live" }.map { $0[3] } == ["OFF", "ON", "OFF"], "\(all.map(\.[0]))")
            // Home Assistant's discovery: three entities, retained, with availability.
            let configs = all.filter { $0[0].hasPrefix("homeassistant/") }
            #expect(
                Set(configs.map { $0[0] }) == [
                    "homeassistant/binary_sensor/calwatch_test_in_meeting/config",
                    "homeassistant/sensor/calwatch_test_next/config",
                    "homeassistant/sensor/calwatch_test_leave_by/config",
                ])
            let meeting = try #require(configs.first { $0[0].contains("in_meeting") })
            let document = try JSONSerialization.jsonObject(with: Data(meeting[3].utf8)) as? [String: Any]
            #expect(document?["state_topic"] as? String == "calwatch/test/live")
            #expect(document?["availability_topic"] as? String == "calwatch/test/status")

            // A dashboard that subscribes afterwards reads the state the broker retained.
            let late = try Self.subscribe(
                ["calwatch/test/live", "calwatch/test/next", "calwatch/test/status"], port: port,
                into: folder + "/late.txt", extra: ["-C", "3", "-W", "20"])
            try await offCooperativePool { late.waitUntilExit() }
            let retained = Dictionary(Self.received(folder + "/late.txt").map { ($0[0], $0) }) { first, _ in first }
            #expect(retained["calwatch/test/live"]?[3] == "OFF" && retained["calwatch/test/live"]?[1] == "1")
            #expect(retained["calwatch/test/status"]?[3] == "offline")
            let next = try JSONSerialization.jsonObject(with: Data((retained["calwatch/test/next"]?[3] ?? "").utf8))
            #expect((next as? [String: Any])?["summary"] as? String == "Standup «Café» ; done", "\(retained)")
        }
    }

    /// The broker down when a batch comes, and stopped between two batches: the delivery fails (the bus keeps the
    /// events in the journal and tries again), and once a broker is back the same sink delivers, each event once.
    @Test func aBrokerThatIsDownOrStoppedGetsTheBatchOnceItIsBack() async throws {
        try await Self.withBroker { port, running, folder in
            let entries = try HookSinkTests.reminders(summary: "Standup", location: "")
            #expect(entries.count >= 3)
            var settings = MQTTSettings(url: "mqtt://127.0.0.1:\(port)")
            settings.instance = "down"
            settings.discovery = nil
            let sink = MQTTSink(settings: settings, name: "mqtt", logger: LogRecorder().logger)
            try await sink.deliver(Array(entries.prefix(1)))
            // The broker stopped: the next batch fails, and keeps failing while it is down.
            kill(running.process.processIdentifier, SIGKILL)
            try await offCooperativePool { running.process.waitUntilExit() }
            let second = Array(entries.dropFirst().prefix(2))
            await #expect(throws: SinkError.self) { try await sink.deliver(second) }
            // Back on the same port: the same sink reconnects (libmosquitto's backoff) and delivers the batch.
            let broker = try await Self.startBroker(port: port, folder: folder)
            defer { kill(broker.process.processIdentifier, SIGKILL) }
            let again = try Self.subscribe(["calwatch/down/reminderDue"], port: port, into: folder + "/again.txt")
            defer { kill(again.processIdentifier, SIGKILL) }
            try await broker.subscriptions(1)
            try await eventually("the batch delivered after the broker came back") {
                do {
                    try await sink.deliver(second)
                    return true
                } catch {
                    return false
                }
            }
            try await slowly("the batch received") { Self.received(folder + "/again.txt").count >= 2 }
            let ids = Self.received(folder + "/again.txt").map { $0[3] }
            #expect(ids == second.map(\.json), "\(ids.count) received")
        }
    }

    /// `check` connects to the broker once, publishing nothing; no broker there is a warning, not an error.
    @Test func checkConnectsToTheBroker() async throws {
        try await Self.withBroker { port, broker, folder in
            for (url, found) in [
                ("mqtt://127.0.0.1:\(port)", "connected to 127.0.0.1:\(port)"), ("mqtt://127.0.0.1:9", "warning"),
            ] {
                try """
                calendars: []
                sinks: [{ type: mqtt, url: "\(url)" }]
                """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
                let check = try await CommandLineTests().calwatch(["check", "--config", folder + "/config.yml"])
                #expect(
                    check.status == 0 && (check.output + check.errors).contains(found), "\(check.output + check.errors)"
                )
            }
            #expect(!((try? String(contentsOfFile: broker.log, encoding: .utf8)) ?? "").contains("Received PUBLISH"))
        }
    }
}
