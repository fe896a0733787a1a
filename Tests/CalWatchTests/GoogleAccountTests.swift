import CalWatchCore
import Foundation
import Testing

@testable import CalWatchRemote

/// Google accounts against `scripts/google-server.py`, a stand-in for Google's OAuth endpoints and the Calendar
/// API in their documented shapes: the browser's loopback sign-in with PKCE (an application in testing mode
/// warned of), a weekly series with a moved and a cancelled instance read through `events.list` with
/// `singleEvents=false` and expanded by calwatch, incremental syncs by sync token, a token Google forgot (410),
/// `rateLimitExceeded`, and a revoked sign-in.
@Suite(.timeLimit(.minutes(3))) struct GoogleAccountTests {
    static let secret = "GOCSPX-stand-in-secret"

    /// A weekly Meet series at 10:00 Berlin from Monday 2026-11-30, six times, the calendar's default reminder;
    /// its 7 December instance moved to 14:00 with a reminder of its own; its 14 December instance cancelled; a
    /// single event the user declined.
    static func events() -> [[String: Any]] {
        let people: [[String: Any]] = [
            ["email": "megan@example.com", "self": true, "responseStatus": "accepted"],
            ["email": "dana@example.com", "organizer": true, "responseStatus": "accepted"],
        ]
        return [
            [
                "kind": "calendar#event", "id": "series1", "status": "confirmed", "iCalUID": "series1@google.com",
                "summary": "Weekly sync", "updated": "2026-11-20T10:00:00.000Z",
                "start": ["dateTime": "2026-11-30T09:00:00Z", "timeZone": "Europe/Berlin"],
                "end": ["dateTime": "2026-11-30T09:30:00Z", "timeZone": "Europe/Berlin"],
                "recurrence": ["RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=6"],
                "hangoutLink": "https://meet.google.com/abc-defg-hij",
                "conferenceData": [
                    "entryPoints": [["entryPointType": "video", "uri": "https://meet.google.com/abc-defg-hij"]],
                    "conferenceSolution": ["name": "Google Meet", "key": ["type": "hangoutsMeet"]],
                ],
                "organizer": ["email": "dana@example.com"], "attendees": people, "reminders": ["useDefault": true],
            ],
            [
                "kind": "calendar#event", "id": "series1_20261207T090000Z", "status": "confirmed",
                "iCalUID": "series1@google.com", "recurringEventId": "series1", "summary": "Weekly sync (moved)",
                "hangoutLink": "https://meet.google.com/abc-defg-hij",
                "originalStartTime": ["dateTime": "2026-12-07T09:00:00Z", "timeZone": "Europe/Berlin"],
                "start": ["dateTime": "2026-12-07T13:00:00Z", "timeZone": "Europe/Berlin"],
                "end": ["dateTime": "2026-12-07T13:30:00Z", "timeZone": "Europe/Berlin"],
                "attendees": people,
                "reminders": ["useDefault": false, "overrides": [["method": "popup", "minutes": 25]]],
            ],
            [
                "kind": "calendar#event", "id": "series1_20261214T090000Z", "status": "cancelled",
                "recurringEventId": "series1",
                "originalStartTime": ["dateTime": "2026-12-14T09:00:00Z", "timeZone": "Europe/Berlin"],
            ],
            [
                "kind": "calendar#event", "id": "single1", "status": "confirmed", "iCalUID": "single1@google.com",
                "summary": "Budget review", "start": ["dateTime": "2026-12-02T14:00:00Z", "timeZone": "Europe/Berlin"],
                "end": ["dateTime": "2026-12-02T15:00:00Z", "timeZone": "Europe/Berlin"],
                "organizer": ["email": "dana@example.com"],
                "attendees": [
                    ["email": "megan@example.com", "self": true, "responseStatus": "declined"],
                    ["email": "dana@example.com", "organizer": true, "responseStatus": "accepted"],
                ],
            ],
        ]
    }

    static func serve(_ events: [[String: Any]], in server: FeedServer) throws {
        let data: [String: Any] = [
            "user": "megan@example.com",
            "calendars": [
                [
                    "id": "megan@example.com", "summary": "megan@example.com", "summaryOverride": "Megan",
                    "primary": true, "selected": true,
                    "defaultReminders": [["method": "popup", "minutes": 10]], "events": events,
                ],
                [
                    "id": "en.german#holiday@group.v.calendar.google.com", "summary": "Holidays", "selected": false,
                    "events": [],
                ],
            ],
        ]
        try JSONSerialization.data(withJSONObject: data).write(
            to: URL(fileURLWithPath: server.folder + "/calendars.json"), options: .atomic)
    }

    static func settings(_ server: FeedServer, secretFile: String) -> AccountSettings {
        var settings = AccountSettings(name: "home", provider: .google, clientId: "1234-abc.apps.googleusercontent.com")
        settings.auth = URL(string: server.url("/o/oauth2/v2/auth"))!
        settings.token = URL(string: server.url("/token"))!
        settings.api = URL(string: server.url(""))!
        settings.clientSecretFile = secretFile
        return settings
    }

    /// Signed in as the browser would: the authorization page's redirect read, its code redeemed.
    static func signedIn(_ server: FeedServer) async throws -> GoogleAccount {
        let folder = SinkFixtures.folder()
        try "\(secret)\n".write(toFile: folder + "/secret", atomically: true, encoding: .utf8)
        let settings = settings(server, secretFile: folder + "/secret")
        let identity = try settings.signIn()
        let verifier = PKCE.verifier()
        let redirect = "http://127.0.0.1:9"
        let url = identity.authorizationURL(redirect: redirect, state: "s1", challenge: PKCE.challenge(verifier))
        let location = try await runProgram([
            "curl", "-s", "-o", "/dev/null", "-w", "%{redirect_url}", url.absoluteString,
        ])
        let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
        let grant = try await identity.redeem(code: code, redirect: redirect, verifier: verifier)
        try await AccountTokens(
            provider: "google", clientId: settings.clientId, tenant: nil,
            refreshToken: try #require(grant.refreshToken),
            accessToken: grant.accessToken, expires: Date().addingTimeInterval(TimeInterval(grant.expiresIn)),
            user: nil, saved: Date()
        ).save(account: "home", folder: folder + "/tokens")
        return GoogleAccount(settings: settings, every: 300, root: folder, tokens: folder + "/tokens")
    }

    /// The account's items, unfolded, by file.
    static func items(_ account: GoogleAccount) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: account.folder).filter { $0.hasSuffix(".ics") }.sorted()
            .map {
                try String(contentsOfFile: account.folder + "/" + $0, encoding: .utf8)
                    .replacingOccurrences(of: "\r\n ", with: "")
            }
    }

    @Test func aSeriesWithItsMovedAndCancelledInstancesThenOnlyWhatChanged() async throws {
        try await FeedServer.with(script: "google-server.py") { server in
            var events = Self.events()
            try Self.serve(events, in: server)
            let account = try await Self.signedIn(server)
            guard case .changed = await account.sync() else {
                Issue.record("the first sync stored nothing: \(server.log)")
                return
            }
            // Only the primary and the selected calendars: not the holidays.
            #expect(!server.log.contains { $0.contains("holiday") })
            var items = try Self.items(account)
            #expect(items.count == 2)
            let series = try #require(items.first { $0.contains("UID:series1@google.com") })
            // The master and both instances in one item, the master first, in Berlin's wall-clock time.
            #expect(series.components(separatedBy: "BEGIN:VEVENT").count == 4)
            #expect(
                series.contains(
                    "DTSTART;TZID=Europe/Berlin:20261130T100000\r\nDTEND;TZID=Europe/Berlin:20261130T103000\r\nRRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=6"
                ))
            #expect(
                series.contains(
                    "RECURRENCE-ID;TZID=Europe/Berlin:20261207T100000\r\nDTSTART;TZID=Europe/Berlin:20261207T140000"))
            #expect(
                series.contains(
                    "RECURRENCE-ID;TZID=Europe/Berlin:20261214T100000\r\nDTSTART;TZID=Europe/Berlin:20261214T100000\r\nSTATUS:CANCELLED"
                ))
            #expect(
                series.contains(
                    "CONFERENCE;VALUE=URI;FEATURE=VIDEO;LABEL=\"Google Meet\":https://meet.google.com/abc-defg-hij"))
            // The calendar's default reminder on the series, the instance's own on the moved one.
            #expect(series.contains("TRIGGER:-PT10M") && series.contains("TRIGGER:-PT25M"))
            #expect(
                items.contains {
                    $0.contains("UID:single1@google.com") && $0.contains("PARTSTAT=DECLINED:mailto:megan@example.com")
                })

            // Nothing changed: the calendar list and one page of events.
            var before = server.log.count
            #expect(await account.sync() == .unchanged)
            #expect(server.log.count - before == 2, "\(server.log.suffix(3))")

            // The 21 December instance cancelled too, and the single event renamed: only they are written.
            events.append([
                "kind": "calendar#event", "id": "series1_20261221T090000Z", "status": "cancelled",
                "recurringEventId": "series1",
                "originalStartTime": ["dateTime": "2026-12-21T09:00:00Z", "timeZone": "Europe/Berlin"],
            ])
            events[3]["summary"] = "Budget review (Q1)"
            try Self.serve(events, in: server)
            guard case .changed = await account.sync() else {
                Issue.record("the changes were not stored")
                return
            }
            items = try Self.items(account)
            let changed = try #require(items.first { $0.contains("UID:series1@google.com") })
            #expect(changed.contains("RECURRENCE-ID;TZID=Europe/Berlin:20261221T100000"))
            #expect(changed.contains("RECURRENCE-ID;TZID=Europe/Berlin:20261207T100000"), "an instance kept was lost")
            #expect(changed.components(separatedBy: "BEGIN:VEVENT").count == 5)
            #expect(items.contains { $0.contains("SUMMARY:Budget review (Q1)") })

            // The series deleted: its item goes. Then Google forgets the sync token (410): read whole again.
            events.removeAll { ($0["id"] as? String)?.hasPrefix("series1") == true }
            try Self.serve(events, in: server)
            _ = await account.sync()
            #expect(try Self.items(account).count == 1)
            try "".write(toFile: server.folder + "/forget-tokens", atomically: true, encoding: .utf8)
            events[0]["summary"] = "Budget review (Q2)"
            try Self.serve(events, in: server)
            before = server.log.count
            guard case .changed = await account.sync() else {
                Issue.record("the full sync after a 410 stored nothing")
                return
            }
            #expect(server.log.suffix(from: before).contains { $0.contains("/events 410") })
            items = try Self.items(account)
            #expect(items.count == 1 && items[0].contains("SUMMARY:Budget review (Q2)"), "\(items)")
        }
    }

    @Test func aRateLimitWaitsAndARevokedSignInSaysSo() async throws {
        try await FeedServer.with(script: "google-server.py") { server in
            try Self.serve(Self.events(), in: server)
            let account = try await Self.signedIn(server)
            _ = await account.sync()
            try "1".write(toFile: server.folder + "/throttle", atomically: true, encoding: .utf8)
            guard case .failed(let reason, let retryAfter) = await account.sync() else {
                Issue.record("rateLimitExceeded was not a failure")
                return
            }
            #expect(reason.contains("rateLimitExceeded"), "\(reason)")
            #expect(retryAfter == .seconds(60))
            try "0".write(toFile: server.folder + "/expires-in", atomically: true, encoding: .utf8)
            _ = try await account.keeper.accessToken(forcingRefresh: true)
            try "".write(toFile: server.folder + "/revoked", atomically: true, encoding: .utf8)
            guard case .failed(let revoked, _) = await account.sync() else {
                Issue.record("a revoked sign-in was not a failure")
                return
            }
            #expect(revoked.contains("sign-in needed") && revoked.contains("invalid_grant"), "\(revoked)")
            #expect(revoked.contains("calwatch account add home"), "\(revoked)")
            #expect(try Self.items(account).count == 2, "the copy was not kept")
        }
    }

    /// `calwatch account add` for Google: the browser's loopback round trip, a warning for an application in
    /// testing mode, `--device-code` refused with why, and the calendars then read under home/<calendar>.
    @Test func accountAddSignsInWithTheBrowserAndWarnsOfTestingMode() async throws {
        try await FeedServer.with(script: "google-server.py") { server in
            try Self.serve(Self.events(), in: server)
            try "".write(toFile: server.folder + "/testing", atomically: true, encoding: .utf8)
            let folder = SinkFixtures.folder()
            try "\(Self.secret)\n".write(toFile: folder + "/secret", atomically: true, encoding: .utf8)
            // No `me:`: the address signed in as counts as yours.
            try """
            accounts:
              - name: home
                provider: google
                clientId: 1234-abc.apps.googleusercontent.com
                clientSecretFile: secret
                endpoints: { auth: "\(server.url("/o/oauth2/v2/auth"))", token: "\(server.url("/token"))", api: "\(server.url(""))" }
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let environment = ["XDG_STATE_HOME": folder + "/state", "XDG_CACHE_HOME": folder + "/cache", "DISPLAY": ""]
            let refused = try await CommandLineTests().calwatch(
                ["account", "add", "home", "--device-code", "--config", folder + "/config.yml"],
                environment: environment)
            #expect(refused.status == 64)
            #expect(refused.errors.contains("Google's device flow does not grant access to calendars"))

            let (status, errors) = try await AccountTests.signInThroughTheBrowser(
                ["account", "add", "home", "--config", folder + "/config.yml"], environment: environment)
            #expect(status == 0, "\(errors)")
            #expect(errors.contains("testing mode after 7 days"), "\(errors)")
            #expect(errors.contains("Signed in to home as megan@example.com"), "\(errors)")
            let list = try await CommandLineTests().calwatch(
                ["account", "list", "--config", folder + "/config.yml"], environment: environment)
            #expect(list.output.contains("signed in as megan@example.com, until 20"), "\(list.output)")
            // Six days on, a day before it ends: `check` warns while the sign-in still works.
            let check = {
                try await CommandLineTests().calwatch(
                    ["check", "--config", folder + "/config.yml"], environment: environment)
            }
            #expect(!(try await check()).errors.contains("its sign-in ends"))
            let tokens = folder + "/state/calwatch/accounts"
            var record = try #require(try AccountTokens.record(account: "home", folder: tokens))
            record.refreshExpires = Date().addingTimeInterval(5 * 3600)
            try await record.save(account: "home", folder: tokens)
            let warned = try await check()
            #expect(warned.errors.contains("warning: accounts: home: its sign-in ends 20"), "\(warned.errors)")

            let scan = try await CommandLineTests().calwatch(
                [
                    "scan", "--config", folder + "/config.yml", "--from", "2026-11-29", "--to", "2027-01-10", "--tz",
                    "Europe/Berlin",
                ], environment: environment)
            #expect(scan.status == 0, "\(scan.errors)")
            let lines = scan.output.split(separator: "\n")
            let weekly = lines.filter { $0.contains("\"uid\":\"series1@google.com\"") }
            // Six Mondays, the 7th moved to 14:00 Berlin, the 14th cancelled.
            #expect(weekly.count == 6, "\(scan.output)")
            #expect(weekly.contains { $0.contains("\"start\":\"2026-12-07T13:00:00Z\"") })
            #expect(!weekly.contains { $0.contains("\"start\":\"2026-12-07T09:00:00Z\"") })
            #expect(
                weekly.contains {
                    $0.contains("\"start\":\"2026-12-14T09:00:00Z\"") && $0.contains("\"status\":\"cancelled\"")
                }, "\(weekly)")
            #expect(
                weekly.allSatisfy {
                    $0.contains("\"calendar\":\"home/Megan\"") && $0.contains("\"service\":\"meet\"")
                        || $0.contains("cancelled")
                }, "\(weekly)")
            let why = try await CommandLineTests().calwatch(
                ["why", "single1@google.com", "--at", "2026-12-01T09:00:00Z", "--config", folder + "/config.yml"],
                environment: environment)
            #expect(why.output.contains("declined by you"), "\(why.output) \(why.errors)")
        }
    }
}

/// What matters to a user: the same calendar read from Google and read from an .ics file gives the same reminders.
@Suite(.timeLimit(.minutes(3))) struct GoogleAccountReminderTests {
    /// The calendar of `GoogleAccountTests.events()` as Google's own iCalendar export writes it.
    static let exported = """
        BEGIN:VCALENDAR
        VERSION:2.0
        PRODID:-//Google Inc//Google Calendar 70.9054//EN
        BEGIN:VEVENT
        UID:series1@google.com
        DTSTAMP:20261120T100000Z
        DTSTART;TZID=Europe/Berlin:20261130T100000
        DTEND;TZID=Europe/Berlin:20261130T103000
        RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=6
        SUMMARY:Weekly sync
        CONFERENCE;VALUE=URI;FEATURE=VIDEO:https://meet.google.com/abc-defg-hij
        ORGANIZER:mailto:dana@example.com
        ATTENDEE;PARTSTAT=ACCEPTED:mailto:megan@example.com
        ATTENDEE;PARTSTAT=ACCEPTED:mailto:dana@example.com
        BEGIN:VALARM
        ACTION:DISPLAY
        TRIGGER:-PT10M
        END:VALARM
        END:VEVENT
        BEGIN:VEVENT
        UID:series1@google.com
        DTSTAMP:20261120T100000Z
        RECURRENCE-ID;TZID=Europe/Berlin:20261207T100000
        DTSTART;TZID=Europe/Berlin:20261207T140000
        DTEND;TZID=Europe/Berlin:20261207T143000
        SUMMARY:Weekly sync (moved)
        CONFERENCE;VALUE=URI;FEATURE=VIDEO:https://meet.google.com/abc-defg-hij
        ATTENDEE;PARTSTAT=ACCEPTED:mailto:megan@example.com
        ATTENDEE;PARTSTAT=ACCEPTED:mailto:dana@example.com
        BEGIN:VALARM
        ACTION:DISPLAY
        TRIGGER:-PT25M
        END:VALARM
        END:VEVENT
        BEGIN:VEVENT
        UID:series1@google.com
        DTSTAMP:20261120T100000Z
        RECURRENCE-ID;TZID=Europe/Berlin:20261214T100000
        DTSTART;TZID=Europe/Berlin:20261214T100000
        STATUS:CANCELLED
        END:VEVENT
        BEGIN:VEVENT
        UID:single1@google.com
        DTSTAMP:20261120T100000Z
        DTSTART;TZID=Europe/Berlin:20261202T150000
        DTEND;TZID=Europe/Berlin:20261202T160000
        SUMMARY:Budget review
        ORGANIZER:mailto:dana@example.com
        ATTENDEE;PARTSTAT=DECLINED:mailto:megan@example.com
        ATTENDEE;PARTSTAT=ACCEPTED:mailto:dana@example.com
        END:VEVENT
        END:VCALENDAR

        """.replacingOccurrences(of: "\n", with: "\r\n")

    /// The reminders of a replay of the five weeks: type, time and subject (occurrence), in order.
    static func reminders(_ calendars: String, folder: String) async throws -> [String] {
        try "me: [megan@example.com]\n".write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let run = try await CommandLineTests().calwatch([
            "replay", calendars, "--config", folder + "/config.yml", "--from", "2026-11-29", "--to", "2027-01-10",
            "--tz", "Europe/Berlin", "--state", folder + "/\(UUID().uuidString).db",
        ])
        #expect(run.status == 0, "\(run.errors)")
        return run.output.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let type = object["type"] as? String, type == "calwatch.reminderDue"
            else { return nil }
            return "\(object["time"] ?? "") \(object["subject"] ?? "")"
        }
    }

    @Test func theCalendarReadFromGoogleRemindsAsItsExportDoes() async throws {
        try await FeedServer.with(script: "google-server.py") { server in
            try GoogleAccountTests.serve(GoogleAccountTests.events(), in: server)
            let account = try await GoogleAccountTests.signedIn(server)
            guard case .changed = await account.sync() else {
                Issue.record("nothing was synced")
                return
            }
            let folder = SinkFixtures.folder()
            try Self.exported.write(toFile: folder + "/export.ics", atomically: true, encoding: .utf8)
            let fromGoogle = try await Self.reminders(account.folder, folder: folder)
            let fromExport = try await Self.reminders(folder + "/export.ics", folder: folder)
            // Five Mondays (the 14th cancelled), each with the offsets and its own alarm; none for the declined.
            #expect(fromGoogle.count >= 15, "\(fromGoogle)")
            #expect(fromGoogle == fromExport)
            #expect(!fromGoogle.contains { $0.contains("single1") })
            #expect(fromGoogle.contains { $0.hasPrefix("2026-12-07T12:35:00Z") }, "the moved instance's own alarm")
        }
    }
}
