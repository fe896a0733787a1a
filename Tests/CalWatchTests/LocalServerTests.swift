import CoreFoundation
import Foundation
import Testing

/// The daemon's local server as its clients meet it: curl on the Unix socket and on loopback TCP, an event stream
/// read across a restart, and the page in headless Chromium. Real processes, real time, generous margins.
@Suite struct LocalServerTests {
    /// What curl got: the status, the response's head and its body.
    struct Fetched {
        var status: Int
        var head: String
        var body: String
    }

    /// One request with curl (`arguments` after the URL's options); the status is 0 when none came.
    static func curl(_ arguments: [String], timeout: Int = 30) async throws -> Fetched {
        let head = TestFolders.path("curl-head")
        defer { try? FileManager.default.removeItem(atPath: head) }
        let output = try await offCooperativePool { () -> String in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = ["-s", "--max-time", "\(timeout)", "-D", head, "-w", "\n%{http_code}"] + arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        let status = Int(output.split(separator: "\n").last ?? "") ?? 0
        let body = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().joined(separator: "\n")
        return Fetched(
            status: status, head: (try? String(contentsOfFile: head, encoding: .utf8)) ?? "", body: String(body))
    }

    /// A folder with a calendar `cal/work` of `items` and a config.yml serving on a free loopback port; its port.
    /// A zone whose clock is near noon while the tests run: the items sit minutes to hours from now, and near
    /// midnight they would fall on tomorrow's page.
    static let zone: String = {
        let hour =
            Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date()).hour ?? 0
        var offset = (12 - hour + 24) % 24
        if offset > 12 { offset -= 24 }
        // Etc/GMT's sign is POSIX's: Etc/GMT-3 is three hours ahead of UTC.
        return offset == 0 ? "UTC" : offset > 0 ? "Etc/GMT-\(offset)" : "Etc/GMT+\(-offset)"
    }()

    static func prepare(_ name: String, items: [String: String], extra: String = "") throws -> (String, Int) {
        let folder = TestFolders.path(name)
        try FileManager.default.createDirectory(atPath: folder + "/cal/work", withIntermediateDirectories: true)
        for (file, text) in items {
            try text.write(toFile: folder + "/cal/work/" + file, atomically: true, encoding: .utf8)
        }
        let port = try RadicaleServer.freePort()
        try """
        calendars: [cal]
        timezone: \(zone)
        state: state/journal.db
        me: [me@example.org]
        serve: { listen: "127.0.0.1:\(port)" }
        sinks:
          - { type: jsonl, path: events.jsonl }
        \(extra)
        """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        return (folder, port)
    }

    /// A running daemon in `folder`, once it watches; stopped by the caller.
    static func start(_ folder: String) async throws -> Process {
        let process = try WatchCommandTests.watch(in: folder)
        try await eventually("the daemon watching") {
            ((try? String(contentsOfFile: folder + "/log.txt", encoding: .utf8)) ?? "").contains("watching")
        }
        return process
    }

    static func stop(_ process: Process) async throws {
        guard process.isRunning else { return }
        process.terminate()
        try await offCooperativePool { process.waitUntilExit() }
    }

    /// A calendar of one VEVENT, `start` and `end` in seconds from now, with `extra` lines.
    static func item(_ uid: String, _ summary: String, start: Int, end: Int, extra: [String] = []) -> String {
        let now = Date()
        func stamp(_ seconds: Int) -> String {
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.string(from: now.addingTimeInterval(Double(seconds)))
        }
        return
            ([
                "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT", "UID:\(uid)",
                "DTSTAMP:\(stamp(0))", "DTSTART:\(stamp(start))", "DTEND:\(stamp(end))", "SUMMARY:\(summary)",
            ] + extra + ["END:VEVENT", "END:VCALENDAR", ""]).joined(separator: "\r\n")
    }

    /// Every route on TCP but /healthz asks for the token (the socket's permissions stand in for it); a browser is
    /// let in once by `/?token=`, with a cookie that stays on this site; wrong tokens are counted, and the log says
    /// so once, however many come.
    @Test func theTokenGuardsTCPAndTheSocketsPermissionsGuardIt() async throws {
        let (folder, port) = try Self.prepare(
            "calwatch-server-token",
            items: ["review.ics": Self.item("review", "Design review", start: 600, end: 2400)])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let daemon = try await Self.start(folder)
        defer { daemon.terminate() }
        let tokenPath = folder + "/state/journal.db.token"
        var status = stat()
        #expect(stat(tokenPath, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(stat(folder + "/state/journal.db.sock", &status) == 0 && status.st_mode & 0o777 == 0o600)
        let token = try String(contentsOfFile: tokenPath, encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(token.count >= 43)
        let base = "http://127.0.0.1:\(port)"

        #expect(try await Self.curl([base + "/healthz"]).status == 200)
        let refused = try await Self.curl([base + "/v1/next"])
        #expect(refused.status == 401 && refused.head.lowercased().contains("www-authenticate: bearer"))
        #expect(
            try await Self.curl(["-H", "Authorization: Bearer \(token.dropLast())x", base + "/v1/next"]).status == 401)
        let next = try await Self.curl(["-H", "Authorization: Bearer \(token)", base + "/v1/next"])
        #expect(next.status == 200 && next.body.contains(#""summary":"Design review""#), "\(next.body)")
        // On the socket, no token: its mode is the credential.
        let socket = try await Self.curl([
            "--unix-socket", folder + "/state/journal.db.sock", "http://x/v1/next?format=text",
        ])
        #expect(socket.status == 200 && socket.body.contains("Design review in"), "\(socket.body)")

        // A browser opens the address with the token once: a same-site, script-proof cookie, and the token leaves
        // the address bar.
        let opened = try await Self.curl([base + "/?token=\(token)"])
        #expect(opened.status == 303 && opened.head.lowercased().contains("location: /\r\n"), "\(opened.head)")
        let cookie = try #require(
            opened.head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") })
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "\(cookie)")
        let jar = folder + "/cookies"
        _ = try await Self.curl(["-c", jar, base + "/?token=\(token)"])
        let page = try await Self.curl(["-b", jar, base + "/"])
        #expect(page.status == 200 && page.body.contains("Design review"), "\(page.status)")
        #expect(page.head.lowercased().contains("content-security-policy: default-src 'none'"))
        #expect(try await Self.curl([base + "/?token=wrong"]).status == 401)
        // A post with the cookie from another page of this host (another port) is refused; from its own, taken.
        let foreign = try await Self.curl(
            ["-b", jar, "-H", "Origin: http://127.0.0.1:9", "-d", "event=x", base + "/v1/answers/dismiss"])
        #expect(foreign.status == 403, "\(foreign.status) \(foreign.body)")
        let own = try await Self.curl(
            ["-b", jar, "-H", "Origin: \(base)", "-d", "event=x", base + "/v1/answers/dismiss"])
        #expect(own.status == 303 && own.head.contains("answered=refused"), "\(own.status) \(own.head)")
        // What the page says of an answer is its own text, never the address's. (The forged words are looked for
        // whole: "555" alone turns up now and then in an event's hexadecimal id or a nonce.)
        let forged = try await Self.curl(["-b", jar, base + "/?answered=Call%20%2B1%20555%200100%20now"])
        #expect(
            forged.status == 200 && !forged.body.contains("555 0100") && !forged.body.contains("class=\"said\""),
            "\(forged.status) \(forged.head)")
        // `next --open-page` gives that address (and opens it only where a desktop runs).
        let opened2 = try await CommandLineTests().calwatch(
            ["next", "--open-page", "--config", folder + "/config.yml"],
            environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
        #expect(opened2.output == base + "/?token=\(token)\n", "\(opened2.errors)")
        let check = try await CommandLineTests().calwatch(["check", "--config", folder + "/config.yml"])
        #expect(
            check.output.contains("serve: \(folder)/state/journal.db.sock") && check.output.contains(base),
            "\(check.output)")
        #expect(!check.output.contains(token))

        // A hundred clients that send half a request and wait hold nobody else up.
        let idle = Self.idleClients(100, port: port)
        defer { for fd in idle { close(fd) } }
        #expect(idle.count == 100)
        let started = ContinuousClock.now
        #expect(
            try await Self.curl(["-H", "Authorization: Bearer \(token)", base + "/v1/next"], timeout: 20).status == 200)
        #expect(ContinuousClock.now - started < .seconds(10))

        // 300 wrong tokens: counted in the metrics, said in the log once.
        for _ in 0..<300 { _ = try await Self.curl(["-H", "Authorization: Bearer nope", base + "/v1/day"]) }
        let metrics = try await Self.curl(["-H", "Authorization: Bearer \(token)", base + "/metrics"])
        let counted = metrics.body.split(separator: "\n").first {
            $0.hasPrefix(#"calwatch_server_refused_total{reason="token"}"#)
        }
        #expect(counted.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0 >= 302, "\(metrics.body)")
        let log = try String(contentsOfFile: folder + "/log.txt", encoding: .utf8)
        #expect(log.components(separatedBy: "refused requests").count - 1 <= 2, "\(log)")
        #expect(!log.contains(token))
    }

    /// A client that sends its request a byte a second (which an idle timeout alone lets stay) is closed once 10 s
    /// pass without a whole request; an event stream, whose response lasts, is not.
    @Test func aRequestThatNeverEndsIsClosed() async throws {
        let (folder, port) = try Self.prepare(
            "calwatch-server-slow", items: ["review.ics": Self.item("review", "Design review", start: 600, end: 2400)])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let daemon = try await Self.start(folder)
        defer { daemon.terminate() }
        let fd = try #require(Self.idleClients(1, port: port).first)
        defer { close(fd) }
        let started = ContinuousClock.now
        let closedAfter = try await offCooperativePool { () -> Duration? in
            var limit = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            var byte: UInt8 = 0
            while ContinuousClock.now - started < .seconds(40) {
                if send(fd, "X-Slow: y\r\n", 11, Int32(MSG_NOSIGNAL)) < 0 { return ContinuousClock.now - started }
                if recv(fd, &byte, 1, 0) == 0 { return ContinuousClock.now - started }
            }
            return nil
        }
        let after = try #require(closedAfter, "still open after 40 s")
        #expect(after >= .seconds(9) && after < .seconds(30), "\(after)")
        // A stream that has read its request goes on past the deadline.
        let token = try String(contentsOfFile: folder + "/state/journal.db.token", encoding: .utf8)
            .trimmingCharacters(in: .newlines)
        let streaming = ContinuousClock.now
        let stream = try await Self.curl(
            ["-N", "-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(port)/v1/events"], timeout: 14)
        #expect(stream.status == 200 && stream.body.hasPrefix("retry: "), "\(stream.status)")
        #expect(ContinuousClock.now - streaming >= .seconds(13), "the stream was cut before curl gave up")
    }

    /// `count` connections to loopback `port`, each having sent half a request's head.
    static func idleClients(_ count: Int, port: Int) -> [Int32] {
        (0..<count).compactMap { _ in
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(fd)
                return nil
            }
            _ = Array("GET /v1/next HTTP/1.1\r\nHost: x\r\n".utf8).withUnsafeBytes {
                send(fd, $0.baseAddress, $0.count, 0)
            }
            return fd
        }
    }

    /// With TLS (`allowRemote:` for other machines, here on loopback): HTTPS with the certificate given, the cookie
    /// sent back only over TLS, plain HTTP not understood.
    @Test func withTLSTheServerSpeaksHTTPSOnly() async throws {
        let (folder, port) = try Self.prepare(
            "calwatch-server-tls", items: ["review.ics": Self.item("review", "Design review", start: 600, end: 2400)])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try await runProgram(
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days",
                "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", folder + "/key.pem",
                "-out", folder + "/cert.pem",
            ])
        let text = try String(contentsOfFile: folder + "/config.yml", encoding: .utf8)
        try text.replacingOccurrences(
            of: "serve: { listen: \"127.0.0.1:\(port)\" }",
            with:
                "serve: { listen: \"127.0.0.1:\(port)\", allowRemote: true, tls: { certificate: cert.pem, key: key.pem } }"
        ).write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let daemon = try await Self.start(folder)
        defer { daemon.terminate() }
        let token = try String(contentsOfFile: folder + "/state/journal.db.token", encoding: .utf8)
            .trimmingCharacters(in: .newlines)
        let base = "https://127.0.0.1:\(port)"
        let secure = try await Self.curl([
            "--cacert", folder + "/cert.pem", "-H", "Authorization: Bearer \(token)", base + "/v1/next",
        ])
        #expect(secure.status == 200 && secure.body.contains("Design review"), "\(secure.body)")
        #expect(try await Self.curl(["http://127.0.0.1:\(port)/healthz"], timeout: 10).status != 200)
        let opened = try await Self.curl(["--cacert", folder + "/cert.pem", base + "/?token=\(token)"])
        #expect(opened.status == 303 && opened.head.contains("Secure"), "\(opened.head)")
        let page = try await CommandLineTests().calwatch(
            ["next", "--open-page", "--config", folder + "/config.yml"],
            environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
        #expect(page.output.hasPrefix(base + "/?token="))
    }

    /// `GET /v1/day`: each occurrence of the day with its kind and join link, the overlaps marked on both sides, an
    /// invitation not answered, and a refused question that says what it wanted.
    @Test func theDayShowsConflictsAndUnansweredInvitations() async throws {
        let invitation = [
            "ORGANIZER:mailto:boss@example.org",
            "ATTENDEE;PARTSTAT=NEEDS-ACTION;CN=Me:mailto:me@example.org",
        ]
        let (folder, _) = try Self.prepare(
            "calwatch-server-day",
            items: [
                "review.ics": Self.item(
                    "review", "Design review", start: 3600, end: 7200,
                    extra: ["DESCRIPTION:Join https://meet.google.com/abc-defg-hij"]),
                "budget.ics": Self.item("budget", "Budget", start: 5400, end: 9000, extra: invitation),
                "lunch.ics": Self.item("lunch", "Lunch", start: 9000, end: 10_800),
            ])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let daemon = try await Self.start(folder)
        defer { daemon.terminate() }
        let socket = ["--unix-socket", folder + "/state/journal.db.sock"]
        let soon = Date().addingTimeInterval(3600)
        let day = ISO8601DateFormatter.string(
            from: soon, timeZone: TimeZone(identifier: Self.zone)!, formatOptions: [.withFullDate])
        let fetched = try await Self.curl(socket + ["http://x/v1/day?date=\(day)"])
        #expect(fetched.status == 200, "\(fetched.body)")
        let daySchema = EventSchemaTests.schema(named: "calwatch-day.schema.json")
        let validator = EventSchemaTests.Validator(
            root: daySchema, documents: ["calwatch-event.schema.json": EventSchemaTests.schema])
        #expect(validator.validate(try EventSchemaTests.JSON.parse(fetched.body), daySchema) == [])
        let sheet = try #require(try JSONSerialization.jsonObject(with: Data(fetched.body.utf8)) as? [String: Any])
        let items = try #require(sheet["items"] as? [[String: Any]])
        func item(_ uid: String) -> [String: Any]? {
            items.first { ($0["occurrence"] as? [String: Any])?["uid"] as? String == uid }
        }
        // Lunch starts as the budget ends: no overlap. Across midnight the day may hold only some of them.
        if let review = item("review"), let budget = item("budget") {
            #expect((review["conflicts"] as? [String])?.count == 1 && (budget["conflicts"] as? [String])?.count == 1)
            #expect((review["conflicts"] as? [String])?.first == budget["subject"] as? String)
            #expect(budget["needsAnswer"] as? Bool == true && review["needsAnswer"] as? Bool == false)
            let meeting = (review["occurrence"] as? [String: Any])?["meeting"] as? [String: Any]
            #expect(meeting?["joinURL"] as? String == "https://meet.google.com/abc-defg-hij", "\(review)")
        }
        if let lunch = item("lunch") { #expect((lunch["conflicts"] as? [String]) == []) }
        #expect(items.count >= 1)
        #expect(try await Self.curl(socket + ["http://x/v1/next?kinds=meetings"]).status == 400)
        let meetings = try await Self.curl(socket + ["http://x/v1/next?kinds=meeting&format=text&horizon=12h"])
        #expect(meetings.status == 200 && meetings.body.contains("Design review"), "\(meetings.body)")
        let bad = try await Self.curl(socket + ["http://x/v1/day?date=tomorrow"])
        #expect(bad.status == 400 && bad.body.contains("2026-11-28"), "\(bad.body)")
        let far = try await Self.curl(socket + ["http://x/v1/day?date=2099-01-01"])
        #expect(far.status == 409 && far.body.contains("it holds"), "\(far.body)")
    }

    /// The page's next card shows a flight at a glance: the seat its boarding pass gives (IATA Resolution 792's own
    /// example pass, dated the day of the calendar's flight two hours from now), after the time and before the time
    /// to leave.
    @Test func thePagesNextCardShowsTheFlightsSeatFromItsPass() async throws {
        let toronto = TimeZone(identifier: "America/Toronto")!
        let departure = Date().addingTimeInterval(7200)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = toronto
        let day = try #require(calendar.ordinality(of: .day, in: .year, for: departure))
        let local = DateFormatter()
        local.dateFormat = "yyyyMMdd'T'HHmmss"
        local.timeZone = toronto
        let item = Self.item("ac834", "Flight AC 834 YUL → FRA", start: 7200, end: 7200 + 26_100).replacingOccurrences(
            of: #"DTSTART:\d{8}T\d{6}Z"#, with: "DTSTART;TZID=America/Toronto:" + local.string(from: departure),
            options: .regularExpression)
        let (folder, _) = try Self.prepare(
            "calwatch-server-flight", items: ["ac834.ics": item], extra: "passes: [passes]\nhorizon: 2d")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/passes", withIntermediateDirectories: true)
        try ("M1DESMARAIS/LUC       EABC123 YULFRAAC 0834 " + String(format: "%03d", day) + "J001A0025 100")
            .write(toFile: folder + "/passes/ac834.bcbp", atomically: true, encoding: .utf8)
        let daemon = try await Self.start(folder)
        defer { daemon.terminate() }
        let page = try await Self.curl(["--unix-socket", folder + "/state/journal.db.sock", "http://x/?fragment=1"])
        #expect(page.status == 200, "\(page.body)")
        #expect(page.body.contains("<h1>Flight AC 834 YUL → FRA</h1>"), "\(page.body)")
        #expect(page.body.contains(#"<p class="flight">Seat 1A</p>"#), "\(page.body)")
    }

    /// `POST /v1/answers/…` does what `calwatch snooze` and `dismiss` do, with their outcomes as statuses: a
    /// dismissal applied is 200, a snooze past the end is a 409 with the reason, a body it cannot read a 400.
    @Test func answersAreAppliedOrRefusedWithTheReason() async throws {
        let (folder, _) = try Self.prepare(
            "calwatch-server-answers",
            items: ["review.ics": Self.item("review", "Design review", start: 60, end: 120)],
            extra: "reminders: { offsets: [55s] }")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let daemon = try await Self.start(folder)
        defer { daemon.terminate() }
        let socket = ["--unix-socket", folder + "/state/journal.db.sock"]
        try await eventually("the reminder sent") {
            SinkFixtures.lines(folder + "/events.jsonl").contains { $0.contains("calwatch.reminderDue") }
        }
        let reminder = try #require(
            SinkFixtures.lines(folder + "/events.jsonl").first { $0.contains("calwatch.reminderDue") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(reminder.utf8)) as? [String: Any])
        let id = try #require(object["id"] as? String)
        let subject = try #require(object["subject"] as? String)
        func post(_ kind: String, _ body: String) async throws -> Fetched {
            try await Self.curl(
                socket + [
                    "-X", "POST", "-H", "Content-Type: application/json", "--data", body, "http://x/v1/answers/\(kind)",
                ])
        }
        let past = try await post("snooze", #"{"event":"\#(id)","for":"1h"}"#)
        #expect(past.status == 409 && past.body.contains(#""outcome":"refused""#), "\(past.body)")
        #expect(try await post("snooze", #"{"event":"\#(id)","for":"forever"}"#).status == 400)
        #expect(try await post("snooze", "not json").status == 400)
        #expect(try await post("shout", #"{"event":"\#(id)"}"#).status == 400)
        let unknown = try await post("dismiss", #"{"event":"00000000000000000000000000000000"}"#)
        #expect(unknown.status == 409 && unknown.body.contains("no event"), "\(unknown.body)")
        let dismissed = try await post("dismiss", #"{"event":"\#(subject)"}"#)
        #expect(dismissed.status == 200 && dismissed.body.contains(#""outcome":"applied""#), "\(dismissed.body)")
        try await eventually("the dismissal on the stream") {
            SinkFixtures.lines(folder + "/events.jsonl").contains { $0.contains("calwatch.reminderDismissed") }
        }
        // The day says so.
        let day = try await Self.curl(socket + ["http://x/v1/day"])
        #expect(day.body.contains(#""dismissed":true"#) && day.body.contains(#""acknowledged":false"#), "\(day.body)")
        // After a dismissal a snooze has nothing to bring back.
        let afterDismiss = try await post("snooze", #"{"event":"\#(id)","for":"20s"}"#)
        #expect(
            afterDismiss.status == 409 && afterDismiss.body.contains(#""outcome":"refused""#), "\(afterDismiss.body)")
        let large = String(repeating: "x", count: 20_000)
        #expect(try await post("dismiss", #"{"event":"\#(large)"}"#).status == 413)
    }

    /// `GET /v1/events` carries what the JSON Lines sink writes, line for line; a client that goes away and comes
    /// back with `Last-Event-ID`, across a restart of the daemon, gets every event once.
    @Test func theEventStreamResumesAcrossARestartAndMissesNothing() async throws {
        // Far enough ahead that a slow start on a busy machine misses no reminder (one whose start has passed while
        // the daemon is down would be dropped, not late).
        let begun = Date()
        let (folder, _) = try Self.prepare(
            "calwatch-server-stream",
            items: ["standup.ics": Self.item("standup", "Standup", start: 90, end: 110)],
            extra: """
                reminders: { offsets: [85s, 70s, 55s, 40s, 25s] }
                liveActivity: { lead: 88s, updateEvery: 5s, maxDuration: 1h }
                """)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let socket = folder + "/state/journal.db.sock"
        /// Reads the stream from `after` for `seconds`; each event's id and data.
        func read(after: String, seconds: Int) async throws -> [(id: Int, data: String)] {
            let arguments = ["-N", "--unix-socket", socket, "-H", "Last-Event-ID: \(after)", "http://x/v1/events"]
            let body = try await Self.curl(arguments, timeout: seconds).body
            var events: [(Int, String)] = []
            for block in body.components(separatedBy: "\n\n") {
                let lines = block.split(separator: "\n")
                guard let id = lines.first(where: { $0.hasPrefix("id: ") }).flatMap({ Int($0.dropFirst(4)) }),
                    let data = lines.first(where: { $0.hasPrefix("data: ") })
                else { continue }
                events.append((id, String(data.dropFirst(6))))
            }
            return events
        }
        var daemon = try await Self.start(folder)
        let first = try await read(after: "0", seconds: 12)
        #expect(!first.isEmpty)
        try await Self.stop(daemon)
        daemon = try await Self.start(folder)
        defer { daemon.terminate() }
        let last = try #require(first.last).id
        // Until the meeting has ended (110 s after it was written) and its live activity with it.
        let second = try await read(after: "\(last)", seconds: max(15, Int(begun.timeIntervalSinceNow + 125)))
        try await Self.stop(daemon)
        let streamed = (first + second).map(\.data)
        let ids = (first + second).map(\.id)
        #expect(Set(ids).count == ids.count, "nothing twice")
        #expect(ids == ids.sorted(), "in the journal's order")
        let written = SinkFixtures.lines(folder + "/events.jsonl")
        #expect(streamed == written, "every event once, as the JSON Lines sink wrote it")
        #expect(written.contains { $0.contains("calwatch.liveActivityEnd") })
        #expect(written.filter { $0.contains("calwatch.reminderDue") }.count == 5)
    }

    /// The page in a real browser: headless Chromium reads the next meeting's card and the day from the DOM, a
    /// Snooze click reaches the journal (reminderSnoozed in the JSON Lines sink), and a meeting written while the
    /// page is open appears on it without a reload.
    @Test func thePageInABrowserShowsTheDaySnoozesAndFollowsTheStream() async throws {
        let (folder, port) = try Self.prepare(
            "calwatch-server-page",
            items: [
                "review.ics": Self.item(
                    "review", "Design <b>review</b>", start: 180, end: 1800,
                    extra: ["DESCRIPTION:Join https://meet.google.com/abc-defg-hij"]),
                "lunch.ics": Self.item("lunch", "Lunch", start: 900, end: 2700),
            ],
            extra: "reminders: { offsets: [175s] }")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let daemon = try await Self.start(folder)
        defer { daemon.terminate() }
        try await eventually("the reminder sent") {
            SinkFixtures.lines(folder + "/events.jsonl").contains { $0.contains("calwatch.reminderDue") }
        }
        let token = try String(contentsOfFile: folder + "/state/journal.db.token", encoding: .utf8)
            .trimmingCharacters(in: .newlines)
        // Read with JavaScript off first: the day is in the HTML itself, the calendar's markup escaped.
        let plain = try await Self.curl(["-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(port)/"])
        #expect(plain.body.contains("Design &lt;b&gt;review&lt;/b&gt;") && plain.body.contains("Lunch"))
        #expect(!plain.body.contains("<b>review"))
        // Its reminder comes about 25 s after it is written (the page has been read by then).
        let later = Self.item("incident", "Incident call", start: 200, end: 1200)
        let report = try await runProgram(
            [
                "/usr/bin/python3", ConfigurationTests.repository + "/scripts/page-check.py",
                "--url", "http://127.0.0.1:\(port)/?token=\(token)", "--events", folder + "/events.jsonl",
                "--write", folder + "/cal/work/incident.ics", "--item", later,
            ])
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any])
        #expect(seen["nextTitle"] as? String == "Design <b>review</b>", "\(seen)")
        #expect(seen["urgency"] as? String == "now", "\(seen)")
        #expect(seen["join"] as? String == "https://meet.google.com/abc-defg-hij", "\(seen)")
        #expect((seen["titles"] as? [String])?.contains("Lunch") == true, "\(seen)")
        #expect((seen["overlaps"] as? [String])?.isEmpty == false, "\(seen)")
        #expect(seen["snoozed"] as? Bool == true && seen["said"] as? String == "Done.", "\(seen)")
        #expect(seen["appearedWithoutReload"] as? Bool == true, "\(seen)")
        #expect(SinkFixtures.lines(folder + "/events.jsonl").contains { $0.contains("calwatch.reminderSnoozed") })
    }
}
