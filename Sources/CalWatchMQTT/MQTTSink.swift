import CMosquitto
public import CalWatchCore
public import CalWatchRuntime
import Foundation
public import Logging

/// Events over MQTT (`type: mqtt`, docs/sinks/mqtt.md), through libmosquitto: each event's CloudEvent JSON
/// published with QoS 1 to `calwatch/<instance>/<type>`, and retained topics a dashboard reads at any time:
/// whether a meeting is live now, the occurrence of the latest reminder, the latest time to leave, and the sink's
/// availability (`online`, and `offline` as the broker's last will). With `discovery`, Home Assistant finds a
/// binary sensor "In a meeting" and sensors "Next event" and "Leave by" under `homeassistant/…`.
///
/// A batch is delivered once the broker has acknowledged every message of it (PUBACK); a broker that is down or
/// slow fails the delivery and the bus tries again from the journal (at least once: a subscriber drops a repeat by
/// the event's `id`). libmosquitto's own thread keeps the connection and reconnects; waiting for acknowledgements
/// parks the sink's thread, never one of the cooperative pool.
public actor MQTTSink: EventSink {
    private let executor = BlockingExecutor(name: "calwatch-mqtt-sink")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    public nonisolated let name: String
    private let settings: MQTTSettings
    private let logger: Logger
    /// calwatch's release, in the discovery documents (`origin`, and the device's `sw_version`).
    private let version: String
    /// `check`'s probe: a client id of its own (a broker drops an older client of the same id, which would send the
    /// daemon's will) and no will or status, so that it says nothing a dashboard reads.
    private let probing: Bool
    private let now: @Sendable () -> Timestamp
    /// How long a lost connection is left to libmosquitto's own reconnecting (seconds): longer than its longest
    /// wait between two tries, 10 s.
    let lostConnectionWait: Double
    private var client: UnsafeMutablePointer<cw_mqtt>?
    /// Live activities in progress, by subject: a meeting among them is "in a meeting".
    private var live: [String: OccurrenceFacts.Kind] = [:]
    /// The connection (libmosquitto's count) on which the availability, discovery and state were last published:
    /// a broker restarted, or one that sent the last will when the connection dropped, hears them again.
    private var announcedOn = 0
    /// When the retained states stop being true: the end of the occurrence `next` names, and the start of the one
    /// `leave_by` is for (leaving after it has started is no longer the question).
    private var nextEnds: Instant?
    private var leaveByUntil: Instant?
    /// When the retained `wake_at` (the time to get ready) stops being true: the time to leave it is for.
    private var wakeAtUntil: Instant?
    /// Whose time to get ready `wake_at` holds, and which: a moved time of the same occurrence replaces it, the
    /// same time is not said again.
    private var wakeAt: (subject: String, instant: Instant)?

    public init(
        settings: MQTTSettings, name: String, logger: Logger, version: String = "unknown",
        now: @escaping @Sendable () -> Timestamp = { .now }
    ) {
        self.init(settings: settings, name: name, logger: logger, version: version, probing: false, now: now)
    }

    init(
        settings: MQTTSettings, name: String, logger: Logger, version: String = "unknown", probing: Bool,
        now: @escaping @Sendable () -> Timestamp = { .now }, lostConnectionWait: Double = 30
    ) {
        self.lostConnectionWait = lostConnectionWait
        self.settings = settings
        self.name = name
        self.logger = logger
        self.version = version
        self.probing = probing
        self.now = now
    }

    /// Says `offline` (a clean disconnect sends no last will), waiting up to a second for the broker to take it.
    isolated deinit {
        guard let client else { return }
        if announcedOn > 0 {
            cw_mqtt_set_leaving(client)
            try? publish([(base + "/status", "offline", true)], on: client, within: .seconds(1))
        }
        cw_mqtt_free(client)
    }

    /// Connects at start, so that a dashboard sees the daemon available (and its discovery) before anything is due,
    /// then clears each retained state once it has passed, until the bus stops. A broker that cannot be reached now
    /// is left to the deliveries' retries.
    public func run(_ context: SinkContext) async {
        if !probing, !context.isStopped, let (client, connection) = try? await connected(), connection != announcedOn {
            var messages = announcements()
            messages.append((base + "/live", live.values.contains(.meeting) ? "ON" : "OFF", true))
            if (try? publish(messages, on: client)) != nil { announcedOn = connection }
        }
        while !context.isStopped {
            let wake = [nextEnds, leaveByUntil, wakeAtUntil].compactMap { $0 }.min()
            let left = wake.map { $0.secondsSinceEpoch - now().instant.secondsSinceEpoch } ?? 60
            await withTaskGroup(of: Void.self) { race in
                race.addTask { try? await Task.sleep(for: .seconds(min(60, max(1, left)))) }
                race.addTask { await context.stopped() }
                await race.next()
                race.cancelAll()
            }
            let instant = now().instant
            let passed = passedStates(at: instant)
            // Not taken now: said again at the next wake.
            if !passed.isEmpty, let client, (try? publish(passed, on: client)) != nil {
                forgetStates(passedBy: instant)
            }
        }
    }

    /// The retained states that have passed by `instant`, as the messages that clear them (Home Assistant shows a
    /// state whose value renders `None` as unknown).
    private func passedStates(at instant: Instant) -> [(topic: String, payload: String, retain: Bool)] {
        var messages: [(topic: String, payload: String, retain: Bool)] = []
        if let ends = nextEnds, ends <= instant { messages.append((base + "/next", Self.nothingNext, true)) }
        if let until = leaveByUntil, until <= instant { messages.append((base + "/leave_by", "None", true)) }
        if let until = wakeAtUntil, until <= instant { messages.append((base + "/wake_at", "None", true)) }
        return messages
    }

    /// Forgets the states cleared once the broker took what cleared them.
    private func forgetStates(passedBy instant: Instant) {
        if let ends = nextEnds, ends <= instant { nextEnds = nil }
        if let until = leaveByUntil, until <= instant { leaveByUntil = nil }
        if let until = wakeAtUntil, until <= instant { wakeAtUntil = nil }
    }

    /// The `next` state when nothing is next: JSON, as the entity's template reads it, whose summary is null.
    static let nothingNext = #"{"summary":null}"#

    private var base: String { "calwatch/" + MQTTSettings.level(settings.instance) }

    public func deliver(_ batch: [JournalStore.Entry]) async throws {
        let (client, connection) = try await connected()
        var messages: [(topic: String, payload: String, retain: Bool)] = []
        let announcing = connection != announcedOn
        if announcing { messages += announcements() }
        /// "In a meeting" as it is now; published when it changes, so a replay's batch shows each change too.
        var inMeeting = live.values.contains(.meeting)
        if announcing { messages.append((base + "/live", inMeeting ? "ON" : "OFF", true)) }
        for entry in batch {
            // The filters choose the events published; the state topics follow every event.
            if settings.accepts(entry) {
                messages.append((settings.topic(for: entry.event.type.rawValue), entry.json, false))
            }
            switch entry.event.payload {
            case .liveActivityStart(let detail), .liveActivityUpdate(let detail):
                if detail.phase != .upcoming { live[entry.event.subject] = entry.facts.kind }
            case .liveActivityEnd:
                live[entry.event.subject] = nil
            case .reminderDue:
                messages.append((base + "/next", Self.next(entry), true))
                nextEnds = entry.occurrence?.end
                if let leave = entry.facts.leave {
                    messages.append((base + "/leave_by", "\(leave.by)", true))
                    leaveByUntil = entry.occurrence?.start ?? leave.by
                }
            default:
                break
            }
            // The time to get ready, from the first event about the occurrence that knows it (a flight detected,
            // a live activity, a reminder, at the latest its `prepareDue`), until the time to leave; a nearer one
            // takes its place.
            if let leave = entry.facts.leave, let wake = leave.prepareBy, entry.event.time < leave.by {
                let standing = wakeAtUntil.map { $0 > entry.event.time } ?? false
                let replaces =
                    !standing || wakeAt?.subject == entry.event.subject || leave.by <= (wakeAtUntil ?? leave.by)
                if replaces && (!standing || wakeAt?.instant != wake) {
                    messages.append((base + "/wake_at", "\(wake)", true))
                    wakeAtUntil = leave.by
                    wakeAt = (entry.event.subject, wake)
                }
            }
            if live.values.contains(.meeting) != inMeeting {
                inMeeting.toggle()
                messages.append((base + "/live", inMeeting ? "ON" : "OFF", true))
            }
        }
        // A replay of days gone by leaves no state standing that has passed.
        let instant = now().instant
        messages += passedStates(at: instant)
        do {
            try publish(messages, on: client)
        } catch {
            // What libmosquitto still holds of this batch would be sent again on its reconnect, and once more by
            // the bus's retry: a fresh client next time sends each message once more at most.
            discard()
            throw error
        }
        announcedOn = connection
        forgetStates(passedBy: instant)
    }

    /// The client, opened on first use, and which connection of it is up; throws while the broker has not
    /// accepted one.
    private func connected() async throws -> (UnsafeMutablePointer<cw_mqtt>, Int) {
        if client == nil {
            guard let endpoint = settings.endpoint else { throw SinkError(sink: name, reason: "no broker address") }
            var password: String?
            if let command = settings.passwordCommand {
                do {
                    password = try await PasswordCommand.run(command)
                } catch {
                    throw SinkError(sink: name, reason: "no password: \(error)", lasting: true)
                }
            }
            var error: Int32 = 0
            let identifier =
                "calwatch-" + MQTTSettings.level(settings.instance) + (probing ? "-check-\(getpid())" : "")
            guard
                let made = cw_mqtt_new(
                    identifier, settings.username, password, endpoint.tls ? 1 : 0, settings.caFile,
                    probing ? nil : base + "/status", &error)
            else {
                throw SinkError(sink: name, reason: "cannot make an MQTT client: \(Self.words(error))")
            }
            let status = cw_mqtt_start(made, endpoint.host, Int32(endpoint.port))
            guard status == 0 else {
                let said = Self.lastError(made)
                cw_mqtt_free(made)
                throw SinkError(
                    sink: name,
                    reason: "cannot reach \(endpoint.host):\(endpoint.port): \(Self.words(status))"
                        + (said.isEmpty ? "" : " (\(said))"))
            }
            client = made
        }
        guard let client else { throw SinkError(sink: name, reason: "no client") }
        // The first connection takes a moment: up to a few seconds here, then the bus's retries.
        var connection = 0
        var downFor = 0.0
        for _ in 0..<300 {
            var connected: Int32 = 0
            var refused: Int32 = 0
            cw_mqtt_state(client, &connected, &refused, &connection, &downFor)
            if connected != 0 { return (client, connection) }
            if refused != 0 {
                discard()
                throw SinkError(
                    sink: name,
                    reason: "the broker refused the connection: \(String(cString: mosquitto_connack_string(refused)))",
                    lasting: true)
            }
            usleep(10_000)
        }
        let said = Self.lastError(client)
        // libmosquitto tries again on its own only after a connection it once had; a client that never got one
        // (the broker was down when it was made) is made anew on the next try. Its network thread also gives up for
        // good after some errors (a packet it does not know from the server): a connection lost for longer than
        // libmosquitto's longest wait between tries (10 s) and a margin is not waited for any more.
        if connection == 0 || downFor > lostConnectionWait { discard() }
        throw SinkError(
            sink: name, reason: "not connected to the broker (yet)" + (said.isEmpty ? "" : ": " + said))
    }

    /// Lets the client go (what it still holds unsent with it): the next delivery makes a new one.
    private func discard() {
        if let client { cw_mqtt_free(client) }
        client = nil
        announcedOn = 0
    }

    /// libmosquitto's last error message (a certificate not trusted, say); empty when there was none.
    private static func lastError(_ client: UnsafeMutablePointer<cw_mqtt>) -> String {
        var said = [CChar](repeating: 0, count: 256)
        cw_mqtt_last_error(client, &said, said.count)
        return String(decoding: said.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Publishes every message with QoS 1 and waits until the broker has acknowledged each of them (by message id:
    /// an earlier batch's message resent after a reconnect is acknowledged too, and does not count for this one).
    /// A connection lost meanwhile fails the batch at once; libmosquitto keeps what it had in flight.
    private func publish(
        _ messages: [(topic: String, payload: String, retain: Bool)], on client: UnsafeMutablePointer<cw_mqtt>,
        within limit: Duration = .seconds(10)
    ) throws {
        var waiting = Set<Int32>()
        for message in messages {
            let bytes = Array(message.payload.utf8)
            var id: Int32 = 0
            let status = cw_mqtt_publish(
                client, message.topic, bytes, Int32(bytes.count), message.retain ? 1 : 0, &id)
            guard status == 0 else {
                throw SinkError(sink: name, reason: "cannot publish to \(message.topic): \(Self.words(status))")
            }
            waiting.insert(id)
        }
        var acknowledged = [Int32](repeating: 0, count: 1024)
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            while case let taken = cw_mqtt_take_acks(client, &acknowledged, Int32(acknowledged.count)), taken > 0 {
                for id in acknowledged.prefix(Int(taken)) { waiting.remove(id) }
            }
            if waiting.isEmpty { return }
            var connected: Int32 = 0
            var refused: Int32 = 0
            var connection = 0
            var downFor = 0.0
            cw_mqtt_state(client, &connected, &refused, &connection, &downFor)
            if connected == 0 {
                throw SinkError(
                    sink: name,
                    reason: "the broker went away before acknowledging \(waiting.count) of \(messages.count) messages")
            }
            usleep(2_000)
        }
        throw SinkError(
            sink: name,
            reason: "the broker did not acknowledge \(waiting.count) of \(messages.count) messages within \(limit)")
    }

    /// What `check` says of the broker: connected (with the credentials configured), refused, or not reached within
    /// five seconds. Nothing is published, not even a will: its client has an id of its own.
    public static func probe(_ settings: MQTTSettings) async -> Result<String, SinkError> {
        let sink = MQTTSink(
            settings: settings, name: "mqtt", logger: Logger(label: "calwatch.check"), version: "", probing: true,
            now: { .now })
        return await sink.probeConnection()
    }

    private func probeConnection() async -> Result<String, SinkError> {
        do {
            _ = try await connected()
            return .success("connected to \(settings.endpoint.map { "\($0.host):\($0.port)" } ?? "?")")
        } catch let error as SinkError {
            return .failure(error)
        } catch {
            return .failure(SinkError(sink: name, reason: "\(error)"))
        }
    }

    /// The retained availability, and Home Assistant's discovery documents for the three entities.
    private func announcements() -> [(topic: String, payload: String, retain: Bool)] {
        var messages = [(base + "/status", "online", true)]
        guard let prefix = settings.discovery else { return messages }
        let id = "calwatch_" + MQTTSettings.level(settings.instance).replacingOccurrences(of: "-", with: "_")
        let device = Discovery.Device(
            identifiers: [id], name: "calwatch \(settings.instance)", manufacturer: "calwatch", swVersion: version)
        func entity(_ suffix: String, _ name: String, state: String, icon: String) -> Discovery {
            Discovery(
                name: name, uniqueId: id + "_" + suffix, stateTopic: base + "/" + state, icon: icon,
                availabilityTopic: base + "/status", device: device,
                origin: Discovery.Origin(name: "calwatch", swVersion: version))
        }
        var inMeeting = entity("in_meeting", "In a meeting", state: "live", icon: "mdi:account-voice")
        (inMeeting.payloadOn, inMeeting.payloadOff) = ("ON", "OFF")
        var next = entity("next", "Next event", state: "next", icon: "mdi:calendar-clock")
        next.valueTemplate = "{{ value_json.summary }}"
        next.jsonAttributesTopic = base + "/next"
        var leaveBy = entity("leave_by", "Leave by", state: "leave_by", icon: "mdi:car-clock")
        leaveBy.deviceClass = "timestamp"
        var wakeAt = entity("wake_at", "Get ready at", state: "wake_at", icon: "mdi:alarm")
        wakeAt.deviceClass = "timestamp"
        for (component, document) in [
            ("binary_sensor", inMeeting), ("sensor", next), ("sensor", leaveBy), ("sensor", wakeAt),
        ] {
            messages.append(("\(prefix)/\(component)/\(document.uniqueId)/config", Self.json(document), true))
        }
        return messages
    }

    /// The occurrence a reminder is about, as the "next event" state: its summary, start, kind and link.
    static func next(_ entry: JournalStore.Entry) -> String {
        json(
            NextState(
                summary: ReminderText.title(entry), kind: entry.facts.kind.rawValue,
                start: entry.occurrence.map { "\($0.start)" }, end: entry.occurrence.map { "\($0.end)" },
                link: ReminderText.link(entry)))
    }

    /// The "next event" state's document.
    struct NextState: Encodable {
        var summary: String
        var kind: String
        var start: String?
        var end: String?
        var link: String?
    }

    /// Home Assistant's MQTT discovery document for one entity
    /// (https://www.home-assistant.io/integrations/mqtt/#discovery-messages); keys in snake case.
    struct Discovery: Encodable {
        var name: String
        var uniqueId: String
        var stateTopic: String
        var icon: String
        var availabilityTopic: String
        var device: Device
        var origin: Origin
        var payloadOn: String?
        var payloadOff: String?
        var valueTemplate: String?
        var jsonAttributesTopic: String?
        var deviceClass: String?

        struct Device: Encodable {
            var identifiers: [String]
            var name: String
            var manufacturer: String
            var swVersion: String
        }

        struct Origin: Encodable {
            var name: String
            var swVersion: String
        }
    }

    /// A document as JSON: keys in snake case and sorted, absent values left out, slashes as they are.
    static func json(_ document: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(document)) ?? Data(), as: UTF8.self)
    }

    private static func words(_ status: Int32) -> String { String(cString: mosquitto_strerror(status)) }
}
