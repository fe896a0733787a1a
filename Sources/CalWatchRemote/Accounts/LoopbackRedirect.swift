import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The one request a browser makes when the sign-in page sends it back (`http://127.0.0.1:<port>/?code=…&state=…`):
/// a socket on loopback at a free port, answered with a short page and closed. Accepting and reading block, so they
/// run on a thread of their own, never on the cooperative pool; a request that is not the redirect (a favicon) is
/// answered 404 and the wait goes on, for at most `limit`.
public final class LoopbackRedirect: Sendable {
    public let port: Int
    private let descriptor: Int32

    public init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw Failure(reason: "cannot open a socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && listen(socket, 4) == 0
                    && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else {
            close(socket)
            throw Failure(reason: "cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        descriptor = socket
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }

    public var address: String { "http://127.0.0.1:\(port)" }

    public struct Failure: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// The query of the first request whose path is `/` and which has `state` or `error`, as name-value pairs.
    public func wait(limit: Duration = .seconds(300)) async throws -> [String: String] {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { [self] in continuation.resume(with: Result { try accept(limit: limit) }) }
            thread.name = "calwatch-sign-in"
            thread.start()
        }
    }

    private func accept(limit: Duration) throws -> [String: String] {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 1_000) > 0 else { continue }
            let client = Glibc.accept(descriptor, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            defer { close(client) }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            // The request line is all that is read: at most 8 KiB.
            var bytes = [UInt8](repeating: 0, count: 8_192)
            var count = 0
            while count < bytes.count {
                let got = bytes.withUnsafeMutableBytes { recv(client, $0.baseAddress! + count, $0.count - count, 0) }
                if got <= 0 { break }
                count += got
                if bytes[..<count].contains(0x0A) { break }
            }
            let line = String(decoding: bytes[..<count].prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
            let parts = line.split(separator: " ")
            guard parts.count >= 2, parts[0] == "GET", let target = URLComponents(string: String(parts[1])),
                target.path == "/" || target.path.isEmpty
            else {
                respond(client, status: "404 Not Found", page: "Not found.")
                continue
            }
            var query: [String: String] = [:]
            for item in target.queryItems ?? [] { query[item.name] = item.value ?? "" }
            guard query["state"] != nil || query["error"] != nil else {
                respond(client, status: "400 Bad Request", page: "This address waits for a sign-in's answer.")
                continue
            }
            respond(
                client, status: "200 OK",
                page: query["error"] == nil
                    ? "Signed in. calwatch has the answer; you can close this tab."
                    : "The sign-in was refused; calwatch says why in the terminal.")
            return query
        }
        throw Failure(reason: "no browser came back within \(limit.components.seconds / 60) minutes")
    }

    private func respond(_ client: Int32, status: String, page: String) {
        let body = "<!doctype html><meta charset=utf-8><title>calwatch</title><p>\(page)</p>\n"
        let answer =
            "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n" + body
        _ = Array(answer.utf8).withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
