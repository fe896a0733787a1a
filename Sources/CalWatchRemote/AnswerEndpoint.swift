public import CalWatchCore
public import CalWatchRuntime
import Crypto
import Foundation
public import Logging
public import ServiceLifecycle

/// Where a phone's Snooze and Dismiss buttons land (`answers:` on a `preset: ntfy` webhook, docs/sinks/webhook.md):
/// ntfy's `http` actions post to `<url>/<answer>/<event id>/<token>`, and `calwatch watch` records the answer as
/// `calwatch snooze` and `calwatch dismiss` do. The token is an HMAC of the answer and the event id under a key kept
/// beside the journal, so only a notification calwatch sent can answer, and only for its own event.
///
/// A small HTTP/1.1 server on its own thread, one connection at a time: a request is read for at most 5 seconds
/// and 8 KiB, answered, and closed. Only `POST` is taken; the body is ignored.
public actor AnswerEndpoint: Service {
    private let executor = BlockingExecutor(name: "calwatch-answers")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let settings: WebhookSettings.Answers
    private let keyPath: String
    private let record: @Sendable (JournalStore.Answer.Kind, _ event: String, _ seconds: Int64?) async throws -> Void
    private let logger: Logger

    /// An endpoint for `settings`, its key at `keyPath` (made there at first use); `record` keeps an answer for the
    /// daemon (a journal row, and a ring).
    public init(
        settings: WebhookSettings.Answers, keyPath: String, logger: Logger,
        record: @escaping @Sendable (JournalStore.Answer.Kind, _ event: String, _ seconds: Int64?) async throws -> Void
    ) {
        self.settings = settings
        self.keyPath = keyPath
        self.record = record
        self.logger = logger
    }

    /// Serves until the daemon shuts down. An address that cannot be listened on, or a key that cannot be had, is
    /// logged and the daemon goes on without answers (the buttons then fail on the phone).
    public func run() async throws {
        let key: SymmetricKey
        let listener: Int32
        do {
            key = try AnswerKey.load(keyPath)
            listener = try listen()
        } catch {
            logger.error("no answers from the phone: \(error.reason)")
            try? await gracefulShutdown()
            return
        }
        defer { close(listener) }
        logger.info("taking answers on \(settings.host):\(settings.port) for \(settings.url)")
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            guard let (connection, request) = acceptOne(listener) else { continue }
            let (status, text) = await answer(request, key: key)
            let body = Array((text + "\n").utf8)
            let head =
                "HTTP/1.1 \(status)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.count)"
                + "\r\nConnection: close\r\n\r\n"
            let bytes = Array(head.utf8) + body
            _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(connection)
        }
    }

    private func listen() throws(SinkError) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SinkError(sink: "answers", reason: "cannot make a socket") }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(settings.port).bigEndian)
        // An address inet_pton does not read would leave 0.0.0.0, every interface: refused, as is any not loopback.
        guard inet_pton(AF_INET, settings.host, &address.sin_addr) == 1,
            UInt32(bigEndian: address.sin_addr.s_addr) >> 24 == 127
        else {
            close(fd)
            throw SinkError(
                sink: "answers",
                reason: "\(settings.host) is not a loopback IPv4 address; answers are taken on "
                    + "127.0.0.1 only, behind a reverse proxy", lasting: true)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw SinkError(
                sink: "answers", reason: "cannot listen on \(settings.host):\(settings.port): \(reason)", lasting: true)
        }
        return fd
    }

    /// The next connection and its request's head, waiting up to half a second for one (so a shutdown is seen);
    /// `nil` when none came, or it sent nothing usable in time.
    private func acceptOne(_ listener: Int32) -> (Int32, Request)? {
        guard let connection = ServerSocket.accept(listener, timeout: 5) else { return nil }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        let deadline = ContinuousClock.now + .seconds(5)
        while received.count < Self.largest, ContinuousClock.now < deadline,
            !received.containsSubsequence([13, 10, 13, 10])
        {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer.prefix(count)
        }
        guard received.containsSubsequence([13, 10, 13, 10]) else {
            return (connection, .tooLarge(received.count >= Self.largest))
        }
        let line = String(decoding: received.prefix { $0 != 13 }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count == 3 else { return (connection, .tooLarge(false)) }
        return (connection, .head(method: String(parts[0]), path: String(parts[1])))
    }

    enum Request {
        case head(method: String, path: String)
        /// No complete head: too large when true, else malformed or too slow.
        case tooLarge(Bool)
    }

    static let largest = 8 << 10

    /// The status and text for a request; a valid answer is recorded first.
    func answer(_ request: Request, key: SymmetricKey) async -> (String, String) {
        guard case .head(let method, let path) = request else {
            if case .tooLarge(true) = request { return ("431 Request Header Fields Too Large", "too large") }
            return ("400 Bad Request", "not an HTTP request")
        }
        guard method == "POST" else { return ("405 Method Not Allowed", "answers are POSTed") }
        let parts = path.split(separator: "?").first?.split(separator: "/").suffix(3).map(String.init) ?? []
        guard parts.count == 3, let kind = JournalStore.Answer.Kind(rawValue: parts[0]), kind != .ack,
            parts[1].count == 32, parts[1].allSatisfy(\.isHexDigit)
        else { return ("404 Not Found", "not a calwatch answer") }
        guard AnswerKey.matches(parts[2], kind: kind, event: parts[1], key: key) else {
            logger.warning("an answer with a token that is not calwatch's was refused")
            return ("403 Forbidden", "not a calwatch answer")
        }
        let seconds = kind == .snooze ? settings.snooze : nil
        do {
            try await record(kind, parts[1], seconds)
        } catch {
            logger.error("cannot record an answer: \(error)")
            return ("503 Service Unavailable", "not recorded; try again")
        }
        return ("200 OK", kind == .snooze ? "snoozed for \(DurationText.text(settings.snooze))" : "dismissed")
    }
}

/// The answer endpoint's key and tokens.
enum AnswerKey {
    /// The key kept beside the journal (`<journal>.answers-key`): 32 random bytes made at first use, mode 0600.
    static func load(_ path: String) throws(SinkError) -> SymmetricKey {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if fd >= 0 {
            let key = SymmetricKey(size: .bits256)
            let written = key.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            guard written == 32 else { throw SinkError(sink: "answers", reason: "cannot write the key \(path)") }
            return key
        }
        guard let bytes = FileManager.default.contents(atPath: path), bytes.count == 32 else {
            throw SinkError(sink: "answers", reason: "cannot read the key \(path) (32 bytes); remove it to make anew")
        }
        return SymmetricKey(data: bytes)
    }

    /// `<answer>/<event id>/<token>`: what the endpoint's address is followed by.
    static func path(_ kind: JournalStore.Answer.Kind, event: String, key: SymmetricKey) -> String {
        "\(kind.rawValue)/\(event)/\(token(kind, event: event, key: key))"
    }

    /// The first 16 bytes of the HMAC-SHA256 of `answer/event`, base64url.
    static func token(_ kind: JournalStore.Answer.Kind, event: String, key: SymmetricKey) -> String {
        let mac = HMAC<Crypto.SHA256>.authenticationCode(for: Data("\(kind.rawValue)/\(event)".utf8), using: key)
        return Data(Data(mac).prefix(16)).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Whether `token` is the one for this answer, compared in constant time.
    static func matches(_ token: String, kind: JournalStore.Answer.Kind, event: String, key: SymmetricKey) -> Bool {
        let expected = Array(Self.token(kind, event: event, key: key).utf8)
        let given = Array(token.utf8)
        guard given.count == expected.count else { return false }
        return zip(given, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

extension Array where Element == UInt8 {
    fileprivate func containsSubsequence(_ part: [UInt8]) -> Bool {
        guard count >= part.count else { return false }
        return (0...(count - part.count)).contains { self[$0..<$0 + part.count].elementsEqual(part) }
    }
}
