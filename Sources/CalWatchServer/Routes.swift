import CalWatchCore
import CalWatchRuntime
import CalWatchWebhook
@preconcurrency import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import Prometheus

/// The local server's routes (docs/server.md), shared by its listeners: on TCP behind the token, on the socket not.
struct Routes: Sendable {
    let environment: LocalServer.Environment
    let feed: EventFeed
    let refused: RefusedRequests
    /// The key a webhook signs answer buttons with (`<journal>.answers-key`, read once at start), when one does.
    let answerKey: SymmetricKey?

    /// The largest request body: an answer's few fields.
    static let largestBody = 8 << 10
    /// Events read from the journal at once for a stream.
    static let streamBatch = 256

    /// The routes; behind `token` on TCP (its cookie `Secure` over TLS).
    func router(token: String?, secure: Bool) -> Router<BasicRequestContext> {
        let router = Router()
        if let token { router.add(middleware: TokenCheck(token: token, secure: secure, refused: refused)) }
        router.get("/healthz") { _, _ in "ok\n" }
        router.get("/v1/next") { request, _ in try await next(request) }
        router.get("/v1/day") { request, _ in try await day(request) }
        router.get("/v1/events") { request, _ in try await events(request) }
        router.post("/v1/answers/:kind") { request, context in
            try await answer(request, kind: context.parameters.get("kind") ?? "")
        }
        router.get("/metrics") { _, _ in metrics() }
        if token != nil {
            router.get("/v1/accounts/:name/sign-in") { _, context in
                // The page's link percent-encodes the account's name (`BrowserSignIns.page(for:)`).
                let name = context.parameters.get("name") ?? ""
                return accountSignIn(name.removingPercentEncoding ?? name)
            }
        }
        router.get("/") { request, _ in
            if token != nil, request.uri.queryParameters["state"] != nil { return await signedIn(request) }
            return try await page(request)
        }
        // A phone's signed button: `<answers.url>/<answer>/<event id>/<token>`, whatever a proxy put before it.
        router.post("**") { request, _ in try await signedAnswer(request) }
        return router
    }

    // MARK: next and the day

    /// `GET /v1/next?format=json&kinds=meeting,flight&calendars=Work&horizon=86400&maxWidth=40&none=&pango=1`: what
    /// `calwatch next` prints with those options. The asker says which configuration it read: `config=` its digest,
    /// or `file=` the configuration file's real path with `env.NAME=` for `HOME` and each variable the file names
    /// (the `calwatch` front, which reads no YAML). Refused (409) when the daemon reads another.
    func next(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        guard let format = NextUpFormat(rawValue: query["format"].map(String.init) ?? "json") else {
            return malformed("format is one of " + NextUpFormat.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let horizon = query["horizon"].map { Int64($0) ?? DurationText.seconds(String($0)) ?? -1 } ?? 86_400
        guard (60...Int64(31 * 86_400)).contains(horizon) else {
            return malformed("horizon is seconds (or 12h, 2d) from a minute to 31 days, as next --within")
        }
        let named = query["kinds"].map { $0.split(separator: ",").map { OccurrenceFacts.Kind(rawValue: String($0)) } }
        if let named, named.contains(nil) { return malformed("kinds are meeting, flight and event, with commas") }
        let kinds = named.map { Set($0.compactMap { $0 }) }
        let calendars = query["calendars"].map {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let maxWidth = query["maxWidth"].flatMap { Int($0) }
        guard let view = environment.view() else { return refusal(.serviceUnavailable, "the daemon is starting") }
        var readFrom = query["config"].map(String.init)
        if let file = query["file"] {
            var asker: [String: String] = [:]
            for (name, value) in query where name.hasPrefix("env.") { asker[String(name.dropFirst(4))] = String(value) }
            guard asker.count <= 64, let digest = view.readFrom(file: String(file), environment: asker) else {
                CalwatchMetrics.nextAsked(answered: false)
                return refusal(.conflict, "it reads another configuration")
            }
            readFrom = digest
        }
        switch try await view.status(
            readFrom: readFrom, kinds: kinds, calendars: calendars, horizon: horizon, at: environment.now())
        {
        case .success(let status):
            CalwatchMetrics.nextAsked(answered: true)
            let style = NextUpFormat.Style(
                maxWidth: maxWidth.map { max(1, min($0, 4096)) }, none: query["none"].map(String.init),
                pango: query["pango"] == "1")
            return text(format.render(status, style: style) + "\n", json: format == .json || format == .waybar)
        case .failure(let refusal):
            CalwatchMetrics.nextAsked(answered: false)
            return self.refusal(.conflict, refusal.description)
        }
    }

    /// `GET /v1/day?date=2026-11-28` (default: today in the daemon's zone): the day's occurrences.
    func day(_ request: Request) async throws -> Response {
        guard let view = environment.view(), let zone = view.zone else {
            return refusal(.serviceUnavailable, "the daemon is starting")
        }
        let now = environment.now()
        guard let date = Self.date(request.uri.queryParameters["date"], zone: zone, now: now) else {
            return malformed("date is a day like 2026-11-28")
        }
        switch try await view.day(date, at: now) {
        case .success(let sheet): return text(sheet.json + "\n", json: true)
        case .failure(let refusal): return self.refusal(.conflict, refusal.description)
        }
    }

    static func date(_ text: Substring?, zone: ZoneRules, now: Instant) -> CalendarDate? {
        guard let text else { return zone.wallClock(at: now).date }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        let date = CalendarDate(year: year, month: month, day: day)
        return date.isValid ? date : nil
    }

    // MARK: the event stream

    /// `GET /v1/events`: Server-Sent Events, each the CloudEvents object the JSON Lines sink writes, its `id` the
    /// journal's sequence. A client that reconnects with `Last-Event-ID` (or asks `?after=N`) gets what followed, from
    /// the journal, once; a new one starts with what comes next. A comment every 15 s keeps proxies from closing it.
    func events(_ request: Request) async throws -> Response {
        guard let view = environment.view() else { return refusal(.serviceUnavailable, "the daemon is starting") }
        let header = request.headers[HTTPField.Name("Last-Event-ID")!]
        let given: String? = header ?? request.uri.queryParameters["after"].map { String($0) }
        let start: Int64
        if let given {
            guard let sequence = Int64(given), sequence >= 0 else {
                return malformed("Last-Event-ID is the id of an event this stream sent")
            }
            start = sequence
        } else {
            start = try await view.lastSequence()
        }
        let environment = environment
        let feed = feed
        let body = ResponseBody { writer in
            feed.clients(1)
            defer { feed.clients(-1) }
            var cursor = start
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            while !feed.isClosed {
                let entries = try await environment.view()?.entries(after: cursor, limit: Self.streamBatch) ?? []
                if let last = entries.last {
                    var buffer = ByteBuffer()
                    for entry in entries {
                        buffer.writeString("id: \(entry.sequence)\ndata: ")
                        buffer.writeString(entry.json)
                        buffer.writeString("\n\n")
                    }
                    try await writer.write(buffer)
                    cursor = last.sequence
                    continue
                }
                // Rows after the cursor that were not events calwatch can read (a stranger's rows): past them.
                if feed.last > cursor {
                    cursor = min(feed.last, cursor + Int64(Self.streamBatch))
                    continue
                }
                let before = ContinuousClock.now
                await feed.wait(after: cursor, timeout: .seconds(15))
                if ContinuousClock.now - before >= .seconds(15) { try await writer.write(ByteBuffer(string: ": \n\n")) }
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream", .cacheControl: "no-store",
                HTTPField.Name("X-Accel-Buffering")!: "no",
            ],
            body: body)
    }

    // MARK: answers

    /// `POST /v1/answers/snooze|dismiss|ack` with `{"event": "<CE_ID or subject>", "for": "10m"}` (JSON, or a form
    /// from the page): what `calwatch snooze`, `dismiss` and `ack` do. 200 applied, 409 refused (with why), 202 kept
    /// for a daemon busy past a second and a half. A form is answered by going back to the page.
    func answer(_ request: Request, kind text: String) async throws -> Response {
        guard let kind = JournalStore.Answer.Kind(rawValue: text) else {
            return malformed("an answer is snooze, dismiss or ack")
        }
        let bytes = try await request.body.collect(upTo: Self.largestBody)
        let isForm = request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") ?? false
        var fields: [String: String] = [:]
        if isForm {
            let form = HummingbirdCore.URI("?" + String(buffer: bytes)).queryParameters
            for (key, value) in form where fields[String(key)] == nil { fields[String(key)] = String(value) }
        } else {
            let data = Data(bytes.readableBytesView)
            guard let decoded = try? JSONDecoder().decode([String: String].self, from: data) else {
                return malformed(#"the body is {"event": "<CE_ID or UID/START>", "for": "10m"}"#)
            }
            fields = decoded
        }
        guard let target = fields["event"], !target.isEmpty, target.utf8.count <= 2048 else {
            return malformed("name the event: its CE_ID, or for dismiss and ack its UID/START")
        }
        var seconds: Int64?
        if kind == .snooze {
            seconds = fields["for"].map { DurationText.seconds($0) ?? -1 } ?? 300
            guard let seconds, (1...86_400).contains(seconds) else {
                return malformed("for is a duration from 1s to 1d, such as 10m")
            }
        }
        let given = try await give(kind, target: target, seconds: seconds)
        if isForm { return Response(status: .seeOther, headers: [.location: "/?answered=\(given.outcome)"]) }
        return given.response
    }

    /// A phone's button: the last three parts of the path are the answer, the event id and its signature.
    func signedAnswer(_ request: Request) async throws -> Response {
        let parts = request.uri.path.split(separator: "/").suffix(3).map(String.init)
        guard let answerKey, let snooze = environment.buttonSnooze, parts.count == 3,
            let kind = JournalStore.Answer.Kind(rawValue: parts[0]), kind != .ack, parts[1].count == 32,
            parts[1].allSatisfy(\.isHexDigit)
        else {
            return Response(status: .notFound, body: .init(byteBuffer: ByteBuffer(string: "not a calwatch route\n")))
        }
        guard AnswerKey.matches(parts[2], kind: kind, event: parts[1], key: answerKey) else {
            refused.note(.signature)
            return Response(status: .forbidden, body: .init(byteBuffer: ByteBuffer(string: "not a calwatch answer\n")))
        }
        return try await give(kind, target: parts[1], seconds: kind == .snooze ? snooze : nil).response
    }

    private func give(_ kind: JournalStore.Answer.Kind, target: String, seconds: Int64?) async throws -> Given {
        let journal = try environment.answers()
        return Given(try await journal.give(kind, target: target, seconds: seconds, given: environment.timestamp()))
    }

    /// What became of an answer, as a response.
    struct Given {
        var given: JournalStore.Given
        init(_ given: JournalStore.Given) { self.given = given }

        var text: String {
            switch given {
            case .applied(let text), .refused(let text): text
            case .kept: "recorded; the daemon applies it when it is free"
            }
        }

        var outcome: String {
            switch given {
            case .applied: "applied"
            case .refused: "refused"
            case .kept: "kept"
            }
        }

        var response: Response {
            let status: HTTPResponse.Status =
                switch given {
                case .applied: .ok
                case .refused: .conflict
                case .kept: .accepted
                }
            var writer = JSONLineWriter(capacity: 256)
            writer.beginObject()
            writer.field("outcome", outcome)
            writer.field("text", text)
            writer.endObject(newline: true)
            return Response(
                status: status, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: writer.bytes)))
        }
    }

    // MARK: metrics

    /// `GET /metrics`: the Prometheus text of what the daemon recorded.
    func metrics() -> Response {
        var bytes: [UInt8] = []
        environment.metrics?.emit(into: &bytes)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    // MARK: the page

    func page(_ request: Request) async throws -> Response {
        guard let view = environment.view(), let zone = view.zone else {
            return Response(
                status: .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8", .retryAfter: "2"],
                body: .init(
                    byteBuffer: ByteBuffer(string: "calwatch is reading the calendars; try again in a moment\n")))
        }
        let now = environment.now()
        let query = request.uri.queryParameters
        let date = Self.date(query["date"], zone: zone, now: now) ?? zone.wallClock(at: now).date
        let sheet = try await view.day(date, at: now)
        let next = try await view.status(readFrom: nil, kinds: nil, calendars: nil, horizon: 86_400, at: now)
        let snoozable = try await snoozableReminders(sheet)
        let page = DayPage(
            sheet: sheet, next: try? next.get(), snoozable: snoozable,
            answered: query["answered"].flatMap { DayPage.answered[String($0)] })
        let fragment = query["fragment"] == "1"
        var nonceBytes = SystemRandomNumberGenerator()
        let nonce = Base64URL.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &nonceBytes) })
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                .contentSecurityPolicy:
                    "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; connect-src 'self'; "
                    + "form-action 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'",
                // same-origin: a form's post carries the page's Origin (no-referrer would make it "null"), and
                // nothing is sent to the sites links lead to.
                HTTPField.Name("X-Content-Type-Options")!: "nosniff", HTTPField.Name("Referrer-Policy")!: "same-origin",
            ],
            body: .init(byteBuffer: ByteBuffer(string: fragment ? page.main : page.document(nonce: nonce))))
    }

    /// The last reminder each occurrence of the sheet got, by subject: what its Snooze button snoozes.
    private func snoozableReminders(_ sheet: Result<DaySheet, NextSource.Refusal>) async throws -> [String: String] {
        guard case .success(let sheet) = sheet else { return [:] }
        let journal = try environment.answers()
        var found: [String: String] = [:]
        let now = environment.now()
        for item in sheet.items where item.occurrence.end > now && item.occurrence.start.adding(seconds: -86_400) < now
        {
            let reminders = try await journal.events(uid: item.occurrence.uid).filter {
                $0.event.type == .reminderDue && $0.event.subject == item.subject
            }
            if let last = reminders.max(by: { $0.sequence < $1.sequence }) {
                found[item.subject] = last.event.id.description
            }
        }
        return found
    }

    // MARK: helpers

    private func text(_ body: String, json: Bool) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: json ? "application/json" : "text/plain; charset=utf-8", .cacheControl: "no-store",
            ],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    private func malformed(_ why: String) -> Response {
        refused.note(.malformed)
        return refusal(.badRequest, why)
    }

    private func refusal(_ status: HTTPResponse.Status, _ why: String) -> Response {
        var writer = JSONLineWriter(capacity: 256)
        writer.beginObject()
        writer.field("refused", why)
        writer.endObject(newline: true)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }
}

/// On TCP, every route but `/healthz` and a signed answer asks for the token: `Authorization: Bearer`, or the cookie
/// a browser gets by opening `/?token=…` once (same-site, HTTP only).
struct TokenCheck<Context: RequestContext>: RouterMiddleware {
    let token: String
    /// Over TLS: the cookie is sent back only over TLS.
    let secure: Bool
    let refused: RefusedRequests

    static var cookie: String { "calwatch" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let path = request.uri.path
        if path == "/healthz" || request.method == .post && !path.hasPrefix("/v1/") {
            return try await next(request, context)
        }
        // A sign-in's start and the provider's answer: a browser comes to them from a notice and from the
        // provider's page, without the cookie (same-site); the answer is taken only for a state issued here.
        if request.method == .get,
            path.hasPrefix("/v1/accounts/") && path.hasSuffix("/sign-in")
                || path == "/" && request.uri.queryParameters["state"] != nil
        {
            return try await next(request, context)
        }
        // The scheme's name is case-insensitive (RFC 9110 §11.1).
        if let header = request.headers[.authorization], header.prefix(7).lowercased() == "bearer ",
            ServerToken.matches(header.dropFirst(7), token)
        {
            return try await next(request, context)
        }
        if let cookie = request.cookies[Self.cookie], ServerToken.matches(cookie.value, token) {
            // A cookie goes with a form posted from any page of this host, whatever its port (another local web
            // app): a post is taken only from this server's own pages.
            guard request.method == .get || request.method == .head || Self.sameOrigin(request) else {
                refused.note(.origin)
                return Response(status: .forbidden, body: .init(byteBuffer: ByteBuffer(string: "not from this page\n")))
            }
            return try await next(request, context)
        }
        if request.method == .get, path == "/", let given = request.uri.queryParameters["token"] {
            guard ServerToken.matches(given, token) else {
                refused.note(.token)
                return unauthorized
            }
            var response = Response(status: .seeOther, headers: [.location: "/"])
            response.setCookie(
                try .validated(
                    name: Self.cookie, value: token, path: "/", secure: secure, httpOnly: true, sameSite: .strict))
            return response
        }
        refused.note(.token)
        return unauthorized
    }

    /// Whether a request's `Origin` (browsers send it with every post) is this server's own address; a request
    /// without one (no browser) passes.
    static func sameOrigin(_ request: Request) -> Bool {
        guard let origin = request.headers[.origin] else { return true }
        guard let host = request.head.authority else { return false }
        return origin == "http://" + host || origin == "https://" + host
    }

    private var unauthorized: Response {
        Response(
            status: .unauthorized, headers: [.wwwAuthenticate: "Bearer", .contentType: "text/plain; charset=utf-8"],
            body: .init(
                byteBuffer: ByteBuffer(
                    string: "calwatch asks for its token: Authorization: Bearer <the daemon's <journal>.token>, "
                        + "or open calwatch next --open-page\n")))
    }
}
