import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRemote
@testable import CalWatchRuntime

/// Debian's Radicale on a free loopback port with a temporary storage folder, the user `anna` (password `Rad1cale-pa55`,
/// plain htpasswd) and her calendars; stopped and removed at the end of `with`.
struct RadicaleServer: Sendable {
    let folder: String
    let port: Int
    static let user = "anna"
    static let password = "Rad1cale-pa55"

    static func with<T>(_ body: (RadicaleServer) async throws -> T) async throws -> T {
        let folder = SinkFixtures.folder()
        try "\(user):\(password)\n".write(toFile: folder + "/users", atomically: true, encoding: .utf8)
        // Port 0, the one taken read from its log: a port found free and let go can be taken by another test's
        // server before Radicale binds it, and that server would answer in its place.
        let log = folder + "/radicale.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/radicale")
        process.arguments = [
            "--storage-filesystem-folder=\(folder)/collections", "--server-hosts=127.0.0.1:0",
            "--auth-type=htpasswd", "--auth-htpasswd-filename=\(folder)/users", "--auth-htpasswd-encryption=plain",
            "--logging-level=info",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        defer {
            // SIGKILL: a child of the test process may have SIGTERM ignored, as the runner's signal handling left it.
            process.signalIfRunning(SIGKILL)
            try? FileManager.default.removeItem(atPath: folder)
        }
        var port = 0
        try await eventually("Radicale listening") {
            // "Listening on '[127.0.0.1]:35497'"
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            guard let line = text.split(separator: "\n").first(where: { $0.contains("Listening on") }),
                let found = line.split(separator: ":").last.flatMap({ Int($0.filter(\.isNumber)) })
            else { return false }
            port = found
            return true
        }
        let server = RadicaleServer(folder: folder, port: port)
        // Up when it answers (generously: the machine may be busy).
        try await eventually("Radicale answering on port \(port)") {
            (try? await server.request("OPTIONS", "/")) != nil
        }
        return try await body(server)
    }

    /// A port nothing listens on now: bound to 0 and let go (Radicale takes it a moment later).
    static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(socket, socketAddress, length) == 0 && getsockname(socket, socketAddress, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// One request as anna (or another password), as a calendar app sends it; returns the status.
    @discardableResult
    func request(_ method: String, _ path: String, body: String? = nil, password: String = Self.password)
        async throws -> Int
    {
        var request = HTTPClient.Request(method: method, url: URL(string: url(path))!)
        if let body {
            request.body = Data(body.utf8)
            request.headers["Content-Type"] =
                method == "PUT" ? "text/calendar; charset=utf-8" : "application/xml; charset=utf-8"
        }
        request.credentials = HTTPClient.Credentials(
            user: Self.user, password: password, origin: request.url.origin)
        switch await HTTPClient.send(request) {
        case .success(let answer): return answer.status
        case .failure(let failure): throw ProgramFailure(description: "\(method) \(path): \(failure.reason)")
        }
    }

    /// Makes a calendar collection with a name and a colour, as a calendar app does.
    func makeCalendar(_ path: String, name: String, color: String = "#ff0000") async throws {
        let created = try await request(
            "MKCALENDAR", path,
            body: """
                <?xml version="1.0" encoding="utf-8"?>
                <C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" \
                xmlns:I="http://apple.com/ns/ical/"><D:set><D:prop><D:displayname>\(name)</D:displayname>\
                <I:calendar-color>\(color)</I:calendar-color></D:prop></D:set></C:mkcalendar>
                """)
        #expect(created == 201, "MKCALENDAR \(path)")
    }

    func put(_ path: String, _ calendar: String) async throws {
        let status = try await request("PUT", path, body: calendar)
        #expect([201, 204].contains(status), "PUT \(path) answered \(status)")
    }

    func delete(_ path: String) async throws {
        let status = try await request("DELETE", path)
        #expect([200, 204].contains(status), "DELETE \(path) answered \(status)")
    }
}
