public import CalWatchCore
import CalWatchRemote
public import CalWatchRuntime
import Crypto
import Foundation
public import Logging

/// Events as HTTP POSTs (`type: webhook`, docs/sinks/webhook.md): one request per event in the CloudEvents HTTP
/// binding, structured (`application/cloudevents+json`) or binary (`ce-` headers), or arrays of events (`mode:
/// batch`, `application/cloudevents-batch+json`), signed per the Standard Webhooks
/// specification: `webhook-id` (the event's id, the same on every attempt, for the receiver to drop a repeat),
/// `webhook-timestamp` and `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`).
///
/// Delivery goes through the journal like every sink: a 2xx answer delivers the event; 408, 429, 5xx and no answer
/// at all fail the delivery, and the bus tries again from the journal (no sooner than a `Retry-After` asks) until
/// the event's `expirytime`, after which it is dropped with a warning; any other answer is the receiver refusing
/// the event, logged once with its status and first line, and not tried again. Redirects are not followed: the
/// signature and headers were meant for the address configured. TLS is always verified.
public actor WebhookSink: EventSink {
    /// Its own thread: the secret file is read here, never on the cooperative pool (requests wait off it anyway).
    private let executor = BlockingExecutor(name: "calwatch-webhook-sink")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    public nonisolated let name: String
    private let settings: WebhookSettings
    private let url: URL
    private let logger: Logger
    private let now: @Sendable () -> Timestamp
    /// The signing key, read once (`nil`: not signed); for a preset the secret is the service's token instead.
    private var key: SymmetricKey?
    private var token: String?
    private var keyRead = false
    /// The answer endpoint's key file, and the key once read: Snooze and Dismiss buttons carry tokens made with it.
    private let answerKeyPath: String?
    private var answerKey: SymmetricKey?
    /// Events of the current batch already delivered, when a later one in it failed: not sent again.
    private var deliveredThrough: Int64 = 0
    /// No request before this (a `Retry-After`).
    private var notBefore: Timestamp?
    /// The event whose delivery failed, and how many times: past its expiry and three attempts, it is dropped (a
    /// replay delivers events long past, so expiry alone never drops one untried).
    private var failing: (sequence: Int64, attempts: Int)?

    /// Throws when `settings.url` is not an address (the configuration reader refuses one first). `answerKey` is the
    /// answer endpoint's key file (`AnswerKey`), for `answers:` on an ntfy preset.
    public init(
        settings: WebhookSettings, name: String, logger: Logger, answerKey: String? = nil,
        now: @escaping @Sendable () -> Timestamp = { .now }
    ) throws(SinkError) {
        guard let url = URL(string: settings.url) else { throw SinkError(sink: name, reason: "not an address") }
        self.answerKeyPath = answerKey
        self.settings = settings
        self.name = name
        self.logger = logger
        self.now = now
        self.url = url
    }

    public func deliver(_ batch: [JournalStore.Entry]) async throws {
        if let notBefore, now() < notBefore {
            let left = notBefore.millisecondsSinceEpoch - now().millisecondsSinceEpoch
            throw SinkError(
                sink: name, reason: "the receiver asked to wait until \(notBefore) (Retry-After)",
                retryAfter: .milliseconds(left))
        }
        notBefore = nil
        let key = try await signingKey()
        // A request per event, or per `batchSize` events in `mode: batch`; events the filters leave out are passed.
        let size = settings.mode == .batch && settings.preset == nil ? settings.batchSize : 1
        let waiting = batch.filter { $0.sequence > deliveredThrough }
        var start = 0
        while start < waiting.count {
            var group: [JournalStore.Entry] = []
            var end = start
            while end < waiting.count, group.count < size {
                if settings.accepts(waiting[end]) { group.append(waiting[end]) }
                end += 1
            }
            let last = waiting[end - 1].sequence
            start = end
            guard let first = group.first else {
                deliveredThrough = last
                continue
            }
            let id = first.event.id.description
            let what = group.count == 1 ? "event \(id)" : "\(group.count) events from \(id)"
            if let failing, failing.sequence == first.sequence, failing.attempts >= 3,
                group.allSatisfy({ Timestamp($0.event.expiry) < now() })
            {
                logger.warning(
                    "\(name): \(what) expired before the receiver took it; dropped",
                    metadata: ["sink.name": "\(name)", "event.id": "\(id)"])
                deliveredThrough = last
                self.failing = nil
                continue
            }
            do {
                if let request = request(for: group, key: key) { try await send(request, what: what, id: id) }
            } catch {
                let attempts = failing?.sequence == first.sequence ? failing!.attempts + 1 : 1
                failing = (first.sequence, attempts)
                throw error
            }
            failing = nil
            deliveredThrough = last
        }
    }

    /// The request for one event (a preset's push, or a CloudEvent), or for a group in `mode: batch`; `nil` for an
    /// event a preset does not push (live-activity updates, answers).
    private func request(for group: [JournalStore.Entry], key: SymmetricKey?) -> HTTPClient.Request? {
        let first = group[0]
        if let preset = settings.preset {
            let answers = settings.answers.flatMap { answers in answerKey.map { (answers, $0) } }
            return Self.push(
                first, preset: preset, to: url, token: token, headers: settings.headers, answers: answers)
        }
        var id = first.event.id.description
        var headers = settings.headers
        var body = Data(first.json.utf8)
        switch settings.mode {
        case .structured:
            headers["Content-Type"] = "application/cloudevents+json; charset=utf-8"
        case .binary:
            // The attributes as `ce-` headers (percent-encoded where not plain ASCII), the data as the body.
            let (attributes, data) = CloudEventJSON.binary(
                first.event, occurrence: first.occurrence, facts: first.facts, sequence: first.sequence,
                recordedTime: first.recorded)
            for (attribute, value) in attributes {
                headers["ce-" + attribute] =
                    value.addingPercentEncoding(withAllowedCharacters: Self.headerSafe) ?? value
            }
            headers["Content-Type"] = "application/json"
            body = Data(data)
        case .batch:
            // `webhook-id`: the first event's id and the count, the same when the same events are sent again; a
            // retry may group them differently, so a receiver drops a repeat by each event's own `id`.
            id += "-\(group.count)"
            headers["Content-Type"] = "application/cloudevents-batch+json; charset=utf-8"
            body = Data(("[" + group.map(\.json).joined(separator: ",") + "]").utf8)
        }
        return signed(body, id: id, headers: headers, key: key)
    }

    /// A POST of `body` with the Standard Webhooks headers: `webhook-id`, `webhook-timestamp`, and with a key
    /// `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`).
    private func signed(_ body: Data, id: String, headers: [String: String], key: SymmetricKey?) -> HTTPClient.Request {
        var headers = headers
        let timestamp = now().millisecondsSinceEpoch / 1000
        headers["webhook-id"] = id
        headers["webhook-timestamp"] = "\(timestamp)"
        if let key {
            var signed = Data("\(id).\(timestamp).".utf8)
            signed.append(body)
            let mac = HMAC<Crypto.SHA256>.authenticationCode(for: signed, using: key)
            headers["webhook-signature"] = "v1," + Data(mac).base64EncodedString()
        }
        return HTTPClient.Request(method: "POST", url: url, headers: headers, body: body)
    }

    /// A reminder or a flight as ntfy or Gotify documents a message (title, text, priority, a link to open);
    /// `nil` for the events a phone should not buzz for.
    static func push(
        _ entry: JournalStore.Entry, preset: WebhookSettings.Preset, to url: URL, token: String?,
        headers: [String: String], answers: (WebhookSettings.Answers, SymmetricKey)? = nil
    ) -> HTTPClient.Request? {
        let title: String
        let urgent: Bool
        var message = ReminderText.details(entry).joined(separator: " · ")
        var link = ReminderText.link(entry)
        var joins = entry.facts.meeting != nil
        switch entry.event.payload {
        case .reminderDue:
            let headline = ReminderText.headline(entry)
            title = headline.text
            urgent = ReminderText.isUrgent(entry, secondsLeft: headline.secondsLeft)
        case .flightDetected:
            title = "Flight " + ReminderText.title(entry)
            urgent = false
        case .flightChanged:
            title = ReminderText.flightChanged(entry) ?? "Flight " + ReminderText.title(entry)
            urgent = true
        case .prepareDue:
            title = ReminderText.prepare(entry)
            urgent = true
        case .conflictDetected, .overrunDetected, .invitationPending, .agendaDue:
            guard let day = ReminderText.day(entry) else { return nil }
            title = day.title
            message = day.details.joined(separator: entry.event.type == .agendaDue ? "\n" : " · ")
            link = day.link
            joins = true
            urgent = entry.event.type == .overrunDetected
        case .accountSignInNeeded:
            guard let account = ReminderText.account(entry) else { return nil }
            title = account.title
            message = account.details.joined(separator: "\n")
            link = account.link
            joins = false
            urgent = true
        default:
            return nil
        }
        // A flight detected is news, not a call to act; a flight changed is urgent, and tagged as a flight too.
        let flight = entry.event.type == .flightDetected
        let airplane = flight || entry.event.type == .flightChanged
        var headers = headers
        headers["Content-Type"] = "application/json"
        let body: Data
        var address = url
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        switch preset {
        case .ntfy:
            // JSON publishing: to the server's root, the topic in the body (https://docs.ntfy.sh/publish/#publish-as-json).
            address = url.deletingLastPathComponent()
            var document = NtfyMessage(
                topic: url.lastPathComponent, title: title, message: message.isEmpty ? title : message,
                priority: flight ? 2 : urgent ? 4 : 3,
                tags: [airplane ? "airplane" : entry.event.account != nil ? "key" : "calendar"])
            var actions: [NtfyMessage.Action] = []
            if let link {
                document.click = link
                actions.append(
                    NtfyMessage.Action(
                        action: "view", label: entry.event.account != nil ? "Sign in" : joins ? "Join" : "Open",
                        url: link))
            }
            // Snooze and Dismiss through the answer endpoint (https://docs.ntfy.sh/publish/#send-http-request):
            // at most three actions in all, and only for a reminder.
            if let (answers, key) = answers, entry.event.type == .reminderDue {
                let id = entry.event.id.description
                for (kind, label) in [
                    (JournalStore.Answer.Kind.snooze, "Snooze \(DurationText.text(answers.snooze))"),
                    (.dismiss, "Dismiss"),
                ] {
                    actions.append(
                        NtfyMessage.Action(
                            action: "http", label: label,
                            url: answers.url + "/" + AnswerKey.path(kind, event: id, key: key), method: "POST",
                            clear: true))
                }
            }
            if !actions.isEmpty { document.actions = actions }
            if let token { headers["Authorization"] = "Bearer " + token }
            body = (try? encoder.encode(document)) ?? Data()
        case .gotify:
            // POST /message (https://gotify.net/docs/pushmsg), the click URL in the client::notification extra.
            address = url.appendingPathComponent("message")
            let document = GotifyMessage(
                title: title, message: message.isEmpty ? title : message, priority: flight ? 2 : urgent ? 8 : 5,
                extras: link.map { GotifyMessage.Extras(notification: .init(click: .init(url: $0))) })
            if let token { headers["X-Gotify-Key"] = token }
            body = (try? encoder.encode(document)) ?? Data()
        }
        return HTTPClient.Request(method: "POST", url: address, headers: headers, body: body)
    }

    /// A message as ntfy's JSON publishing takes it (https://docs.ntfy.sh/publish/#publish-as-json).
    struct NtfyMessage: Encodable {
        var topic: String
        var title: String
        var message: String
        var priority: Int
        var tags: [String]
        var click: String?
        var actions: [Action]?

        /// A `view` or `http` action button (https://docs.ntfy.sh/publish/#action-buttons).
        struct Action: Encodable {
            var action: String
            var label: String
            var url: String
            var method: String?
            var clear: Bool?
        }
    }

    /// A message as Gotify's `POST /message` takes it, the click address in the `client::notification` extra.
    struct GotifyMessage: Encodable {
        var title: String
        var message: String
        var priority: Int
        var extras: Extras?

        struct Extras: Encodable {
            var notification: Notification

            enum CodingKeys: String, CodingKey { case notification = "client::notification" }
        }

        struct Notification: Encodable {
            var click: Click
        }

        struct Click: Encodable {
            var url: String
        }
    }

    /// Sends one request; `what` names its events in a refusal's log line.
    private func send(_ request: HTTPClient.Request, what: String, id: String) async throws {
        var limits = HTTPClient.Limits.defaults
        limits.deadline = .seconds(settings.timeout)
        limits.largest = 64 << 10
        // A 2xx delivers whatever its body: past 64 KiB the rest is not read and the connection is dropped.
        limits.truncating = true
        limits.redirects = nil
        switch await HTTPClient.send(request, limits: limits) {
        case .failure(let failure):
            throw SinkError(sink: name, reason: "\(url.origin): \(failure.reason)")
        case .success(let answer) where (200..<300).contains(answer.status):
            return
        case .success(let answer) where answer.status == 408 || answer.status == 429 || answer.status >= 500:
            let wait = answer.headers["retry-after"].flatMap(Self.seconds(retryAfter:)).map { min($0, 3600) }
            if let wait {
                notBefore = Timestamp(millisecondsSinceEpoch: now().millisecondsSinceEpoch + wait * 1000)
            }
            throw SinkError(
                sink: name, reason: "\(url.origin) answered \(answer.status); tried again",
                retryAfter: wait.map { .seconds($0) })
        case .success(let answer):
            let first = String(decoding: answer.body.prefix(200), as: UTF8.self).split(separator: "\n").first ?? ""
            logger.error(
                "\(name): \(url.origin) refused \(what) with \(answer.status) \(TerminalText.safe(String(first), keepingLines: false)); not tried again",
                metadata: ["sink.name": "\(name)", "event.id": "\(id)", "http.status": "\(answer.status)"])
        }
    }

    /// The signing key (a CloudEvents webhook), read once, and for a preset the service's token instead, from
    /// `secretCommand` or `secretFile`; `nil` when neither is configured. A `whsec_` secret is its base64 bytes (the
    /// Standard Webhooks form), any other its UTF-8 bytes. The file's first line is read as a password file is
    /// (`PasswordCommand.firstLine`: at most 4 KiB, never on the cooperative pool). Errors never hold the secret.
    private func signingKey() async throws(SinkError) -> SymmetricKey? {
        if keyRead { return key }
        var secret: String?
        if let command = settings.secretCommand {
            do {
                secret = try await PasswordCommand.run(command)
            } catch {
                throw SinkError(sink: name, reason: "no secret: \(error)")
            }
        } else if let file = settings.secretFile {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw SinkError(sink: name, reason: "cannot read the secret from \(file)")
            }
            do {
                secret = try await PasswordCommand.firstLine(ofFile: file)
            } catch {
                throw SinkError(sink: name, reason: "the secret is empty")
            }
        }
        if let secret = secret?.trimmingCharacters(in: .whitespaces) {
            guard !secret.isEmpty else { throw SinkError(sink: name, reason: "the secret is empty") }
            if settings.preset != nil {
                token = secret
            } else {
                let bytes =
                    secret.hasPrefix("whsec_") ? Data(base64Encoded: String(secret.dropFirst(6))) : Data(secret.utf8)
                guard let bytes, !bytes.isEmpty else {
                    throw SinkError(sink: name, reason: "the secret starts with whsec_ but is not base64 after it")
                }
                key = SymmetricKey(data: bytes)
            }
        }
        if settings.answers != nil, let answerKeyPath { answerKey = try AnswerKey.load(answerKeyPath) }
        keyRead = true
        return key
    }

    /// What `check` says of the receiver: an OPTIONS request (no event is sent), answered with any status, or why
    /// none came. Never the address's path.
    public static func probe(_ settings: WebhookSettings) async -> Result<String, SinkError> {
        guard let url = URL(string: settings.url) else {
            return .failure(SinkError(sink: settings.shownURL, reason: "not an address"))
        }
        var limits = HTTPClient.Limits.defaults
        limits.deadline = .seconds(min(settings.timeout, 10))
        limits.largest = 64 << 10
        limits.redirects = nil
        switch await HTTPClient.send(HTTPClient.Request(method: "OPTIONS", url: url), limits: limits) {
        case .success(let answer): return .success("\(url.origin) answers (HTTP \(answer.status) to OPTIONS)")
        case .failure(let failure): return .failure(SinkError(sink: settings.shownURL, reason: failure.reason))
        }
    }

    /// Why the sink's secret cannot be had, or `nil` when it can (or none is configured): what `check` says after
    /// the sink's name.
    public static func checkSecret(_ settings: WebhookSettings, name: String) async -> String? {
        do {
            return try await WebhookSink(settings: settings, name: name, logger: Logger(label: "calwatch.check"))
                .secretProblem()
        } catch {
            return error.reason
        }
    }

    private func secretProblem() async -> String? {
        do {
            _ = try await signingKey()
            return nil
        } catch {
            return error.reason
        }
    }

    /// `Retry-After` in seconds, or as an HTTP date.
    static func seconds(retryAfter: String) -> Int64? { HTTPDate.retryAfter(retryAfter, now: Date()) }

    /// What a `ce-` header value keeps as it is: printable ASCII but `"` and `%` (the CloudEvents HTTP binding,
    /// 3.1.3.2: space, double quote, percent and anything outside U+0021 to U+007E are percent-encoded).
    private static let headerSafe = CharacterSet(
        charactersIn: "!#$&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~")
}
