public import CalWatchCore
public import CalWatchRuntime
import Foundation

/// A `type: webhook` sink: an HTTP POST per event in the CloudEvents HTTP binding, signed per the Standard Webhooks
/// specification (docs/sinks/webhook.md).
public struct WebhookSettings: SinkDriver, EventFilters {
    public static let type = "webhook"
    public static let keys = [
        "url", "mode", "batchSize", "preset", "answers", "secretCommand", "secretFile", "secret", "headers", "timeout",
        "on", "kinds", "offsets", "calendars",
    ]
    public var events: Set<EventType>?
    public var kinds: Set<OccurrenceFacts.Kind>?
    public var offsets: Set<Int64>?
    public var calendars: Set<String>?
    /// How the event travels (CloudEvents HTTP binding).
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// The whole event as `application/cloudevents+json`.
        case structured
        /// The event's attributes as `ce-` headers, its `data` as an `application/json` body.
        case binary
        /// The events of a delivery, up to `batchSize`, as one `application/cloudevents-batch+json` array.
        case batch
    }

    /// A push service's own request shape instead of CloudEvents: reminders and flights only, worded for a phone.
    public enum Preset: String, Sendable, Hashable, CaseIterable {
        /// ntfy's JSON publishing (`url` is the topic's address); the secret is an access token.
        case ntfy
        /// Gotify's `POST /message` (`url` is the server's address); the secret is the application's token.
        case gotify
    }

    /// http or https.
    public var url: String
    public var mode = Mode.structured
    public var preset: Preset?
    /// Where the signing secret comes from: the first line a command prints (`[pass, show, webhook]`), or a file's
    /// first line. Never written in config.yml. Without either, requests are not signed.
    public var secretCommand: [String]?
    public var secretFile: String?
    /// Headers added to every request (an `Authorization` a receiver wants, a routing key).
    public var headers: [String: String] = [:]
    /// The whole exchange, seconds.
    public var timeout: Int64 = 10
    /// Events per request in `mode: batch`.
    public var batchSize = 100
    /// Where `calwatch watch` takes answers from a phone (`preset: ntfy`): `nil`, no Snooze and Dismiss buttons.
    public var answers: Answers?

    /// The answer endpoint: ntfy's `http` actions post to `url`, which reaches `calwatch watch` listening on
    /// `host:port` (loopback, behind a reverse proxy, or a LAN address).
    public struct Answers: Sendable, Hashable {
        /// The address the phone posts to, without the `/<answer>/<event id>/<token>` calwatch adds; by default the
        /// local server's own TCP address (`serve: listen:`).
        public var url: String
        /// The Snooze button's duration.
        public var snooze: Int64 = 600

        public init(url: String) {
            self.url = url
        }
    }

    public init(url: String) {
        self.url = url
    }

    /// The address as logs, `why` and the sink's name show it: scheme, host and port, and `/…` for a path, which
    /// many receivers make their secret (a Slack or Discord hook, an ntfy topic).
    public var shownURL: String {
        guard let scheme = url.firstRange(of: "://") else { return "(an address)" }
        let rest = url[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@").last.map(String.init) ?? ""
        return url[..<scheme.upperBound] + host + (rest.count > authority.count ? "/…" : "")
    }
}

extension WebhookSettings {
    /// `type: webhook`: its address, how the event travels, where its signing secret comes from (never
    /// config.yml itself: a `secret:` written there is refused with where to put it instead), headers, a timeout.
    public init?(_ entry: ConfigurationSection) {
        guard let value = entry["url"] else {
            entry.note("has no `url:`; write the receiver's address, such as https://hooks.example.org/calwatch")
            return nil
        }
        guard let url = value.webAddress() else { return nil }
        self.init(url: url)
        if let mode = entry["mode"]?.choice(of: Mode.self) { self.mode = mode }
        if let preset = entry["preset"]?.choice(of: Preset.self) { self.preset = preset }
        if preset != nil, mode != .structured, let value = entry["mode"] {
            value.note(
                "is for CloudEvents receivers; a preset sends each message as its service documents it: leave `mode:` out"
            )
        }
        if let value = entry["answers"] {
            if preset == .ntfy {
                answers = Self.answers(value)
            } else {
                value.note("is for `preset: ntfy`, whose notifications can carry buttons")
            }
        }
        if let size = entry["batchSize"]?.integer(in: 1...1000) { batchSize = size }
        if let value = entry["secret"] {
            value.note(
                "is not read from config.yml, which is often shared and backed up; put the secret in a file of its own "
                    + "(secretFile: ~/.config/calwatch/webhook.secret, mode 0600) or print it from a password manager "
                    + "(secretCommand: [pass, show, calwatch/webhook])")
        }
        if let value = entry["secretCommand"] {
            secretCommand = value.argv(
                example: "[pass, show, calwatch/webhook]", empty: "name the program that prints the secret")
        }
        if let value = entry["secretFile"] { secretFile = value.filePath() }
        if let section = entry["headers"]?.section(known: nil) {
            for header in section.names {
                guard let value = section[header], let text = value.string() else { continue }
                let token = header.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 32 && $0 != ":" }
                if !token || header.isEmpty || text.contains("\r") || text.contains("\n") {
                    value.note("is not a header a request can carry")
                } else {
                    headers[header] = text
                }
            }
        }
        if let seconds = entry["timeout"]?.duration(positive: true, atMost: 300) { timeout = seconds }
        entry.filters(into: &self)
    }

    /// `answers: {url: https://calwatch.example.org/answers, snooze: 10m}`; the buttons post to the local server
    /// (`serve: listen:`). `listen:` here is the earlier spelling of that.
    private static func answers(_ value: ConfigurationValue) -> Answers? {
        guard let section = value.section(known: ["listen", "url", "snooze"]) else { return nil }
        _ = section["listen"]?.offerServeListen()
        var answers = Answers(url: "")
        if let url = section["url"]?.webAddress() { answers.url = url.hasSuffix("/") ? String(url.dropLast()) : url }
        if let seconds = section["snooze"]?.duration(positive: true, atMost: 86_400) { answers.snooze = seconds }
        return answers
    }

    public var defaultName: String { (preset?.rawValue ?? "webhook") + ":" + shownURL }

    /// Two unnamed webhooks on one host are told apart by their whole addresses (hashed, never shown).
    public var distinction: String? { url }

    /// Answers without an address of their own post to the local server's; answers with neither have nowhere to
    /// arrive.
    public mutating func settle(in configuration: Configuration, entry: ConfigurationSection) {
        guard answers != nil else { return }
        let serve = configuration.serve
        if answers?.url == "", let listen = serve.listen {
            answers?.url = (serve.tls == nil ? "http://" : "https://") + "\(listen)"
        }
        guard serve.listen == nil || !serve.enabled, let value = entry["answers"] else { return }
        // One problem is enough for answers whose listen: was refused.
        if let listen = value.section(known: nil)?["listen"]?.text, ServeSettings.loopback(listen) == nil { return }
        value.note(
            serve.enabled
                ? "has nowhere to arrive: write serve: { listen: 127.0.0.1:8788 } for the phone's buttons"
                : "needs the local server, which serve: off turns off")
    }

    public func open(named name: String, in environment: SinkEnvironment) throws -> any EventSink {
        try WebhookSink(
            settings: self, name: name, logger: environment.logger, answerKey: environment.journal + ".answers-key")
    }

    /// The secret read once (never printed): a missing file or a failing command is an error now, not a silent
    /// stop of its deliveries later. The receiver reached once (nothing sent): one that cannot be reached now is a
    /// warning, since the journal keeps its events until it can.
    public func check(named name: String, in environment: SinkEnvironment) async -> [SinkFinding] {
        var findings: [SinkFinding] = []
        if let problem = await WebhookSink.checkSecret(self, name: name) { findings.append(.error(problem)) }
        switch await WebhookSink.probe(self) {
        case .success(let found): findings.append(.found(found))
        case .failure(let error): findings.append(.warning(error.reason))
        }
        return findings
    }

    public var filters: (any EventFilters)? { self }

    /// A 2xx, or a refusal the log names (the journal keeps no answers).
    public func delivery(of row: JournalStore.Journaled, sink name: String, in lookup: DeliveryLookup) async throws
        -> DecisionTrace.Delivery
    {
        DecisionTrace.Delivery(state: "delivered", sink: name, detail: "posted to \(shownURL)")
    }
}
