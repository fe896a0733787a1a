public import CalWatchCore
import Foundation
public import Logging
public import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// `calwatch next` answered by the running daemon, over a local socket beside its journal (`<state>.next.sock`,
/// mode 0600): a status bar that runs `next` every minute then costs a connection, not a read of every calendar.
///
/// One JSON request per connection (what `next` was asked, and a digest of the configuration it read), one JSON
/// reply: the line `next` prints, or why the daemon does not answer (another configuration, a window it does not
/// hold, its first read not done), in which case `next` reads the calendars itself. A thread of its own, one
/// connection at a time; a request is read for at most a second and 64 KiB.
public actor NextEndpoint: Service {
    /// What `next` asks.
    public struct Request: Codable, Sendable {
        /// `Configuration.readFrom` of the configuration `next` read.
        public var readFrom: String
        public var kinds: [String]?
        public var calendars: [String]?
        /// How far ahead, in seconds.
        public var horizon: Int64
        /// A `NextUpFormat`, and its style.
        public var format: String
        public var maxWidth: Int?
        public var none: String?
        public var pango: Bool

        public init(
            readFrom: String, kinds: [String]?, calendars: [String]?, horizon: Int64, format: String, maxWidth: Int?,
            none: String?, pango: Bool
        ) {
            self.readFrom = readFrom
            self.kinds = kinds
            self.calendars = calendars
            self.horizon = horizon
            self.format = format
            self.maxWidth = maxWidth
            self.none = none
            self.pango = pango
        }
    }

    /// The daemon's answer: the line, or why there is none.
    public struct Reply: Codable, Sendable {
        public var line: String?
        public var refused: String?
    }

    private let executor = BlockingExecutor(name: "calwatch-next")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let path: String
    private let source: @Sendable () -> NextSource?
    private let now: @Sendable () -> Instant
    private let logger: Logger

    /// The socket of the daemon whose journal is at `state`.
    public static func socketPath(state: String) -> String { state + ".next.sock" }

    /// An endpoint at `path` answering from `source` (the watch in use's), at the time `now` gives.
    public init(
        path: String, source: @escaping @Sendable () -> NextSource?, now: @escaping @Sendable () -> Instant,
        logger: Logger
    ) {
        self.path = path
        self.source = source
        self.now = now
        self.logger = logger
    }

    /// Serves until the daemon shuts down; a socket that cannot be made is logged, and `next` then reads the
    /// calendars itself.
    public func run() async throws {
        let listener: Int32
        do {
            listener = try Self.listen(at: path)
        } catch {
            logger.warning("calwatch next will read the calendars itself: \(error)")
            try? await gracefulShutdown()
            return
        }
        defer {
            close(listener)
            unlink(path)
        }
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            guard let connection = ServerSocket.accept(listener, timeout: 1) else { continue }
            let reply = await answer(Self.receive(connection, limit: Self.largest, within: 1))
            CalwatchMetrics.nextAsked(answered: reply.line != nil)
            if var bytes = try? JSONEncoder().encode(reply) {
                bytes.append(10)
                _ = Self.send(bytes, to: connection)
            }
            close(connection)
        }
    }

    /// The longest request, and the longest reply (`--format json` lists the rest of the day, however busy).
    static let largest = 64 << 10
    static let largestReply = 64 << 20

    /// The reply to a request's bytes.
    func answer(_ bytes: [UInt8]) async -> Reply {
        guard let request = try? JSONDecoder().decode(Request.self, from: Data(bytes)),
            let format = NextUpFormat(rawValue: request.format)
        else { return Reply(refused: "not a calwatch next request") }
        guard let source = source() else { return Reply(refused: "the daemon is starting") }
        let kinds = request.kinds.map { Set($0.compactMap(PlanningFacts.Kind.init(rawValue:))) }
        do {
            switch try await source.status(
                readFrom: request.readFrom, kinds: kinds, calendars: request.calendars, horizon: request.horizon,
                at: now())
            {
            case .success(let status):
                let style = NextUpFormat.Style(maxWidth: request.maxWidth, none: request.none, pango: request.pango)
                return Reply(line: format.render(status, style: style))
            case .failure(let refusal):
                return Reply(refused: refusal.description)
            }
        } catch {
            return Reply(refused: "the journal: \(error)")
        }
    }

    /// Asks the daemon listening at `path`; `nil` when none answers within `timeout` seconds (none runs, or it is
    /// busy), so the caller reads the calendars itself. Blocks the calling thread.
    public static func ask(_ request: Request, at path: String, timeout: Int = 2) -> Reply? {
        guard var address = address(path), let body = try? JSONEncoder().encode(request) else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { return nil }
        guard send(body, to: fd) else { return nil }
        shutdown(fd, Int32(SHUT_WR))
        let reply = receive(fd, limit: largestReply, within: timeout)
        return try? JSONDecoder().decode(Reply.self, from: Data(reply))
    }

    /// `path` as a socket address; `nil` when it is too long for one (108 bytes).
    private static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// A socket listening at `path`, readable by its owner alone. What is there is replaced: the journal's lock
    /// says no other daemon uses this journal.
    private static func listen(at path: String) throws -> Int32 {
        guard var address = address(path) else { throw NextEndpointError("\(path) is too long for a socket") }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NextEndpointError("cannot make a socket: \(String(cString: strerror(errno)))") }
        unlink(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        // Before it listens: the journal's folder is private already, the socket too.
        guard bound == 0, chmod(path, 0o600) == 0, Glibc.listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw NextEndpointError("cannot listen on \(path): \(reason)")
        }
        return fd
    }

    /// Sends all of `bytes` (each write bounded by the socket's timeout); `false` when the other end went away.
    private static func send(_ bytes: Data, to fd: Int32) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
    }

    /// What the other end sends until it closes its side: at most `limit` bytes, for about `seconds` (each read is
    /// bounded by the socket's timeout too).
    private static func receive(_ fd: Int32, limit: Int, within seconds: Int) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .seconds(seconds)
        while received.count < limit, ContinuousClock.now < deadline {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            received += buffer.prefix(count)
        }
        return received
    }
}

/// Why the endpoint could not listen.
struct NextEndpointError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
