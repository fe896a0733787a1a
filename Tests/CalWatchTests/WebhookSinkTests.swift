import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRemote
@testable import CalWatchWebhook

/// The webhook sink against a real HTTP receiver (scripts/webhook-server.py) that checks every signature with
/// Python's own HMAC, through `calwatch replay` as a user runs it.
@Suite struct WebhookSinkTests {
    /// The Standard Webhooks form of a secret: `whsec_` and its bytes in base64.
    static let secret = "whsec_" + Data("calwatch-test-secret-0123456789".utf8).base64EncodedString()

    static let items = """
        BEGIN:VEVENT\r
        UID:standup\r
        DTSTAMP:20270101T000000Z\r
        DTSTART:20270303T100000Z\r
        DTEND:20270303T101500Z\r
        SUMMARY:Standup «Café» \\; done\r
        LOCATION:https://meet.google.com/abc-defg-hij\r
        END:VEVENT\r

        """

    /// Replays the morning through a JSON Lines sink and a webhook to `server`; returns the JSON lines, the requests
    /// the receiver logged, and what the replay said on standard error.
    static func replay(
        to server: FeedServer, mode: String = "structured", timeout: String = "10s", sink: String? = nil,
        items: String = items
    ) async throws -> (
        lines: [String], requests: [[String: Any]], errors: String
    ) {
        let secretFile = server.folder + "/secret"
        try (secret + "\n").write(toFile: secretFile, atomically: true, encoding: .utf8)
        let folder = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/cal", withIntermediateDirectories: true)
        try NotifySinkTests.calendar(items).write(toFile: folder + "/cal/items.ics", atomically: true, encoding: .utf8)
        try """
        calendars: [cal]
        timezone: UTC
        reminders: { offsets: [15m, 5m] }
        liveActivity: { lead: 5m, updateEvery: 5m }
        sinks:
          - { type: jsonl, path: events.jsonl }
        \(sink ?? """
              - type: webhook
                url: \(server.url("/hooks/calwatch-secret-path"))
                timeout: \(timeout)
                mode: \(mode)
                secretFile: \(secretFile)
                headers: { X-Team: ops }
            """)
        """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let replay = try await CommandLineTests().calwatch([
            "replay", "--config", folder + "/config.yml", "--from", "2027-03-03T09:00:00Z", "--to",
            "2027-03-03T11:00:00Z",
        ])
        #expect(replay.status == 0, "\(replay.errors)")
        let requests = ((try? String(contentsOfFile: server.folder + "/requests.jsonl", encoding: .utf8)) ?? "")
            .split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        return (SinkFixtures.lines(folder + "/events.jsonl"), requests, replay.errors)
    }

    static func headers(_ request: [String: Any]) -> [String: String] { request["headers"] as? [String: String] ?? [:] }

    @Test func eachEventIsPostedOnceSignedAsAStructuredCloudEvent() async throws {
        try await FeedServer.with(script: "webhook-server.py", arguments: [Self.secret]) { server in
            let (lines, requests, _) = try await Self.replay(to: server)
            #expect(lines.count >= 5, "\(lines)")
            // One request per event, in order, each body the event as the JSON Lines sink wrote it.
            #expect(requests.map { $0["body"] as? String ?? "" } == lines)
            for request in requests {
                let headers = Self.headers(request)
                #expect(request["verified"] as? Bool == true, "\(headers)")
                #expect(headers["content-type"]?.hasPrefix("application/cloudevents+json") == true)
                #expect(headers["x-team"] == "ops")
                let body = (request["body"] as? String) ?? ""
                #expect(body.contains(#""id":"\#(headers["webhook-id"] ?? "-")""#), "\(headers)")
                #expect(headers["webhook-signature"]?.hasPrefix("v1,") == true)
            }
        }
    }

    /// Batch mode: the events in arrays of at most `batchSize` (CloudEvents' batched content mode), signed; the
    /// same events in the same order as the JSON Lines sink wrote them, each once.
    @Test func batchModeSendsArraysOfEvents() async throws {
        try await FeedServer.with(script: "webhook-server.py", arguments: [Self.secret]) { server in
            let sink = """
                  - type: webhook
                    url: \(server.url("/hooks/batch"))
                    mode: batch
                    batchSize: 2
                    secretFile: \(server.folder)/secret
                """
            let (lines, requests, _) = try await Self.replay(to: server, sink: sink)
            #expect(lines.count >= 5)
            #expect(requests.count == (lines.count + 1) / 2, "\(requests.count) requests for \(lines.count) events")
            var posted: [String] = []
            for request in requests {
                let headers = Self.headers(request)
                #expect(request["verified"] as? Bool == true, "\(headers)")
                #expect(headers["content-type"]?.hasPrefix("application/cloudevents-batch+json") == true)
                let body = Data(((request["body"] as? String) ?? "").utf8)
                let events = try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
                #expect((1...2).contains(events.count))
                #expect(headers["webhook-id"] == "\(events.first?["id"] as? String ?? "-")-\(events.count)")
                posted += events.map {
                    String(
                        decoding: try! JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self
                    )
                }
            }
            let written = lines.map {
                String(
                    decoding: try! JSONSerialization.data(
                        withJSONObject: try! JSONSerialization.jsonObject(with: Data($0.utf8)), options: [.sortedKeys]),
                    as: UTF8.self)
            }
            #expect(posted == written)
        }
    }

    /// Binary mode: the attributes as `ce-` headers, the data alone as the body, still signed.
    @Test func binaryModeSendsTheAttributesAsHeaders() async throws {
        try await FeedServer.with(script: "webhook-server.py", arguments: [Self.secret]) { server in
            let (lines, requests, _) = try await Self.replay(to: server, mode: "binary")
            #expect(requests.count == lines.count && !requests.isEmpty)
            let first = try #require(requests.first)
            let headers = Self.headers(first)
            #expect(first["verified"] as? Bool == true)
            #expect(headers["ce-specversion"] == "1.0" && headers["ce-id"] == headers["webhook-id"], "\(headers)")
            #expect(headers["ce-type"]?.hasPrefix("calwatch.") == true, "\(headers)")
            #expect(headers["content-type"] == "application/json")
            let data = try JSONSerialization.jsonObject(with: Data(((first["body"] as? String) ?? "").utf8))
            #expect((data as? [String: Any])?["specversion"] == nil, "the body is the data, not the event")
            // The same event as the JSON line of its id: every attribute in a header, the body its data.
            let line = try #require(lines.first { $0.contains(#""id":"\#(headers["ce-id"] ?? "")""#) })
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            for (attribute, value) in event where attribute != "data" && attribute != "datacontenttype" {
                #expect(headers["ce-" + attribute]?.removingPercentEncoding == "\(value)", "\(attribute)")
            }
            let sorted = { (object: Any) in try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) }
            #expect(try sorted(data) == sorted(try #require(event["data"])))
        }
    }

    /// The CloudEvents HTTP binding (3.1.3.2): in a `ce-` header, space, double quote, percent and anything outside
    /// printable ASCII are percent-encoded, and a receiver decoding them gets the attribute back.
    @Test func binaryModePercentEncodesWhatTheBindingSays() async throws {
        try await FeedServer.with(script: "webhook-server.py", arguments: [Self.secret]) { server in
            let uid = #"stand up "50%" café"#
            let (lines, requests, _) = try await Self.replay(
                to: server, mode: "binary",
                items: Self.items.replacingOccurrences(of: "UID:standup", with: "UID:" + uid))
            let first = try #require(requests.first)
            let subject = try #require(Self.headers(first)["ce-subject"])
            #expect(subject.hasPrefix("stand%20up%20%2250%25%22%20caf%C3%A9/"), "\(subject)")
            #expect(subject.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) && $0 != "\"" })
            let line = try #require(lines.first)
            let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(subject.removingPercentEncoding == event?["subject"] as? String)
        }
    }

    /// A receiver that asks to be left alone (503 with `Retry-After: 1`, three times) is waited for as it asks,
    /// within --wait-for-sinks, and a 2xx is a delivery whatever its body (1 MiB here: 64 KiB read, the rest not):
    /// the event is posted four times in all, nothing after it twice, and the replay ends well.
    @Test func aReceiverThatAsksToWaitIsWaitedForAndA2xxWithALargeBodyDelivers() async throws {
        try await FeedServer.with(script: "webhook-server.py", arguments: [Self.secret]) { server in
            try "503 1\n503 1\n503 1\n200 big\n200 big\n".write(
                toFile: server.folder + "/answers", atomically: true, encoding: .utf8)
            let (lines, requests, errors) = try await Self.replay(to: server)
            let statuses = requests.map { $0["status"] as? Int ?? 0 }
            let ids = requests.map { Self.headers($0)["webhook-id"] ?? "" }
            #expect(statuses.prefix(5) == [503, 503, 503, 200, 200], "\(statuses)")
            #expect(Set(ids.prefix(4)).count == 1 && ids[4] != ids[0], "\(ids)")
            #expect(requests.count == lines.count + 3, "\(statuses)")
            #expect(!errors.contains("larger than"), "\(errors)")
        }
    }

    /// A receiver that is busy (503 with Retry-After, then 429) gets the event again later, the same id each time,
    /// and nothing twice once it took it; a refusal (400, or a redirect) is logged with its first line and not tried
    /// again.
    @Test func aBusyReceiverGetsTheEventAgainAndARefusalIsNotRetried() async throws {
        try await FeedServer.with(script: "webhook-server.py", arguments: [Self.secret]) { server in
            try "503 1\n429\n200\n400\n302\n".write(
                toFile: server.folder + "/answers", atomically: true, encoding: .utf8)
            let (lines, requests, errors) = try await Self.replay(to: server)
            let ids = requests.map { Self.headers($0)["webhook-id"] ?? "" }
            let statuses = requests.map { $0["status"] as? Int ?? 0 }
            // The first event three times (503, 429, 200), the second refused once, the rest once each.
            // A redirect is a refusal too: not followed, not tried again.
            #expect(statuses.prefix(5) == [503, 429, 200, 400, 302], "\(statuses)")
            #expect(Set(ids.prefix(3)).count == 1 && ids[3] != ids[0], "\(ids)")
            #expect(requests.count == lines.count + 2, "\(statuses)")
            #expect(requests.allSatisfy { $0["verified"] as? Bool == true })
            #expect(errors.contains("refused event") && errors.contains("400 bad event: no"), "\(errors)")
            #expect(!errors.contains("secret-path"), "the address's path is not logged: \(errors)")
        }
    }

    /// A replay through `preset` at `path` of `server` with `token` as its secret: the JSON lines, what the
    /// receiver got, and the first request's JSON body.
    static func push(_ preset: String, token: String, path: String, to server: FeedServer) async throws -> (
        lines: [String], requests: [[String: Any]], first: [String: Any]
    ) {
        try (token + "\n").write(toFile: server.folder + "/token", atomically: true, encoding: .utf8)
        let (lines, requests, _) = try await replay(
            to: server,
            sink: """
                  - type: webhook
                    preset: \(preset)
                    url: \(server.url(path))
                    secretFile: \(server.folder)/token
                """)
        let body = Data(((requests.first?["body"] as? String) ?? "").utf8)
        return (lines, requests, (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:])
    }

    /// The ntfy preset: reminders (not live-activity updates) as ntfy's JSON publishing documents it, to the
    /// server's root with the topic inside, the access token as a bearer, a Join action for the meeting's link.
    @Test func ntfyGetsTheRemindersInItsOwnShape() async throws {
        try await FeedServer.with(script: "webhook-server.py") { server in
            let (lines, requests, message) = try await Self.push(
                "ntfy", token: "tk_calwatchtesttoken", path: "/calwatch-alerts", to: server)
            let reminders = lines.filter { $0.contains("calwatch.reminderDue") }
            #expect(requests.count == reminders.count && reminders.count == 2, "\(requests.count) requests")
            let first = try #require(requests.first)
            #expect(first["path"] as? String == "/")
            #expect(Self.headers(first)["authorization"] == "Bearer tk_calwatchtesttoken")
            #expect(message["topic"] as? String == "calwatch-alerts")
            #expect(message["title"] as? String == "Standup «Café» ; done in 15 min", "\(message)")
            #expect((message["message"] as? String)?.contains("10:00–10:15 · Google Meet") == true, "\(message)")
            #expect(message["priority"] as? Int == 3)
            let actions = try #require(message["actions"] as? [[String: String]])
            #expect(actions == [["action": "view", "label": "Join", "url": "https://meet.google.com/abc-defg-hij"]])
            // The last call is high priority.
            let last = try JSONSerialization.jsonObject(with: Data(((requests.last?["body"] as? String) ?? "").utf8))
            #expect((last as? [String: Any])?["priority"] as? Int == 4)
        }
    }

    /// ntfy's Snooze and Dismiss buttons, end to end with the daemon: `calwatch watch` pushes a reminder whose
    /// `http` actions post to the daemon's local server; the Snooze button's request snoozes the reminder (a
    /// `reminderSnoozed` event follows), and a token changed by a byte, or moved to another answer, is refused.
    /// Real time, with margins: the reminder is due 30 s after the daemon reads the calendar.
    @Test func ntfyButtonsSnoozeThroughTheDaemonsLocalServer() async throws {
        try await FeedServer.with(script: "webhook-server.py") { server in
            let folder = server.folder
            let port = try RadicaleServer.freePort()
            try FileManager.default.createDirectory(atPath: folder + "/cal/work", withIntermediateDirectories: true)
            try """
            calendars: [cal]
            timezone: UTC
            state: state/journal.db
            reminders: { offsets: [30s] }
            serve: { listen: "127.0.0.1:\(port)" }
            sinks:
              - { type: jsonl, path: events.jsonl }
              - type: webhook
                preset: ntfy
                url: \(server.url("/alerts"))
                answers: { snooze: 5m }
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let watch = try WatchCommandTests.watch(in: folder)
            defer { if watch.isRunning { watch.terminate() } }
            func log() -> String { (try? String(contentsOfFile: folder + "/log.txt", encoding: .utf8)) ?? "" }
            try await eventually("the daemon watching and serving") {
                log().contains("watching") && log().contains("serving on http://127.0.0.1:\(port)")
            }
            let start = Date().addingTimeInterval(60)
            let format = DateFormatter()
            format.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
            format.timeZone = TimeZone(identifier: "UTC")
            try NotifySinkTests.calendar(
                """
                BEGIN:VEVENT\r
                UID:standup\r
                DTSTAMP:20270101T000000Z\r
                DTSTART:\(format.string(from: start))\r
                DURATION:PT1H\r
                SUMMARY:Standup\r
                END:VEVENT\r

                """
            ).write(toFile: folder + "/cal/work/standup.ics", atomically: true, encoding: .utf8)
            func requests() -> [[String: Any]] {
                ((try? String(contentsOfFile: folder + "/requests.jsonl", encoding: .utf8)) ?? "").split(
                    separator: "\n"
                )
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            }
            try await eventually("the reminder pushed") { !requests().isEmpty }
            let message = try #require(
                try JSONSerialization.jsonObject(with: Data(((requests()[0]["body"] as? String) ?? "").utf8))
                    as? [String: Any])
            let actions = try #require(message["actions"] as? [[String: Any]], "\(message)")
            // As ntfy documents an http action: action, label, url, method, clear; three actions at most.
            #expect(actions.map { $0["label"] as? String } == ["Snooze 5m", "Dismiss"] && actions.count <= 3)
            for action in actions {
                #expect(action["action"] as? String == "http" && action["method"] as? String == "POST")
                #expect(
                    Set(action.keys).isSubset(of: ["action", "label", "url", "method", "clear", "headers", "body"]))
            }
            let snooze = try #require((actions[0]["url"] as? String).flatMap(URL.init(string:)))
            let dismiss = try #require((actions[1]["url"] as? String).flatMap(URL.init(string:)))
            func post(_ url: URL) async -> (Int, String) {
                switch await HTTPClient.send(HTTPClient.Request(method: "POST", url: url)) {
                case .success(let answer): (answer.status, String(decoding: answer.body, as: UTF8.self))
                case .failure(let failure): (0, failure.reason)
                }
            }
            // Forged: the last byte of the token changed, and the Snooze token under the Dismiss answer.
            var forged = snooze.absoluteString
            forged = String(forged.dropLast()) + (forged.hasSuffix("A") ? "B" : "A")
            #expect(await post(try #require(URL(string: forged))).0 == 403)
            let swapped = dismiss.deletingLastPathComponent().appendingPathComponent(snooze.lastPathComponent)
            #expect(await post(swapped).0 == 403)
            // Only a POST is an answer; anything else asks for the server's token.
            #expect(
                await HTTPClient.send(HTTPClient.Request(method: "GET", url: snooze)).map(\.status) == .success(401))
            // The real button: snoozed, and the daemon says so on the stream.
            let (status, text) = await post(snooze)
            #expect(status == 200 && text.contains(#""outcome":"applied""#), "\(status) \(text)")
            try await eventually("the reminder snoozed") {
                SinkFixtures.lines(folder + "/events.jsonl").contains { $0.contains("calwatch.reminderSnoozed") }
            }
        }
    }

    /// The Gotify preset: POST /message with the application token and the click URL extra Gotify documents.
    @Test func gotifyGetsTheRemindersInItsOwnShape() async throws {
        try await FeedServer.with(script: "webhook-server.py") { server in
            let (_, requests, message) = try await Self.push(
                "gotify", token: "AppTokenFromGotify", path: "", to: server)
            #expect(requests.count == 2)
            let first = try #require(requests.first)
            #expect(first["path"] as? String == "/message")
            #expect(Self.headers(first)["x-gotify-key"] == "AppTokenFromGotify")
            #expect(
                message["title"] as? String == "Standup «Café» ; done in 15 min" && message["priority"] as? Int == 5)
            let click = ((message["extras"] as? [String: Any])?["client::notification"] as? [String: Any])?["click"]
            #expect((click as? [String: String])?["url"] == "https://meet.google.com/abc-defg-hij", "\(message)")
        }
    }

    /// `check` reads each webhook's secret once: a file that is not there is an error naming it; one that is there
    /// passes, and its secret is never printed. It reaches the receiver once, sending no event.
    @Test func checkReadsTheSecretAndReachesTheReceiver() async throws {
        try await FeedServer.with(script: "webhook-server.py") { server in
            try await Self.check(url: server.url("/hooks/secret-path"))
            #expect(!FileManager.default.fileExists(atPath: server.folder + "/requests.jsonl"), "no event sent")
        }
    }

    static func check(url: String) async throws {
        let folder = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try (Self.secret + "\n").write(toFile: folder + "/secret", atomically: true, encoding: .utf8)
        for (file, fails) in [("missing", true), ("secret", false)] {
            try """
            calendars: []
            sinks: [{ type: webhook, url: "\(url)", secretFile: \(folder)/\(file) }]
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let check = try await CommandLineTests().calwatch(["check", "--config", folder + "/config.yml"])
            let said = check.output + check.errors
            #expect((check.status != 0) == fails, "\(said)")
            #expect(said.contains("cannot read the secret from \(folder)/missing") == fails, "\(said)")
            #expect(!said.contains(String(Self.secret.dropFirst(6))))
            #expect(said.contains("answers (HTTP 501 to OPTIONS)") && !said.contains("secret-path"), "\(said)")
        }
    }

    /// The filters hooks have (`on`, `kinds`, `offsets`, `calendars`): only the 5-minute reminder is posted.
    @Test func filtersChooseWhatIsPosted() async throws {
        try await FeedServer.with(script: "webhook-server.py") { server in
            let (lines, requests, _) = try await Self.replay(
                to: server,
                sink: """
                      - type: webhook
                        url: \(server.url("/hooks"))
                        on: [reminderDue]
                        offsets: [5m]
                        kinds: [meeting]
                    """)
            let posted = requests.compactMap { $0["body"] as? String }
            #expect(posted.count == 1 && lines.count > 1, "\(posted) \(lines)")
            #expect(posted.first?.contains(#""secondsBefore":300"#) == true, "\(posted)")
        }
    }

    /// A receiver that hangs past the timeout, resets the connection, then fails with 500: the event comes again
    /// each time, and once more after it took it nothing repeats.
    @Test func aHangAResetAndA500AreTriedAgain() async throws {
        try await FeedServer.with(script: "webhook-server.py", arguments: [Self.secret]) { server in
            try "hang\nreset\n500\n".write(toFile: server.folder + "/answers", atomically: true, encoding: .utf8)
            let (lines, requests, _) = try await Self.replay(to: server, timeout: "3s")
            // Only answered requests are logged: the 500, then the events with 200, each at least once (a busy
            // machine may time out a request the receiver did take: at least once, the same id).
            let statuses = requests.map { $0["status"] as? Int ?? 0 }
            #expect(statuses.first == 500 && statuses.dropFirst().allSatisfy { $0 == 200 }, "\(statuses)")
            let delivered = requests.dropFirst().compactMap { $0["body"] as? String }
            #expect(
                Set(delivered) == Set(lines) && delivered.first == lines.first, "\(delivered.count) of \(lines.count)")
        }
    }
}
