import Foundation

/// A `type: mqtt` sink: each event published with QoS 1, retained state topics a dashboard reads, and Home
/// Assistant's MQTT discovery (docs/sinks/mqtt.md).
public struct MQTTSettings: Sendable, Hashable, EventFilters {
    public var events: Set<EventType>?
    public var kinds: Set<PlanningFacts.Kind>?
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
