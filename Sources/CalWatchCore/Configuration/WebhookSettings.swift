/// A `type: webhook` sink: an HTTP POST per event in the CloudEvents HTTP binding, signed per the Standard Webhooks
/// specification (docs/sinks/webhook.md).
public struct WebhookSettings: Sendable, Hashable, EventFilters {
    public var events: Set<EventType>?
    public var kinds: Set<PlanningFacts.Kind>?
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
