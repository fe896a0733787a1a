import CalWatchCore
import Foundation
import Logging
import Testing

@testable import CalWatchRemote

/// Microsoft 365 accounts against `scripts/microsoft-server.py`, a stand-in for the identity platform and Graph in
/// their documented shapes (the events below follow Graph's `calendarView/delta` example): signing in by device code
/// and by the browser's loopback redirect with PKCE, a first sync and incremental ones through delta links, a round
/// Graph forgot (410), throttling, a refresh token rotated at every refresh and a revoked one, and no token anywhere
/// but the token file.
@Suite(.timeLimit(.minutes(3))) struct AccountTests {
    static let clientId = "00000000-0000-0000-0000-0000000000c1"
    static var user: [String: Any] {
        [
            "id": "87d349ed-44d7-43e1-9a83-5f2406dee5bd", "displayName": "Megan Bowen", "mail": "MeganB@contoso.com",
            "userPrincipalName": "MeganB@contoso.com",
        ]
    }

    /// An event as Graph's documentation shows one, at `start` (UTC, `2026-12-01T09:00:00`) for an hour.
    static func event(
        _ id: String, _ subject: String, start: String, minutes: Int = 60, answer: String = "accepted",
        teams: Bool = false, reminder: Int? = 15, cancelled: Bool = false, showAs: String = "busy"
    ) -> [String: Any] {
        let formatter = ISO8601DateFormatter()
        let begin = formatter.date(from: start + "Z")!
        let end = formatter.string(from: begin.addingTimeInterval(Double(minutes) * 60)).dropLast()
        var event: [String: Any] = [
            "id": "AAMkAGI2T" + id, "iCalUId": "040000008200E00074C5B7101A82E008" + id, "subject": subject,
            "bodyPreview": "Let's kick-start this event planning!",
            "start": ["dateTime": start + ".0000000", "timeZone": "UTC"],
            "end": ["dateTime": end + ".0000000", "timeZone": "UTC"],
            "originalStartTimeZone": "W. Europe Standard Time",
            "isAllDay": false, "isCancelled": cancelled, "showAs": showAs, "type": "singleInstance",
            "location": ["displayName": "Conf Room 3"], "responseStatus": ["response": answer],
            "isReminderOn": reminder != nil, "reminderMinutesBeforeStart": reminder ?? 0,
            "organizer": ["emailAddress": ["name": "Dana Swope", "address": "DanaS@contoso.com"]],
            "attendees": [
                [
                    "type": "required", "status": ["response": "none"],
                    "emailAddress": ["name": "Megan Bowen", "address": "MeganB@contoso.com"],
                ],
                [
                    "type": "required", "status": ["response": "accepted"],
                    "emailAddress": ["name": "Alex Wilber", "address": "AlexW@contoso.com"],
                ],
            ],
            "lastModifiedDateTime": "2026-11-20T10:00:00.0000000Z",
        ]
        if teams {
            event["isOnlineMeeting"] = true
            event["onlineMeetingProvider"] = "teamsForBusiness"
            event["onlineMeeting"] = [
                "joinUrl": "https://teams.microsoft.com/l/meetup-join/19%3ameeting_\(id)%40thread.v2/0"
            ]
        }
        return event
    }

    /// What the stand-in serves: one calendar named Calendar with `events`, another named Birthdays.
    static func serve(_ events: [[String: Any]], in server: FeedServer) throws {
        let calendars: [String: Any] = [
            "user": user,
            "calendars": [
                ["id": "AAMkAGI2TGuLAAA=", "name": "Calendar", "isDefaultCalendar": true, "events": events],
                ["id": "AAMkAGI2TGuLBBB=", "name": "Birthdays", "isDefaultCalendar": false, "events": []],
            ],
        ]
        try JSONSerialization.data(withJSONObject: calendars).write(
            to: URL(fileURLWithPath: server.folder + "/calendars.json"), options: .atomic)
    }

    static func settings(_ server: FeedServer, calendars: [String] = ["Calendar"]) -> AccountSettings {
        let address = URL(string: server.url(""))!
        return AccountSettings(
            name: "work", clientId: clientId, tenant: "organizations", calendars: calendars, login: address,
            graph: address)
    }

    /// `folder`/config.yml with the account `work` on the stand-in (`keys`: more of its own, `rest`: top-level keys
    /// after it), and the environment the runs on it share: state and cache in the folder.
    static func configured(
        _ server: FeedServer, in folder: String = SinkFixtures.folder(), keys: [String] = [], rest: String = ""
    ) throws -> (folder: String, environment: [String: String]) {
        let more = keys.map { "\n    " + $0 }.joined()
        try write(
            """
            accounts:
              - name: work
                provider: microsoft
                clientId: \(clientId)\(more)
                endpoints: { login: "\(server.url(""))", graph: "\(server.url(""))" }
            \(rest)
            """, folder + "/config.yml")
        return (folder, ["XDG_STATE_HOME": folder + "/state", "XDG_CACHE_HOME": folder + "/cache"])
    }

    static func write(_ text: String, _ path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// A signed-in account: its tokens from the stand-in's device code flow, with the user's approval.
    static func signedIn(_ server: FeedServer, tokens folder: String) async throws -> GraphAccount {
        let settings = settings(server)
        let identity = MicrosoftIdentity(settings)
        let code = try await identity.deviceCode()
        _ = try await runProgram(["curl", "-sf", server.url("/devicelogin?otc=" + code.userCode)])
        let grant = try await identity.wait(for: code) { _ in try await Task.sleep(for: .milliseconds(20)) }
        try await AccountTokens(
            provider: "microsoft", clientId: clientId, tenant: "organizations",
            refreshToken: try #require(grant.refreshToken), accessToken: grant.accessToken,
            expires: Date().addingTimeInterval(TimeInterval(grant.expiresIn)), user: nil, saved: Date()
        ).save(account: "work", folder: folder)
        return GraphAccount(settings: settings, every: 300, root: SinkFixtures.folder(), tokens: folder)
    }

    /// The items of the account's Calendar folder: UID to text.
    static func items(_ account: GraphAccount) throws -> [String: String] {
        var found: [String: String] = [:]
        for folder in try FileManager.default.contentsOfDirectory(atPath: account.folder) where !folder.hasPrefix(".") {
            let path = account.folder + "/" + folder
            guard (try? String(contentsOfFile: path + "/displayname", encoding: .utf8)) == "work/Calendar" else {
                continue
            }
            for file in try FileManager.default.contentsOfDirectory(atPath: path) where file.hasSuffix(".ics") {
                // Unfolded: long lines are folded at 75 octets.
                let text = try String(contentsOfFile: path + "/" + file, encoding: .utf8)
                    .replacingOccurrences(of: "\r\n ", with: "")
                let uid = text.split(separator: "\r\n").first { $0.hasPrefix("UID:") }.map { String($0.dropFirst(4)) }
                found[uid ?? file] = text
            }
        }
        return found
    }

    @Test func aFirstSyncThenOnlyWhatChangedThroughDeltaLinks() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { server in
            // 250 events: three pages of Graph's 100.
            var events = (0..<250).map { index in
                Self.event(
                    String(format: "%04d", index), "Standup \(index)",
                    start: String(format: "2026-12-%02dT09:00:00", 1 + index / 10),
                    teams: index == 0)
            }
            events.append(Self.event("declined", "Budget review", start: "2026-12-02T14:00:00", answer: "declined"))
            try Self.serve(events, in: server)
            let account = try await Self.signedIn(server, tokens: SinkFixtures.folder())
            let now = Date()
            guard case .changed = await account.sync(now: now) else {
                Issue.record("the first sync stored nothing: \(server.log)")
                return
            }
            var items = try Self.items(account)
            #expect(items.count == 251)
            let first = try #require(items["040000008200E00074C5B7101A82E0080000"])
            #expect(first.contains("DTSTART:20261201T090000Z"))
            #expect(first.contains("CONFERENCE;VALUE=URI;FEATURE=VIDEO;LABEL=Microsoft Teams:https://teams.micro"))
            #expect(first.contains("TRIGGER:-PT15M"))
            // The user's own answer, from responseStatus (the attendee list says "none").
            #expect(first.contains("PARTSTAT=ACCEPTED:mailto:MeganB@contoso.com"), "\(first)")
            #expect(try #require(items["040000008200E00074C5B7101A82E008declined"]).contains("PARTSTAT=DECLINED"))
            let delta = server.log.filter { $0.contains("calendarView/delta") }
            #expect(delta.count == 3, "\(delta)")

            // Nothing changed: one request for the calendar list and one for the delta, nothing written.
            let before = server.log.count
            #expect(await account.sync(now: now) == .unchanged)
            #expect(server.log.count - before == 2, "\(server.log.suffix(4))")

            // One moved, one cancelled, one deleted, one added.
            events[1] = Self.event("0001", "Standup 1", start: "2026-12-01T11:30:00")
            events[2] = Self.event("0002", "Standup 2", start: "2026-12-01T09:00:00", cancelled: true)
            events.remove(at: 3)
            events.append(Self.event("new", "Planning", start: "2026-12-03T15:00:00"))
            try Self.serve(events, in: server)
            guard case .changed = await account.sync(now: now) else {
                Issue.record("the changes were not stored")
                return
            }
            items = try Self.items(account)
            #expect(items.count == 251)
            #expect(items["040000008200E00074C5B7101A82E0080001"]?.contains("DTSTART:20261201T113000Z") == true)
            #expect(items["040000008200E00074C5B7101A82E0080002"]?.contains("STATUS:CANCELLED") == true)
            #expect(items["040000008200E00074C5B7101A82E0080003"] == nil)
            #expect(items["040000008200E00074C5B7101A82E008new"] != nil)
            // Asked from the delta link: one page of four changes.
            #expect(
                server.log.suffix(1).first?.hasPrefix("GET /v1.0/me/calendars/AAMkAGI2TGuLAAA=/calendarView/delta 200")
                    == true)

            // Graph forgot the round (410): read whole again, and what it no longer holds is dropped.
            events.removeAll { ($0["id"] as? String) == "AAMkAGI2T0004" }
            try Self.serve(events, in: server)
            try Self.write("", server.folder + "/forget-deltas")
            guard case .changed = await account.sync(now: now) else {
                Issue.record("the round after a 410 stored nothing")
                return
            }
            #expect(server.log.contains { $0.contains("calendarView/delta 410") })
            items = try Self.items(account)
            #expect(items.count == 250)
            #expect(items["040000008200E00074C5B7101A82E0080004"] == nil)
        }
    }

    /// A mailbox with six calendars is read several calendars at once, never more than the four requests Graph allows
    /// a mailbox (the stand-in holds each answer a second and counts them).
    @Test func severalCalendarsAreReadAtOnceButNeverMoreThanFour() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { server in
            let calendars: [String: Any] = [
                "user": Self.user,
                "calendars": (1...6).map { index in
                    [
                        "id": "CAL\(index)", "name": "Team \(index)", "isDefaultCalendar": index == 1,
                        "events": [Self.event("\(index)", "Standup \(index)", start: "2026-12-01T09:00:00")],
                    ] as [String: Any]
                },
            ]
            try JSONSerialization.data(withJSONObject: calendars).write(
                to: URL(fileURLWithPath: server.folder + "/calendars.json"), options: .atomic)
            try Self.write("1", server.folder + "/delay")
            var account = try await Self.signedIn(server, tokens: SinkFixtures.folder())
            account = GraphAccount(
                settings: Self.settings(server, calendars: []), every: 300, root: SinkFixtures.folder(),
                tokens: account.tokens)
            let outcome = await account.sync()
            guard case .changed = outcome else {
                Issue.record("\(outcome)")
                return
            }
            let folders = try FileManager.default.contentsOfDirectory(atPath: account.folder).filter {
                (try? String(contentsOfFile: account.folder + "/" + $0 + "/displayname", encoding: .utf8))?
                    .hasPrefix("work/Team ") == true
            }
            let items = try folders.flatMap {
                try FileManager.default.contentsOfDirectory(atPath: account.folder + "/" + $0).filter {
                    $0.hasSuffix(".ics")
                }
            }
            #expect(folders.count == 6 && items.count == 6, "\(folders)")
            let most = Int(try String(contentsOfFile: server.folder + "/most-at-once", encoding: .utf8)) ?? 0
            #expect((2...4).contains(most), "\(most) at once")
        }
    }

    /// An access token Graph refuses (401) though it has not lapsed is renewed once, and the poll goes on with it.
    @Test func aRefusedAccessTokenIsRenewedOnceAndThePollGoesOn() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { server in
            try Self.serve([Self.event("1", "Standup", start: "2026-12-01T09:00:00")], in: server)
            let tokens = SinkFixtures.folder()
            let account = try await Self.signedIn(server, tokens: tokens)
            var held = try #require(try await AccountTokens.load(account: "work", folder: tokens))
            held.accessToken = "at-the-service-forgot"
            held.expires = Date().addingTimeInterval(3600)
            try await held.save(account: "work", folder: tokens)
            let grants = server.log.filter { $0.contains("/token 200") }.count
            guard case .changed = await account.sync() else {
                Issue.record("the poll failed: \(server.log)")
                return
            }
            #expect(server.log.contains { $0.contains("401") })
            #expect(server.log.filter { $0.contains("/token 200") }.count == grants + 1, "\(server.log)")
            #expect(try Self.items(account).count == 1)
        }
    }

    @Test func throttlingWaitsAsGraphSaysAndTheCopyStays() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { server in
            try Self.serve([Self.event("1", "Standup", start: "2026-12-01T09:00:00")], in: server)
            let account = try await Self.signedIn(server, tokens: SinkFixtures.folder())
            _ = await account.sync()
            try Self.write("1", server.folder + "/throttle")
            guard case .failed(let reason, let retryAfter) = await account.sync() else {
                Issue.record("a 429 was not a failure")
                return
            }
            #expect(retryAfter == .seconds(1))
            #expect(reason.contains("asked to wait 1 s (HTTP 429)"), "\(reason)")
            #expect(try Self.items(account).count == 1)
            #expect(await account.sync() == .unchanged)
        }
    }

    @Test func everyRotatedRefreshTokenIsSavedAndARevokedOneSaysSignInAgain() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { server in
            try Self.serve([Self.event("1", "Standup", start: "2026-12-01T09:00:00")], in: server)
            let tokens = SinkFixtures.folder()
            // Access tokens that lapse at once: every sync refreshes, and the stand-in takes each refresh token once.
            try Self.write("0", server.folder + "/expires-in")
            let account = try await Self.signedIn(server, tokens: tokens)
            var seen: Set<String> = []
            for _ in 0..<3 {
                let outcome = await account.sync()
                if case .failed(let reason, _) = outcome { Issue.record("\(reason)") }
                let saved = try #require(try await AccountTokens.load(account: "work", folder: tokens))
                #expect(seen.insert(saved.refreshToken).inserted, "a refresh token was not rotated")
            }
            #expect(seen.count == 3)
            let mode =
                try FileManager.default.attributesOfItem(atPath: AccountTokens.path(account: "work", folder: tokens))[
                    .posixPermissions] as? Int
            #expect(mode == 0o600)

            // Revoked (a password changed): the reason, what to do, and the copy still read.
            try Self.write("", server.folder + "/revoked")
            guard case .failed(let reason, _) = await account.sync() else {
                Issue.record("a revoked sign-in was not a failure")
                return
            }
            #expect(reason.contains("sign-in needed"), "\(reason)")
            #expect(reason.contains("AADSTS50173"), "\(reason)")
            #expect(reason.contains("calwatch account add work"), "\(reason)")
            #expect(try Self.items(account).count == 1)

            // No token is in the cache, its record or the failure.
            let saved = try #require(try await AccountTokens.load(account: "work", folder: tokens))
            let secrets = [saved.refreshToken, saved.accessToken ?? "at-"] + Array(seen)
            let cache = try FileManager.default.subpathsOfDirectory(atPath: account.folder).compactMap {
                try? String(contentsOfFile: account.folder + "/" + $0, encoding: .utf8)
            }.joined()
            for secret in secrets {
                #expect(!cache.contains(secret))
                #expect(!reason.contains(secret))
            }
        }
    }

    /// `calwatch account add` as a user runs it: the browser's round trip (the stand-in signs in at once and sends
    /// the browser back to calwatch's loopback address), then the device code flow; both leave a token file only
    /// the user reads, and nothing secret on the terminal.
    @Test func accountAddSignsInByTheBrowsersRedirectOrADeviceCode() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { server in
            try Self.serve([Self.event("1", "Standup", start: "2026-12-01T09:00:00", teams: true)], in: server)
            let (folder, state) = try Self.configured(server, keys: ["tenant: organizations"])
            let environment = state.merging(["DISPLAY": "", "DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": ""]) {
                $1
            }

            let (status, errors) = try await Self.signInThroughTheBrowser(
                ["account", "add", "work", "--config", folder + "/config.yml"], environment: environment)
            #expect(status == 0, "\(errors)")
            #expect(errors.contains("redirect_uri=http://127.0.0.1:"), "\(errors)")
            #expect(errors.contains("Signed in to work as meganb@contoso.com"), "\(errors)")
            // No session bus here: the tokens are kept in the file.
            #expect(errors.contains("its tokens are kept in \(folder)/state/calwatch/accounts/work.json"), "\(errors)")
            let tokens = try #require(
                try await AccountTokens.load(account: "work", folder: folder + "/state/calwatch/accounts"))
            #expect(!errors.contains(tokens.refreshToken))
            #expect(server.log.contains { $0.hasPrefix("POST /organizations/oauth2/v2.0/token 200") })

            // The device code: the code and address printed; approved on "another device".
            try Self.write("", server.folder + "/approve")
            let run = try await CommandLineTests().calwatch(
                ["account", "add", "work", "--device-code", "--config", folder + "/config.yml"],
                environment: environment)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.errors.contains("/devicelogin and enter the code"), "\(run.errors)")
            let again = try #require(
                try await AccountTokens.load(account: "work", folder: folder + "/state/calwatch/accounts"))
            #expect(again.refreshToken != tokens.refreshToken)
            #expect(!run.errors.contains(again.refreshToken) && !run.output.contains(again.refreshToken))

            // Its calendars read like any other: the Teams meeting, under work/Calendar.
            let scan = try await CommandLineTests().calwatch(
                [
                    "scan", "--config", folder + "/config.yml", "--from", "2026-11-30", "--to", "2026-12-03", "--tz",
                    "UTC",
                ],
                environment: environment)
            #expect(scan.status == 0, "\(scan.errors)")
            #expect(scan.output.contains("\"calendar\":\"work/Calendar\""), "\(scan.output)")
            #expect(scan.output.contains("\"service\":\"teams\""), "\(scan.output)")
            let list = try await CommandLineTests().calwatch(
                ["account", "list", "--config", folder + "/config.yml"], environment: environment)
            #expect(
                list.output.contains("work\tmicrosoft\tevery 300 s\tsigned in as meganb@contoso.com"), "\(list.output)")
        }
    }

    /// `calwatch account add` running, as a user meets it: its error output read as it comes (the address to open),
    /// its standard input open (for `--no-browser`'s paste).
    struct SignIn {
        let process = Process()
        let input = Pipe()
        let errors = Pipe()

        init(_ arguments: [String], environment: [String: String]) throws {
            process.executableURL = CommandLineTests.executable
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardInput = input
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
        }

        /// What it printed up to `marker`, and the address in it to open.
        func address(after marker: String) async throws -> (printed: String, address: String) {
            let errors = errors
            let printed = try await offCooperativePool { () -> String in
                var text = Data()
                while !String(decoding: text, as: UTF8.self).contains(marker) {
                    let chunk = errors.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    text.append(chunk)
                }
                return String(decoding: text, as: UTF8.self)
            }
            let address = try #require(
                printed.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http://127.0.0.1") }, "\(printed)")
            return (printed, String(address))
        }

        /// The rest of its error output once it ended, and its exit status.
        func finish() async throws -> (status: Int32, rest: String) {
            let (process, errors) = (process, errors)
            return try await offCooperativePool { () -> (Int32, String) in
                let data = errors.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                return (process.terminationStatus, String(decoding: data, as: UTF8.self))
            }
        }
    }

    /// Runs `calwatch account add` as a user with a browser would: reads the address it prints, opens it (curl,
    /// following the sign-in page's redirect back to calwatch's loopback address) and waits for the command's end.
    static func signInThroughTheBrowser(_ arguments: [String], environment: [String: String]) async throws -> (
        Int32, String
    ) {
        let run = try SignIn(arguments, environment: environment)
        let (printed, address) = try await run.address(after: "code_challenge_method=S256")
        let page = try await runProgram(["curl", "-sL", "--max-time", "30", address])
        #expect(page.contains("Signed in"))
        let (status, rest) = try await run.finish()
        return (status, printed + rest)
    }

    /// `account add --no-browser` as over SSH: the address opened elsewhere, the address the browser was sent to
    /// (which does not load) pasted on standard input; a paste that is not this sign-in's answer is refused.
    @Test func withoutABrowserTheAddressTheBrowserEndedAtIsPasted() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { server in
            try Self.serve([Self.event("1", "Standup", start: "2026-12-01T09:00:00")], in: server)
            let (folder, environment) = try Self.configured(server)
            for tampered in [true, false] {
                let run = try SignIn(
                    ["account", "add", "work", "--no-browser", "--config", folder + "/config.yml"],
                    environment: environment)
                let (_, address) = try await run.address(after: "paste it here")
                // The browser: signed in, sent to http://localhost/?code=… (which does not load there).
                var sent = try await runProgram(["curl", "-s", "-o", "/dev/null", "-w", "%{redirect_url}", address])
                #expect(sent.hasPrefix("http://localhost"), "\(sent)")
                if tampered { sent = sent.replacingOccurrences(of: "state=", with: "state=x") }
                run.input.fileHandleForWriting.write(Data((sent + "\n").utf8))
                try run.input.fileHandleForWriting.close()
                let (status, rest) = try await run.finish()
                if tampered {
                    #expect(status == 1)
                    #expect(rest.contains("not the answer to this sign-in"), "\(rest)")
                } else {
                    #expect(status == 0, "\(rest)")
                    #expect(rest.contains("Signed in to work as meganb@contoso.com"), "\(rest)")
                }
            }
        }
    }

    @Test func aBlockedDeviceCodeSignInSaysWhyAndWhatElseToDo() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { server in
            var settings = Self.settings(server)
            settings.tenant = "consumers-blocked"
            do {
                _ = try await MicrosoftIdentity(settings).deviceCode()
                Issue.record("a blocked device code sign-in was accepted")
            } catch let refusal as SignInRefusal {
                #expect(refusal.code == 53003)
                #expect(refusal.reason.contains("sign in with the browser instead"), "\(refusal.reason)")
            }
        }
    }
}

/// The stand-ins speak what the providers' own clients expect: MSAL for Python, and google-auth-oauthlib with
/// google-auth (from PyPI into `.build/provider-clients`, the first time) sign in to them (MSAL over TLS, by device code
/// and by authorization code with PKCE; Google's by authorization code with PKCE and the client secret), refresh,
/// and read the calendars' pages (`scripts/msal-check.py`, `scripts/google-check.py`).
@Suite(.timeLimit(.minutes(10))) struct ProviderClientTests {
    static let packages = ["msal==1.39.0", "google-auth-oauthlib==1.5.0", "google-auth==2.63.0"]

    static func python() async throws -> String {
        try await DifferentialTests.python(in: "provider-clients", packages: packages)
    }

    @Test func googlesLibrariesSignInAndReadTheCalendarFromTheStandIn() async throws {
        let python = try await Self.python()
        try await FeedServer.with(script: "google-server.py") { server in
            try GoogleAccountTests.serve(GoogleAccountTests.events(), in: server)
            let output = try await runProgram([
                python, DifferentialTests.root + "/scripts/google-check.py", server.url(""), GoogleAccountTests.secret,
            ])
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
            #expect(summary["pkce"] as? Bool == true && summary["refreshToken"] as? Bool == true, "\(output)")
            #expect(summary["refreshed"] as? Bool == true)
            let calendar = summary["calendar"] as? [String: Any]
            #expect(calendar?["events"] as? Int == 4 && calendar?["pages"] as? Int == 2, "\(output)")
            #expect(calendar?["unchanged"] as? Int == 0 && calendar?["syncToken"] as? Bool == true, "\(output)")
        }
    }

    @Test func msalSignsInAndReadsGraphFromTheStandIn() async throws {
        let python = try await Self.python()
        let folder = SinkFixtures.folder()
        _ = try await runProgram(
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem",
            ], discardOutput: true)
        try await FeedServer.with(
            script: "microsoft-server.py", arguments: ["--tls", folder + "/cert.pem", folder + "/key.pem"]
        ) { server in
            try AccountTests.serve(
                (1...3).map { AccountTests.event("\($0)", "Standup", start: "2026-12-0\($0)T09:00:00") }, in: server)
            let output = try await runProgram([
                "env", "REQUESTS_CA_BUNDLE=" + folder + "/cert.pem", python,
                DifferentialTests.root + "/scripts/msal-check.py", "https://127.0.0.1:\(server.port)",
                AccountTests.clientId,
            ])
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
            let device = summary["deviceCode"] as? [String: Any]
            #expect(device?["user"] as? String == "MeganB@contoso.com", "\(output)")
            #expect(device?["refresh"] as? Bool == true)
            #expect(summary["refresh"] as? Bool == true, "a refresh did not rotate the refresh token")
            #expect((summary["authorizationCode"] as? [String: Any])?["pkce"] as? Bool == true)
            let graph = summary["graph"] as? [String: Any]
            #expect(graph?["events"] as? Int == 3 && graph?["pages"] as? Int == 2, "\(output)")
        }
    }
}

/// `accounts:` in config.yml: the shape the issue documents read, and every mistake named at its line.
@Suite struct AccountConfigurationTests {
    @Test func accountsAreCalendarsOnServersNamedByTheirAccount() throws {
        let configuration = try ConfigurationTests.parse(
            """
            accounts:
              - name: work
                provider: microsoft
                clientId: 00000000-0000-0000-0000-000000000000
                tenant: organizations
                calendars: [Calendar]
                every: 5m
                endpoints: { login: https://login.microsoftonline.com, graph: https://graph.microsoft.com }
            """)
        // No `calendars:`: the accounts' calendars alone, not also the default folder.
        #expect(configuration.calendars.isEmpty)
        let account = try #require(configuration.sources.first?.kind as? AccountSettings)
        #expect(account.name == "work" && account.tenant == "organizations" && account.calendars == ["Calendar"])
        #expect(configuration.sources.first?.every == 300)
    }

    /// A device code's numbers from the service are kept within bounds: an answer cannot make calwatch overflow.
    @Test func aDeviceCodesLifeAndIntervalAreBounded() {
        #expect(MicrosoftIdentity.DeviceCode.bounded(expiresIn: 900, interval: 5) == (900, 5))
        #expect(MicrosoftIdentity.DeviceCode.bounded(expiresIn: Int.max, interval: Int.max) == (3600, 60))
        #expect(MicrosoftIdentity.DeviceCode.bounded(expiresIn: -1, interval: nil) == (0, 5))
    }

    @Test func eachMistakeIsNamedWithWhatToWrite() {
        let problems = ConfigurationTests.problems(
            """
            accounts:
              - name: home
                provider: google
                clientId: 1234-abc.apps.googleusercontent.com
                renewByDeviceCode: true
              - name: work
                provider: microsoft
              - name: work/2
                provider: microsoft
                clientId: x
              - name: a
                provider: microsoft
                clientId: x
                every: 10s
              - name: a
                provider: microsoft
                clientId: y
            """)
        let said = problems.map { "\($0.key ?? ""): \($0.message)" }
        #expect(said.contains { $0.hasPrefix("accounts[0]: has no `clientSecretFile:`") }, "\(said)")
        #expect(said.contains { $0.hasPrefix("accounts[1]: has no `clientId:`") })
        #expect(
            said.contains { $0.hasPrefix("accounts[0].renewByDeviceCode: Google's device flow does not grant") },
            "\(said)")
        #expect(said.contains { $0.hasPrefix("accounts[2].name: 'work/2' must be") })
        #expect(said.contains { $0.hasPrefix("accounts[3].every: polls the service more than once a minute") })
        #expect(said.contains { $0.hasPrefix("accounts[4].name: is the name of accounts[3] too") }, "\(said)")
    }
}

/// The daemon's poller and an account whose sign-in lapsed: it waits as after any failure (doubling), but a new
/// sign-in (`calwatch account add` writing the token file) is seen within 5 s on its clock and asked at once.
@Suite(.timeLimit(.minutes(2))) struct AccountPollerTests {
    @Test func aNewSignInIsReadAtOnceNotAfterTheBackoff() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { server in
            try AccountTests.serve([AccountTests.event("1", "Standup", start: "2026-12-01T09:00:00")], in: server)
            let tokens = SinkFixtures.folder()
            _ = try await AccountTests.signedIn(server, tokens: tokens)
            var settings = AccountTests.settings(server)
            settings.tokens = tokens
            // The sign-in lapsed before the daemon started: every refresh is refused.
            var saved = try #require(try await AccountTokens.load(account: "work", folder: tokens))
            saved.expires = Date.distantPast
            try await saved.save(account: "work", folder: tokens)
            try AccountTests.write("", server.folder + "/revoked")
            let clock = ManualClock()
            let source = SourceSettings(settings, every: 300)
            let poller = FeedPoller(
                feeds: [source], root: SinkFixtures.folder(), clock: clock, logger: Logger(label: "test")
            ) {
                0
            }
            let task = Task { try await poller.run() }
            defer { task.cancel() }
            try await eventually("the refused refresh") { server.log.contains { $0.contains("token 400") } }
            // The next poll after the failure is 10 minutes away; the sign-in is looked at every 5 s meanwhile.
            try await clock.waitForSleeper(.seconds(5))
            clock.advance(by: .seconds(5))
            try await clock.waitForSleeper(.seconds(5))
            #expect(!server.log.contains { $0.contains("calendarView/delta") })

            // Signed in again (the stand-in approves; the tokens are written as `account add` writes them).
            try FileManager.default.removeItem(atPath: server.folder + "/revoked")
            _ = try await AccountTests.signedIn(server, tokens: tokens)
            clock.advance(by: .seconds(5))
            try await eventually("the poll after the new sign-in") {
                server.log.contains { $0.contains("calendarView/delta 200") }
            }
        }
    }
}

/// What an operator sees of an account: its last good sync, and whether it needs signing in again, in the metrics
/// file promtool accepts.
@Suite(.timeLimit(.minutes(2))) struct AccountMetricsTests {
    @Test func theMetricsSayWhenAnAccountLastSyncedAndWhenItNeedsASignIn() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { server in
            try AccountTests.serve([AccountTests.event("1", "Standup", start: "2026-12-01T09:00:00")], in: server)
            let (folder, environment) = try AccountTests.configured(server, rest: "metrics:\n  textfile: calwatch.prom")
            let replay = [
                "replay", "--config", folder + "/config.yml", "--from", "2026-11-30", "--to", "2026-12-02", "--tz",
                "UTC", "--state", folder + "/journal.db",
            ]
            try AccountTests.write("", server.folder + "/approve")
            let cli = CommandLineTests()
            _ = try await cli.calwatch(
                ["account", "add", "work", "--device-code", "--config", folder + "/config.yml"],
                environment: environment)
            let good = try await cli.calwatch(replay, environment: environment)
            #expect(good.status == 0, "\(good.errors)")
            var samples = try MetricsTests.samples(folder + "/calwatch.prom")
            let synced = try #require(samples["calwatch_account_last_sync_timestamp_seconds{account=\"work\"}"])
            #expect(abs(synced - Date().timeIntervalSince1970) < 600)
            #expect(samples["calwatch_account_sign_in_needed{account=\"work\"}"] == 0)

            // Revoked, and the access token in hand lapsed: the replay reads the copy kept, and the metric says so.
            try AccountTests.write("", server.folder + "/revoked")
            var tokens = try #require(
                try await AccountTokens.load(account: "work", folder: folder + "/state/calwatch/accounts"))
            tokens.expires = .distantPast
            try await tokens.save(account: "work", folder: folder + "/state/calwatch/accounts")
            try FileManager.default.removeItem(atPath: folder + "/cache/calwatch/accounts/work.asked")
            let lapsed = try await cli.calwatch(replay + ["--state", folder + "/second.db"], environment: environment)
            #expect(lapsed.errors.contains("sign-in needed"), "\(lapsed.errors)")
            samples = try MetricsTests.samples(folder + "/calwatch.prom")
            #expect(samples["calwatch_account_sign_in_needed{account=\"work\"}"] == 1)
            #expect(lapsed.output.contains("calwatch.reminderDue"), "the copy kept was not read")
            #expect(try await MetricsTests.promtoolProblems(folder + "/calwatch.prom") == nil)
        }
    }
}
