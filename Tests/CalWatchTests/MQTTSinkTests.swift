import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchMQTT
@testable import CalWatchRemote
@testable import CalWatchRuntime
@testable import CalWatchWebhook

/// The MQTT sink against a real broker (Debian's mosquitto on loopback, in a folder of its own) and its own
/// clients (`mosquitto_sub`), through `calwatch replay` as a user runs it.
@Suite struct MQTTSinkTests {
    /// A running mosquitto and the file its log goes to.
    struct Broker {
        let process: Process
        let log: String

        /// Waits until the broker has taken `count` subscriptions in all from the test's own subscribers (the sink
        /// subscribes to its status topic too, and must not count for them).
        func subscriptions(_ count: Int) async throws {
            try await eventually("\(count) subscriptions") {
                ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").components(
                    separatedBy: "Received SUBSCRIBE from calwatch-test-"
                )
                .count - 1 >= count
            }
        }
    }

    /// Starts mosquitto on `port` with its log in `folder`, and waits until it listens; `extra` lines (another
    /// listener, a password file, persistence) go into its configuration.
    static func startBroker(port: Int, folder: String, extra: String = "") async throws -> Broker {
        // Run as root, mosquitto would become the user `mosquitto`, who cannot read the test's folder.
        try """
        user \(NSUserName())
        listener \(port) 127.0.0.1
        allow_anonymous \(extra.contains("password_file") ? "false" : "true")
        persistence \(extra.contains("persistence_location") ? "true" : "false")
        log_dest stderr
        log_type all
        \(extra)
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
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("mosquitto version")
                && ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains(" running")
        }
        return Broker(process: broker, log: log)
    }

    /// Delivers `batch` through `sink` again and again until the broker that is back takes it; a timeout says why
    /// the last try failed.
    static func deliveredOnceBack(_ batch: [JournalStore.Entry], by sink: MQTTSink) async throws {
        var failure = ""
        do {
            try await eventually("the batch delivered once the broker answers") {
                do {
                    try await sink.deliver(batch)
                    return true
                } catch {
                    failure = "\(error)"
                    return false
                }
            }
        } catch {
            throw ProgramFailure(description: "\(error); the last try: \(failure)")
        }
    }

    /// A broker on a free loopback port, stopped at the end of `body`.
    static func withBroker<T>(
        extra: (_ folder: String) throws -> String = { _ in "" },
        _ body: (_ port: Int, _ broker: Broker, _ folder: String) async throws -> T
    ) async throws -> T {
        let folder = SinkFixtures.folder()
        let port = try RadicaleServer.freePort()
        let broker = try await startBroker(port: port, folder: folder, extra: try extra(folder))
        defer {
            broker.process.signalIfRunning(SIGKILL)
            try? FileManager.default.removeItem(atPath: folder)
        }
        return try await body(port, broker, folder)
    }

    /// A certificate authority made for one test, and a certificate it signed for `localhost` and 127.0.0.1:
    /// `ca.crt`, `server.crt` and `server.key` in `folder`.
    static func testAuthority(in folder: String) throws {
        let script = """
            set -e
            cd "$1"
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.crt \
              -days 2 -subj "/CN=calwatch test CA" 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr \
              -subj "/CN=localhost" 2>/dev/null
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > san.ext
            openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 \
              -extfile san.ext 2>/dev/null
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "sh", folder]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw SinkError(sink: "test", reason: "openssl failed") }
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

    /// A discovery document held to Home Assistant's documented schema (Fixtures/home-assistant-mqtt-discovery.json):
    /// a topic of the documented form, only documented keys (a misspelt one is ignored by Home Assistant without a
    /// word), the required ones, a device it can register (identifiers, with a unique_id), a known device class.
    static func validateDiscovery(topic: String, document text: String) throws {
        let schema = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: fixture("home-assistant-mqtt-discovery.json"))))
                as? [String: Any])
        func keys(_ name: String) -> Set<String> { Set(schema[name] as? [String] ?? []) }
        let pattern = try Regex(schema["topic"] as? String ?? "")
        #expect(topic.wholeMatch(of: pattern) != nil, "\(topic)")
        let component = topic.split(separator: "/")[1]
        let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let allowed = keys("common").union(keys(String(component)))
        #expect(Set(document.keys).subtracting(allowed).isEmpty, "\(topic): \(Set(document.keys).subtracting(allowed))")
        #expect(keys("required").isSubset(of: document.keys), "\(topic)")
        let device = try #require(document["device"] as? [String: Any])
        #expect(Set(device.keys).isSubset(of: keys("device")) && !((device["identifiers"] as? [String]) ?? []).isEmpty)
        #expect(document["unique_id"] is String, "a device needs a unique_id")
        // Where the entity comes from, as Home Assistant logs it: calwatch and its release.
        let origin = try #require(document["origin"] as? [String: Any], "\(topic): no origin")
        #expect(Set(origin.keys).isSubset(of: keys("origin")) && origin["name"] as? String == "calwatch")
        #expect((origin["sw_version"] as? String)?.isEmpty == false && device["sw_version"] != nil)
        if let deviceClass = document["device_class"] as? String {
            let known = keys(component == "sensor" ? "sensorDeviceClasses" : "binarySensorDeviceClasses")
            #expect(known.contains(deviceClass), "\(topic): \(deviceClass)")
        }
    }

    @Test func eachEventIsPublishedAndHomeAssistantFindsTheState() async throws {
        try await Self.withBroker { port, broker, folder in
            let watcher = try Self.subscribe(["calwatch/#", "homeassistant/#"], port: port, into: folder + "/all.txt")
            defer { watcher.signalIfRunning(SIGKILL) }
            try await broker.subscriptions(1)
            let work = try await NotifySinkTests.replay(
                WebhookSinkTests.items,
                """
                instance: test
                reminders: { offsets: [15m, 5m] }
                liveActivity: { lead: 5m, updateEvery: 5m }
                sinks:
                  - { type: jsonl, path: events.jsonl }
                  - { type: mqtt, url: "mqtt://127.0.0.1:\(port)" }
                """, from: "2027-03-03T09:00:00Z", to: "2027-03-03T11:00:00Z")
            defer { try? FileManager.default.removeItem(atPath: work) }
            let lines = SinkFixtures.lines(work + "/events.jsonl")
            try await slowly("every event and the offline status") {
                Self.received(folder + "/all.txt").filter { $0.first?.hasPrefix("calwatch/test/") == true }.count
                    >= lines.count && Self.received(folder + "/all.txt").contains { $0.last == "offline" }
            }
            let all = Self.received(folder + "/all.txt")
            // Each event once, on its type's topic, its payload the line the JSON Lines sink wrote, with QoS 1.
            let events = all.filter { $0[0].hasPrefix("calwatch/test/") && $0[0].split(separator: "/").count == 3 }
                .filter {
                    !["status", "live", "next", "leave_by", "wake_at"].contains(String($0[0].split(separator: "/")[2]))
                }
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
                    "homeassistant/sensor/calwatch_test_wake_at/config",
                ])
            for config in configs { try Self.validateDiscovery(topic: config[0], document: config[3]) }
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
            // What the entities read is what their documents promise: ON/OFF, and JSON with the templated key.
            #expect(["ON", "OFF"].contains(retained["calwatch/test/live"]?[3] ?? ""))
        }
    }

    /// Home Assistant's view of a daemon: available from its start with nothing due, still available after
    /// `calwatch check` (which says nothing on the broker) and after anyone else retains `offline` there, and
    /// unavailable once it stops.
    @Test func homeAssistantSeesTheDaemonAvailableFromItsStartThroughCheckUntilItStops() async throws {
        try await Self.withBroker { port, broker, folder in
            // The standup is in March 2027: nothing is due while the test runs.
            let work = try NotifySinkTests.prepare(
                WebhookSinkTests.items, "instance: ha\nsinks:\n  - { type: mqtt, url: \"mqtt://127.0.0.1:\(port)\" }\n")
            defer { try? FileManager.default.removeItem(atPath: work) }
            let file = folder + "/status.txt"
            let watcher = try Self.subscribe(["calwatch/ha/status", "homeassistant/#"], port: port, into: file)
            defer { watcher.signalIfRunning(SIGKILL) }
            try await broker.subscriptions(1)
            let daemon = try WatchCommandTests.watch(in: work)
            defer { daemon.signalIfRunning(SIGKILL) }
            func statuses() -> [String] { Self.received(file).filter { $0[0] == "calwatch/ha/status" }.map { $0[3] } }
            try await slowly("online and discovered with nothing due") {
                statuses().last == "online" && Self.received(file).contains { $0[0].hasPrefix("homeassistant/") }
            }
            let before = statuses().count
            let check = try await CommandLineTests().calwatch(["check", "--config", work + "/config.yml"])
            #expect(check.output.contains("connected to 127.0.0.1:\(port)"), "\(check.output) \(check.errors)")
            try await Task.sleep(for: .seconds(1))
            #expect(statuses().count == before, "check said something on the status topic: \(statuses())")
            // Anyone else retaining `offline` (a takeover's will, an old calwatch's check) is answered at once.
            let publisher = Process()
            publisher.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
            publisher.arguments = [
                "-h", "127.0.0.1", "-p", "\(port)", "-r", "-t", "calwatch/ha/status", "-m", "offline",
            ]
            try publisher.run()
            try await offCooperativePool { publisher.waitUntilExit() }
            try await slowly("online again") { statuses().count >= before + 2 && statuses().last == "online" }
            kill(daemon.processIdentifier, SIGTERM)
            try await offCooperativePool { daemon.waitUntilExit() }
            #expect(daemon.terminationStatus == 0)
            try await slowly("offline once stopped") { statuses().last == "offline" }
        }
    }

    /// Retained states stop once they have passed: after a replay of a day gone by, "Next event" and "Leave by"
    /// read as nothing (Home Assistant's unknown) rather than a flight long gone.
    @Test func retainedStatesAreClearedOnceTheyHavePassed() async throws {
        try await Self.withBroker { port, broker, folder in
            let watcher = try Self.subscribe(["calwatch/past/#"], port: port, into: folder + "/all.txt")
            defer { watcher.signalIfRunning(SIGKILL) }
            try await broker.subscriptions(1)
            let work = try await NotifySinkTests.replay(
                """
                BEGIN:VEVENT\r
                UID:flight-past@tripit.com\r
                DTSTAMP:20260201T100000Z\r
                DTSTART:20260303T061000Z\r
                DTEND:20260303T080500Z\r
                SUMMARY:BA987 BER to LHR\r
                LOCATION:Berlin (BER)\r
                DESCRIPTION:[Flight] 3/3/2026 British Airways(BA) #987 dep BER 7:10am CET arr LHR 8:05am GMT\r
                END:VEVENT\r

                """,
                """
                instance: past
                reminders: { offsets: [15m] }
                flights: { travelTime: 45m }
                sinks:
                  - { type: jsonl, path: events.jsonl }
                  - { type: mqtt, url: "mqtt://127.0.0.1:\(port)", discovery: false }
                """, from: "2026-03-02T00:00:00Z", to: "2026-03-03T13:00:00Z")
            defer { try? FileManager.default.removeItem(atPath: work) }
            let all = { Self.received(folder + "/all.txt") }
            try await slowly("the states set, then cleared") {
                all().contains { $0[0] == "calwatch/past/leave_by" && $0[3] == "None" }
                    && all().contains { $0[0] == "calwatch/past/next" && $0[3] == MQTTSink.nothingNext }
            }
            #expect(all().contains { $0[0] == "calwatch/past/next" && $0[3].contains("BA987") }, "\(all())")
            #expect(all().contains { $0[0] == "calwatch/past/leave_by" && $0[3].hasPrefix("2026-03-03T") })
            let late = try Self.subscribe(
                ["calwatch/past/next", "calwatch/past/leave_by"], port: port, into: folder + "/late.txt",
                extra: ["-C", "2", "-W", "20"])
            try await offCooperativePool { late.waitUntilExit() }
            let retained = Dictionary(Self.received(folder + "/late.txt").map { ($0[0], $0[3]) }) { first, _ in first }
            #expect(retained == ["calwatch/past/next": MQTTSink.nothingNext, "calwatch/past/leave_by": "None"])
        }
    }

    /// A morning whose first meeting is across town, with time to get ready: the way asked of the routing stand-in
    /// from home, `prepareDue` at the time to leave less `prep`, and Home Assistant's "Get ready at" sensor holding
    /// that instant from the first event about the meeting (here `prepareDue` itself) until the time to leave.
    @Test func aMorningAcrossTownGivesPrepareDueAndTheWakeAtSensor() async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            try await Self.withBroker { port, broker, folder in
                let watcher = try Self.subscribe(
                    ["calwatch/wake/#", "homeassistant/sensor/+/config"], port: port, into: folder + "/all.txt")
                defer { watcher.signalIfRunning(SIGKILL) }
                try await broker.subscriptions(1)
                let work = try await NotifySinkTests.replay(
                    """
                    BEGIN:VEVENT\r
                    UID:client-visit\r
                    DTSTAMP:20260201T100000Z\r
                    DTSTART:20260303T090000Z\r
                    DTEND:20260303T100000Z\r
                    SUMMARY:Client visit\r
                    GEO:52.62;13.40\r
                    END:VEVENT\r

                    """,
                    """
                    instance: wake
                    places:
                      - { name: Home, at: { lat: 52.52, lon: 13.40 } }
                    travel:
                      prep: 45m
                      routing: { engine: osrm, url: "\(server.url("/"))" }
                    reminders: { offsets: [15m], anchor: { event: leaveBy } }
                    liveActivity: { lead: 30m, updateEvery: 15m }
                    sinks:
                      - { type: jsonl, path: events.jsonl }
                      - { type: mqtt, url: "mqtt://127.0.0.1:\(port)" }
                    """, from: "2026-03-03T06:00:00Z", to: "2026-03-03T12:00:00Z")
                defer { try? FileManager.default.removeItem(atPath: work) }
                // 0.1 degrees: 600 s in the stand-in; leave at 08:50, get ready 45 minutes before.
                let events = SinkFixtures.lines(work + "/events.jsonl")
                let prepare = events.filter { $0.contains(#""type":"calwatch.prepareDue""#) }
                #expect(prepare.count == 1, "\(events)")
                #expect(prepare.first?.contains(#""time":"2026-03-03T08:05:00Z""#) == true, "\(prepare)")
                #expect(
                    prepare.first?.contains(
                        #""prepareBy":"2026-03-03T08:05:00Z","prepSeconds":2700,"prepSource":"travel""#) == true)
                // Getting ready comes first, before the live activity (08:20) and the reminder (08:35).
                #expect(events.firstIndex { $0.contains("prepareDue") } == 0, "\(events)")
                let all = { Self.received(folder + "/all.txt") }
                try await slowly("the time to get ready set, then cleared") {
                    all().contains { $0[0] == "calwatch/wake/wake_at" && $0[3] == "None" }
                }
                let states = all().filter { $0[0] == "calwatch/wake/wake_at" }.map { $0[3] }
                #expect(states == ["2026-03-03T08:05:00Z", "None"], "\(states)")
                let config = try #require(all().first { $0[0] == "homeassistant/sensor/calwatch_wake_wake_at/config" })
                try Self.validateDiscovery(topic: config[0], document: config[3])
                #expect(config[3].contains(#""device_class":"timestamp""#))
            }
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
            // The first connection is made as the first batch comes; on a busy machine it may take a try more.
            try await Self.deliveredOnceBack(Array(entries.prefix(1)), by: sink)
            // The broker stopped: the next batch fails, and keeps failing while it is down.
            kill(running.process.processIdentifier, SIGKILL)
            try await offCooperativePool { running.process.waitUntilExit() }
            let second = Array(entries.dropFirst().prefix(2))
            await #expect(throws: SinkError.self) { try await sink.deliver(second) }
            // Back on the same port: the same sink reconnects (libmosquitto's backoff) and delivers the batch.
            let broker = try await Self.startBroker(port: port, folder: folder)
            defer { broker.process.signalIfRunning(SIGKILL) }
            let again = try Self.subscribe(["calwatch/down/reminderDue"], port: port, into: folder + "/again.txt")
            defer { again.signalIfRunning(SIGKILL) }
            try await broker.subscriptions(1)
            try await Self.deliveredOnceBack(second, by: sink)
            try await slowly("the batch received") { Self.received(folder + "/again.txt").count >= 2 }
            let ids = Self.received(folder + "/again.txt").map { $0[3] }
            #expect(ids == second.map(\.json), "\(ids.count) received")
        }
    }

    /// A broker that breaks the protocol (a packet of a reserved type) while the sink waits between batches:
    /// libmosquitto's network thread gives up for good and never reconnects; the sink makes a new client once the
    /// connection has been lost for longer than libmosquitto's reconnecting is waited for, and the next batch reaches
    /// the broker that is back.
    @Test func aBrokerThatBrokeTheProtocolIsReachedAgainByANewClient() async throws {
        try await Self.withBroker { port, running, folder in
            let entries = try HookSinkTests.reminders(summary: "Standup", location: "")
            var settings = MQTTSettings(url: "mqtt://127.0.0.1:\(port)")
            settings.instance = "garbled"
            settings.discovery = nil
            let sink = MQTTSink(
                settings: settings, name: "mqtt", logger: LogRecorder().logger, probing: false,
                lostConnectionWait: 2)
            // The first connection is made as the first batch comes; on a busy machine it may take a try more.
            try await Self.deliveredOnceBack(Array(entries.prefix(1)), by: sink)
            kill(running.process.processIdentifier, SIGKILL)
            try await offCooperativePool { running.process.waitUntilExit() }
            // On the same port, a server that accepts the client's reconnection, then sends a packet of type 0; like
            // a broker, it drops a connection that says nothing for 10 s (and fails after a minute with no client).
            let garbled = Process()
            garbled.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            garbled.arguments = [
                "-c",
                """
                import socket, sys, time
                s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(5); s.settimeout(60)
                while True:
                    c, _ = s.accept(); c.settimeout(10)
                    try:
                        if c.recv(4096): break
                    except socket.timeout:
                        pass
                    c.close()
                c.sendall(bytes([0x20, 2, 0, 0]))
                time.sleep(0.5); c.sendall(bytes([0, 0])); time.sleep(0.5); c.close(); s.close()
                """,
                "\(port)",
            ]
            try garbled.run()
            defer { garbled.signalIfRunning(SIGKILL) }
            // The bus tries a failed batch again, as here every second: libmosquitto's network thread may give up on
            // the lost connection for good (its reconnecting then never reaches the server), and such a try makes
            // a new client that does.
            let first = Array(entries.prefix(1))
            let retries = Task {
                while !Task.isCancelled {
                    try? await sink.deliver(first)
                    try? await Task.sleep(for: .seconds(1))
                }
            }
            try await offCooperativePool { garbled.waitUntilExit() }
            retries.cancel()
            await retries.value
            #expect(garbled.terminationStatus == 0, "the client never came back to the garbling server")
            let broker = try await Self.startBroker(port: port, folder: folder)
            defer { broker.process.signalIfRunning(SIGKILL) }
            let again = try Self.subscribe(["calwatch/garbled/reminderDue"], port: port, into: folder + "/again.txt")
            defer { again.signalIfRunning(SIGKILL) }
            try await broker.subscriptions(1)
            let second = Array(entries.dropFirst().prefix(1))
            try await Self.deliveredOnceBack(second, by: sink)
            try await slowly("the batch received") { Self.received(folder + "/again.txt").count >= 1 }
            #expect(Self.received(folder + "/again.txt").map { $0[3] } == second.map(\.json))
        }
    }

    /// A broker that asks for a password, on a plain listener and on a TLS one with a certificate from a test
    /// authority: the sink logs in and delivers on both, a wrong password is refused for good (and never shown), and
    /// a certificate the configured authority did not sign is not trusted.
    @Test func aBrokerWithAPasswordAndTLSGetsEventsOnlyFromTheRightClient() async throws {
        let tlsPort = try RadicaleServer.freePort()
        let passwordAndTLS = { (folder: String) throws -> String in
            try Self.testAuthority(in: folder)
            let made = Process()
            made.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
            made.arguments = ["-b", "-c", folder + "/passwords", "calwatch", "S3cret-broker"]
            try made.run()
            made.waitUntilExit()
            return """
                password_file \(folder)/passwords
                listener \(tlsPort) 127.0.0.1
                cafile \(folder)/ca.crt
                certfile \(folder)/server.crt
                keyfile \(folder)/server.key
                """
        }
        try await Self.withBroker(extra: passwordAndTLS) { port, broker, folder in
            let entries = Array(try HookSinkTests.reminders(summary: "Standup", location: "").prefix(2))
            try "S3cret-broker\n".write(toFile: folder + "/right", atomically: true, encoding: .utf8)
            try "Wr0ng-broker\n".write(toFile: folder + "/wrong", atomically: true, encoding: .utf8)
            let received = folder + "/received.txt"
            let watcher = try Self.subscribe(
                ["calwatch/#"], port: port, into: received, extra: ["-u", "calwatch", "-P", "S3cret-broker"])
            defer { watcher.signalIfRunning(SIGKILL) }
            try await broker.subscriptions(1)
            func sink(_ url: String, password: String, instance: String, caFile: String? = folder + "/ca.crt")
                -> (MQTTSink, LogRecorder)
            {
                var settings = MQTTSettings(url: url)
                settings.username = "calwatch"
                settings.passwordCommand = ["cat", folder + "/" + password]
                settings.caFile = caFile
                settings.instance = instance
                settings.discovery = nil
                let log = LogRecorder()
                return (MQTTSink(settings: settings, name: "mqtt", logger: log.logger), log)
            }
            for (url, instance) in [("mqtt://127.0.0.1:\(port)", "plain"), ("mqtts://localhost:\(tlsPort)", "tls")] {
                try await sink(url, password: "right", instance: instance).0.deliver(entries)
                try await slowly("\(instance): the events received") {
                    Self.received(received).filter { $0[0] == "calwatch/\(instance)/reminderDue" }.count == 2
                }
                #expect(
                    Self.received(received).filter { $0[0] == "calwatch/\(instance)/reminderDue" }.map { $0[3] }
                        == entries.map(\.json))
                // The wrong password: refused by the broker, said so, never shown, and marked as lasting.
                let (wrong, log) = sink(url, password: "wrong", instance: instance + "-wrong")
                do {
                    try await wrong.deliver(entries)
                    Issue.record("\(instance): delivered with a wrong password")
                } catch let error as SinkError {
                    #expect(error.lasting && error.reason.contains("not authorised"), "\(error)")
                    #expect(!error.reason.contains("Wr0ng") && !log.messages.joined().contains("Wr0ng"))
                }
            }
            // `check` says a refused login is an error (waiting will not mend it), and never shows the password.
            try """
            calendars: []
            sinks: [{ type: mqtt, url: "mqtt://127.0.0.1:\(port)", username: calwatch, passwordCommand: [cat, \(folder)/wrong] }]
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let check = try await CommandLineTests().calwatch(["check", "--config", folder + "/config.yml"])
            #expect(check.status != 0 && check.errors.contains("error: mqtt:"), "\(check.errors)")
            #expect(
                check.errors.contains("not authorised") && !(check.output + check.errors).contains("Wr0ng"),
                "\(check.errors)")
            // TLS against an authority that did not sign the broker's certificate (the system's): no connection.
            let (stranger, _) = sink("mqtts://localhost:\(tlsPort)", password: "right", instance: "x", caFile: nil)
            let refusal = await #expect(throws: SinkError.self) { try await stranger.deliver(entries) }
            #expect(refusal?.reason.contains("certificate verify failed") == true, "\(String(describing: refusal))")
            #expect(!Self.received(received).contains { $0[0].hasPrefix("calwatch/x/") })
        }
    }

    /// The broker stopped for 20 seconds in the middle of a replay of a busy month: the replay waits for it
    /// (`--wait-for-sinks`), and every event the JSON Lines sink wrote reaches a subscriber whose session the broker
    /// keeps. QoS 1 may deliver a message twice (one the broker took but did not acknowledge before it stopped); a
    /// subscriber drops the repeat by the event's `id`, as this one counts them.
    @Test func aBrokerStoppedForTwentySecondsMidReplayLosesNothing() async throws {
        let persistence = { (folder: String) in "persistence_location \(folder)/\nautosave_interval 1\n" }
        try await Self.withBroker(extra: persistence) { port, broker, folder in
            let received = folder + "/received.txt"
            let subscriber = ["-c", "-i", "calwatch-test-outage-subscriber"]
            let watcher = try Self.subscribe(["calwatch/outage/#"], port: port, into: received, extra: subscriber)
            defer { watcher.signalIfRunning(SIGKILL) }
            try await broker.subscriptions(1)
            // Forty meetings a day, every weekday for a month, each with reminders and minute updates.
            var items = ""
            for meeting in 0..<40 {
                let hour = 8 + meeting / 4
                let minute = (meeting % 4) * 15
                items += """
                    BEGIN:VEVENT\r
                    UID:meeting-\(meeting)\r
                    DTSTAMP:20270101T000000Z\r
                    DTSTART:202703\(String(format: "01T%02d%02d00Z", hour, minute))\r
                    DURATION:PT10M\r
                    RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\r
                    SUMMARY:Meeting \(meeting)\r
                    END:VEVENT\r

                    """
            }
            let work = try NotifySinkTests.prepare(
                items,
                """
                instance: outage
                reminders: { offsets: [15m, 5m] }
                liveActivity: { lead: 5m, updateEvery: 1m }
                sinks:
                  - { type: jsonl, path: events.jsonl }
                  - { type: mqtt, url: "mqtt://127.0.0.1:\(port)", discovery: false }
                """)
            defer { try? FileManager.default.removeItem(atPath: work) }
            let replay = Process()
            replay.executableURL = CommandLineTests.executable
            replay.arguments = [
                "replay", "--config", work + "/config.yml", "--from", "2027-03-01", "--to", "2027-04-01",
                "--wait-for-sinks", "2m",
            ]
            replay.currentDirectoryURL = URL(fileURLWithPath: work)
            replay.standardOutput = FileHandle.nullDevice
            _ = FileManager.default.createFile(atPath: work + "/replay.err", contents: nil)
            replay.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: work + "/replay.err"))
            try replay.run()
            defer { replay.signalIfRunning(SIGKILL) }
            // Once the first events are through, the replay is held while the broker stops, then goes on without it.
            // A thread of its own watches for them, so that a busy cooperative pool cannot let the replay finish first.
            let pid = replay.processIdentifier
            let held = try await offCooperativePool {
                let deadline = ContinuousClock.now + .seconds(120)
                while Self.received(received).count < 100, ContinuousClock.now < deadline { usleep(2_000) }
                return kill(pid, SIGSTOP) == 0 && Self.received(received).count >= 100
            }
            try #require(held, "the replay delivered no first events within 2 minutes")
            // What the broker took reaches the subscriber and its saved state (every second) before it is killed;
            // a broker with signals blocked in its network wait may not see a SIGTERM until the next packet.
            try await Task.sleep(for: .seconds(3))
            kill(broker.process.processIdentifier, SIGKILL)
            try await offCooperativePool { broker.process.waitUntilExit() }
            func field(_ name: String, _ json: String) -> String {
                ((try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any])?[name] as? String ?? ""
            }
            func id(_ json: String) -> String { field("id", json) }
            func type(_ json: String) -> String { String(field("type", json).dropFirst("calwatch.".count)) }
            func events() -> [String] {
                Self.received(received).filter { $0[0] == "calwatch/outage/" + type($0[3]) }.map { id($0[3]) }
            }
            // Events only (not the retained state topics): what got through before the stop.
            let beforeTheStop = Set(events()).count
            kill(replay.processIdentifier, SIGCONT)
            try await Task.sleep(for: .seconds(20))
            let restarted = try await Self.startBroker(port: port, folder: folder, extra: persistence(folder))
            defer { restarted.process.signalIfRunning(SIGKILL) }
            try await offCooperativePool { replay.waitUntilExit() }
            let said = (try? String(contentsOfFile: work + "/replay.err", encoding: .utf8)) ?? ""
            #expect(replay.terminationStatus == 0, "\(said)")
            #expect(said.contains("mqtt:") && said.contains("(retrying)"), "\(said)")

            let lines = SinkFixtures.lines(work + "/events.jsonl")
            // The stop came mid-stream: events were still to be delivered after it (the retries above say it hit).
            #expect(lines.count > beforeTheStop, "\(lines.count) events, \(beforeTheStop) before the stop")
            try await slowly("every event received") { Set(events()).count >= lines.count }
            let ids = events()
            let missing = Set(lines.map(id)).subtracting(ids)
            let unknown = Set(ids).subtracting(lines.map(id))
            #expect(missing.isEmpty && unknown.isEmpty, "\(missing.count) missing, \(unknown.count) not written")
            // The sink said `online` again on its new connection (not only the broker's retained copy).
            let online = Self.received(received).filter { $0[0] == "calwatch/outage/status" && $0[1] == "0" }
            #expect(online.filter { $0[3] == "online" }.count >= 2, "\(online)")
            print("MQTT outage: \(lines.count) events, \(ids.count - Set(ids).count) delivered twice and dropped by id")
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
