public import CalWatchCore
public import CalWatchRuntime
import Foundation

/// A `type: mqtt` sink: each event published with QoS 1, retained state topics a dashboard reads, and Home
/// Assistant's MQTT discovery (docs/sinks/mqtt.md).
public struct MQTTSettings: SinkDriver, EventFilters {
    public static let type = "mqtt"
    public static let keys = [
        "url", "topic", "username", "passwordCommand", "caFile", "discovery", "on", "kinds", "offsets", "calendars",
    ]
    public var events: Set<EventType>?
    public var kinds: Set<OccurrenceFacts.Kind>?
    public var offsets: Set<Int64>?
    public var calendars: Set<String>?
    /// `mqtt://host:1883` or `mqtts://host:8883` (TLS, verified against the system's authorities or `caFile`).
    public var url: String
    /// Where an event goes: `{instance}` and `{type}` filled in.
    public var topic = "calwatch/{instance}/{type}"
    public var username: String?
    /// The password, as the first line a program prints; never written in config.yml.
    public var passwordCommand: [String]?
    public var caFile: String?
    /// Home Assistant's discovery prefix; `nil`: no discovery messages.
    public var discovery: String? = "homeassistant"
    /// This calwatch's name in topics and discovery (the configuration's `instance`).
    public var instance = "calwatch"

    public init(url: String) {
        self.url = url
    }

    /// What stands between `mqtt://` or `mqtts://` and the path; `nil` for another scheme.
    private var authority: (text: String, tls: Bool)? {
        let tls = url.hasPrefix("mqtts://")
        guard tls || url.hasPrefix("mqtt://") else { return nil }
        return (String(url.dropFirst(tls ? 8 : 7).prefix { $0 != "/" }), tls)
    }

    /// Whether `url` holds a user name or password (`mqtt://user:secret@host`), which would show wherever the
    /// address is shown.
    public var addressHoldsCredentials: Bool { authority?.text.contains("@") ?? false }

    /// Host and port, TLS or not, from `url`; `nil` when it is not an mqtt(s) address or holds credentials.
    public var endpoint: (host: String, port: Int, tls: Bool)? {
        guard let (hostPort, tls) = authority, !hostPort.contains("@") else { return nil }
        if let colon = hostPort.lastIndex(of: ":"), let port = Int(hostPort[hostPort.index(after: colon)...]) {
            let host = String(hostPort[..<colon])
            return host.isEmpty ? nil : (host, port, tls)
        }
        return hostPort.isEmpty ? nil : (hostPort, tls ? 8883 : 1883, tls)
    }

    /// The topic of an event type (its `rawValue`), sanitised: `+`, `#` and NUL never reach a topic.
    public func topic(for type: String) -> String {
        topic.replacingOccurrences(of: "{instance}", with: Self.level(instance))
            .replacingOccurrences(of: "{type}", with: Self.level(type))
    }

    /// A value as one topic level: no `/`, `+`, `#` or controls.
    public static func level(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    "/+#".unicodeScalars.contains(scalar) || scalar.value < 32 ? "_" : scalar
                }))
    }
}

extension MQTTSettings {
    /// `type: mqtt`: the broker, the topic template, credentials (the password from a command), Home Assistant
    /// discovery's prefix (`discovery: false` for none).
    public init?(_ entry: ConfigurationSection) {
        guard let value = entry["url"], let url = value.string() else {
            entry.note("has no `url:`; write the broker's address, such as mqtt://broker.local:1883")
            return nil
        }
        self.init(url: url)
        // A password in the address would be shown wherever the address is; it has keys of its own.
        if addressHoldsCredentials {
            value.note(
                "holds a user name or password; write the address alone, the user in `username:` and the password "
                    + "as a command that prints it (`passwordCommand: [pass, show, mqtt/calwatch]`)")
            return nil
        }
        guard endpoint != nil else {
            value.note("'\(url)' is not a broker's address; write mqtt://host:1883 or mqtts://host:8883")
            return nil
        }
        if let value = entry["topic"], let topic = value.string() {
            if topic.contains("+") || topic.contains("#") || topic.isEmpty || !topic.contains("{type}") {
                value.note("should be a topic with {type} in it and no + or #, such as calwatch/{instance}/{type}")
            } else {
                self.topic = topic
            }
        }
        if let value = entry["username"] { username = value.string() }
        if let value = entry["passwordCommand"] {
            passwordCommand = value.argv(
                example: "[pass, show, mqtt/calwatch]", empty: "name the program that prints the password")
        }
        if let value = entry["caFile"] { caFile = value.filePath() }
        if let value = entry["discovery"] {
            // true or false, or the prefix itself.
            if let on = value.boolIfWritten {
                discovery = on ? "homeassistant" : nil
            } else if let prefix = value.string() {
                discovery = prefix
            }
        }
        entry.filters(into: &self)
    }

    /// Host and port only.
    public var defaultName: String {
        "mqtt:" + (endpoint.map { "\($0.tls ? "mqtts" : "mqtt")://\($0.host):\($0.port)" } ?? "mqtt")
    }

    /// Topics and discovery name this instance, wherever `instance:` stands in the file.
    public mutating func settle(in configuration: Configuration, entry: ConfigurationSection) {
        instance = configuration.instance
    }

    public func open(named name: String, in environment: SinkEnvironment) throws -> any EventSink {
        MQTTSink(settings: self, name: name, logger: environment.logger, version: environment.release)
    }

    /// The broker reached once (nothing published): one that cannot be reached now is a warning, one refusing the
    /// login an error.
    public func check(named name: String, in environment: SinkEnvironment) async -> [SinkFinding] {
        switch await MQTTSink.probe(self) {
        case .success(let found): [.found(found)]
        case .failure(let error) where error.lasting: [.error(error.reason)]
        case .failure(let error): [.warning(error.reason)]
        }
    }

    public var filters: (any EventFilters)? { self }

    public func delivery(of row: JournalStore.Journaled, sink name: String, in lookup: DeliveryLookup) async throws
        -> DecisionTrace.Delivery
    {
        DecisionTrace.Delivery(
            state: "delivered", sink: name, detail: "published to \(topic(for: row.event.type.rawValue))")
    }
}
