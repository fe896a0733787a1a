import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The classifiers on single items, for what the corpus cannot show one by one: links that only look right,
/// leave-by with the configured leads, the user's own RSVP, and classification reaching events and hooks.
@Suite struct ClassifierTests {
    static func item(
        summary: String = "Sync", location: String? = nil, description: String? = nil, attendees: [Attendee] = [],
        links: [NamedText] = []
    ) -> CalendarComponent {
        var component = CalendarComponent(kind: .event, uid: "test")
        component.summary = summary
        component.location = location
        component.description = description
        component.attendees = attendees
        component.linkProperties = links
        return component
    }

    @Test(arguments: [
        "https://zoom.us.evil.example/j/123456789",  // a look-alike host
        "https://zoom.us@evil.example/j/123456789",  // user information before the real host
        "https://evil.example@zoom.us/j/123456789",  // and the other way round: refused too
        "https://evil.example/zoom.us/j/123456789",  // the service's name in the path
        "https://support.zoom.us/hc/en-us/articles/201362193",  // a help page
        "https://zoom.us/s/123456789?zak=eyJ0eXAi",  // the host's start link
        "https://dialin.teams.microsoft.com/8551f4c1?id=123456",  // a dial-in look-up
        "https://tel.meet/abc-defg-hij?pin=263748915",  // Meet's phone numbers page
        "https://aka.ms/JoinTeamsMeeting",  // Teams' help
        "javascript:alert(1)//zoom.us/j/1",
        "https://zoom.us/j/",  // no meeting in it
    ])
    func linksThatOnlyLookLikeJoinLinksAreRefused(link: String) {
        let result = Classifier().classify(Self.item(location: link, description: "Join: \(link)"), duration: 1800)
        #expect(result.kind == .event)
        #expect(result.meeting == nil, "\(link) read as \(String(describing: result.meeting))")
    }

    /// A stranger's 450 KB emoji-filled description: the classifiers read its first 32 KB only (cut between two
    /// Unicode scalars, never inside one), and what an invitation puts at its top is still found.
    @Test func aHugeDescriptionIsReadOnlyAsFarAsTheBound() {
        let filler = String(repeating: "👩‍👩‍👧‍👦 ✈️ Flight LH 123 (BER) → ", count: 9_000)
        let description = "Join Zoom Meeting\nhttps://acme.zoom.us/j/98765432101\n\n" + filler
        #expect(description.utf8.count > 450_000)
        let component = Self.item(summary: "Weekly sync", description: description)
        let input = ClassifierInput(component: component, duration: 1800)
        #expect(input.description.utf8.count <= ClassifierInput.textLimit.description)
        #expect(input.description.utf8.count > ClassifierInput.textLimit.description - 4)
        #expect(description.hasPrefix(input.description))
        let result = Classifier().classify(component, duration: 1800)
        #expect(result.meeting?.joinURL == "https://acme.zoom.us/j/98765432101")
    }

    /// The link shapes producers write that were missed: SafeLinks under its newer hosts and Teams' own
    /// `atp-safelinks.html` wrapper, Zoom's `join?confno=` and web-client links, Teams with an explicit `:443`,
    /// Gong's consent page and Meetecho.
    @Test(
        arguments: [
            (
                "https://nam12.safelinks.outlook.microsoft.com/?url=https%3A%2F%2Fzoom.us%2Fj%2F81234567890&data=05",
                "zoom", "https://zoom.us/j/81234567890", "81234567890"
            ),
            (
                "https://statics.teams.cdn.office.net/evergreen-assets/safelinks/1/atp-safelinks.html?url="
                    + "https%3A%2F%2Fmeet.google.com%2Fabc-defg-hij&locale=en-us",
                "meet", "https://meet.google.com/abc-defg-hij", "abc-defg-hij"
            ),
            (
                "https://acme.zoom.us/join?confno=84561239870&pwd=x1", "zoom",
                "https://acme.zoom.us/join?confno=84561239870&pwd=x1", "84561239870"
            ),
            (
                "https://app.zoom.us/wc/85512345678/join?fromPWA=1", "zoom",
                "https://app.zoom.us/wc/85512345678/join?fromPWA=1", "85512345678"
            ),
            (
                "https://teams.microsoft.com:443/l/meetup-join/19%3ameeting_N2E3@thread.v2/0?context=%7b%7d",
                "teams", "https://teams.microsoft.com/l/meetup-join/19%3ameeting_N2E3@thread.v2/0?context=%7b%7d", nil
            ),
            (
                "https://join.gong.io/acme/jane.doe?tkn=9f8e7d", "gong",
                "https://join.gong.io/acme/jane.doe?tkn=9f8e7d", nil
            ),
            (
                "https://meetings.conf.meetecho.com/ietf121/?session=32345", "meetecho",
                "https://meetings.conf.meetecho.com/ietf121/?session=32345", nil
            ),
        ] as [(String, String, String, String?)])
    func producersLinkShapesAreRead(link: String, service: String, join: String, id: String?) {
        let result = Classifier().classify(Self.item(description: "Join: \(link)\nThanks"), duration: 1800)
        #expect(result.meeting?.service == service)
        #expect(result.meeting?.joinURL == join)
        #expect(result.meeting?.meetingID == id)
    }

    /// Services people run on their own domains, known by their join links' shapes, and links that mail gateways
    /// wrapped: unwrapped where the original is in the link, the service named where it is not (Mimecast).
    @Test(
        arguments: [
            ("https://bbb.uni-example.de/b/ann-k7q-3xz-p2m", "bigbluebutton"),
            ("https://video.example.org/rooms/x7k-2mq-9pz/join", "bigbluebutton"),
            ("https://vc.example.net/webapp/#/?conference=sales&role=guest", "pexip"),
            ("https://portal.example.com/flex.html?roomdirect.html&key=Xk29QmZp", "vidyo"),
            ("https://cloud.example.org/index.php/call/k3x9q2mz", "nextcloud"),
            ("https://galene.example.org:8443/group/standup/", "galene"),
            ("https://meet.example.org/WeeklyPlanning", "jitsi"),
            (
                "https://imsva91-ctp.trendmicro.com:443/wis/clicktime/v1/query?url=https%3a%2f%2fzoom.us%2fj%2f8123"
                    + "4567890&umid=1c2d", "zoom"
            ),
            ("https://eu.protection.sophos.com/?d=zoom.us&u=aHR0cHM6Ly96b29tLnVzL2ovODEyMzQ1Njc4OTA&i=1", "zoom"),
            ("https://protect-eu.mimecast.com/s/Xk29QmZpAbCd?domain=teams.microsoft.com", "teams"),
        ] as [(String, String)])
    func selfHostedAndWrappedLinksAreRead(link: String, service: String) {
        let result = Classifier().classify(Self.item(description: "Join: \(link)\nThanks"), duration: 1800)
        #expect(result.kind == .meeting)
        #expect(result.meeting?.service == service, "\(link)")
        if service == "zoom" { #expect(result.meeting?.joinURL == "https://zoom.us/j/81234567890") }
    }

    /// A service calwatch does not know, on a line that asks to join a meeting in the invitation's language, is a
    /// meeting named `web`; "join" with no meeting, or an event page, is not.
    @Test(
        arguments: [
            ("Rejoindre la réunion : https://visio.univ-example.fr/salle/Equipe42", "web"),
            ("会議に参加する\nhttps://vc.example.co.jp/r/8842", "web"),
            ("Dołącz do spotkania: https://wideo.example.pl/pokoj/zarzad", "web"),
            ("Join us at https://example.org/summer-party", nil),
            ("Join the meetup call: https://www.meetup.com/berlin-swift/events/123", nil),
        ] as [(String, String?)])
    func aJoinLineInAnyLanguageNamesAnUnknownService(description: String, service: String?) {
        let result = Classifier().classify(Self.item(summary: "Planning", description: description), duration: 1800)
        #expect(result.meeting?.service == service, "\(result.evidence)")
        if service != nil { #expect(result.meeting?.joinURL?.hasPrefix("https://") == true) }
    }

    /// A site's own pages on a `meet.` host, and a known service's other pages, are no one's meeting room.
    @Test(arguments: [
        "https://meet.example.org/about", "https://meet.goto.com/install", "https://example.org/group/x/",
    ])
    func pagesOnMeetingHostsAreNotRooms(link: String) {
        let result = Classifier().classify(Self.item(description: "See \(link)"), duration: 1800)
        #expect(result.meeting == nil, "\(link) read as \(String(describing: result.meeting))")
    }

    /// Outlook: LOCATION says "Microsoft Teams Meeting" and the link is only in the HTML body.
    @Test func aTeamsLinkOnlyInTheHTMLBodyIsFound() {
        let html =
            "<html><body><a href=\"https://teams.microsoft.com/l/meetup-join/19%3ameeting_ZTk@thread.v2/0?context=%7b%22Tid%22%7d&amp;p=Xy7\">"
            + "Join the meeting now</a></body></html>"
        let result = Classifier().classify(
            Self.item(
                location: "Microsoft Teams Meeting", description: "Agenda to follow.",
                links: [NamedText(name: "X-ALT-DESC", value: html)]), duration: 1800)
        #expect(result.meeting?.service == "teams")
        #expect(
            result.meeting?.joinURL
                == "https://teams.microsoft.com/l/meetup-join/19%3ameeting_ZTk@thread.v2/0?context=%7b%22Tid%22%7d&p=Xy7"
        )
    }

    /// Several links in one invitation: the structured property's, else the one of the service LOCATION names, else
    /// the first; the others are named in the evidence `explain` prints.
    @Test func ofSeveralLinksTheStructuredOrTheNamedOneIsUsedAndTheOthersAreReported() {
        let stale =
            "Old link: https://acme.zoom.us/j/81112223334\nJoin: https://teams.microsoft.com/l/meetup-join/19%3ameeting_A@thread.v2/0"
        let named = Classifier().classify(
            Self.item(location: "Microsoft Teams Meeting", description: stale), duration: 1800)
        #expect(named.meeting?.service == "teams")
        #expect(
            named.evidence.contains {
                $0.effect == .fact && $0.rule == "another join link (zoom), not the one used"
                    && $0.text == "https://acme.zoom.us/j/81112223334"
            })
        let structured = Classifier().classify(
            Self.item(
                location: "Microsoft Teams Meeting", description: stale,
                links: [NamedText(name: "X-GOOGLE-CONFERENCE", value: "https://meet.google.com/xyz-abcd-efg")]),
            duration: 1800)
        #expect(structured.meeting?.joinURL == "https://meet.google.com/xyz-abcd-efg")
        let unnamed = Classifier().classify(Self.item(location: "Room 4", description: stale), duration: 1800)
        #expect(unnamed.meeting?.service == "zoom", "nothing says otherwise: the first")
    }

    /// `meetings.providers:` adds a company's own video host, matched before calwatch's services.
    @Test func aConfiguredProviderIsRecognised() throws {
        let configuration = try ConfigurationLoader.parse(
            """
            meetings:
              providers:
                - name: acme-video
                  hosts: [video.acme.example]
                  join: [/room/]
                  names: [acme video]
            rules:
              - services: [acme-video]
                offsets: [2m]
            """, file: "config.yml", directory: "/tmp")
        #expect(configuration.planner.rules.first?.services == ["acme-video"], "a rule may name it")
        let classifier = Classifier(configuration)
        let result = classifier.classify(
            Self.item(
                location: "ACME Video",
                description: "https://zoom.us/j/81112223334 or https://eu.video.acme.example/room/standup-42"),
            duration: 1800)
        #expect(result.meeting?.service == "acme-video")
        #expect(result.meeting?.joinURL == "https://eu.video.acme.example/room/standup-42")
        let help = classifier.classify(Self.item(description: "https://video.acme.example/help/setup"), duration: 1800)
        #expect(help.meeting == nil, "only the join paths")
    }

    @Test func aMistakenProviderIsReportedWithItsLine() {
        let text = """
            meetings:
              providers:
                - name: Acme Video
                  hosts: [video.acme.example]
                - name: bbb
                  hosts: ["https://bbb.example.org/b"]
                  join: [b/]
                - name: jitsi-home
                  host: meet.example.org
            """
        do {
            _ = try ConfigurationLoader.parse(text, file: "config.yml", directory: "/tmp")
            Issue.record("accepted")
        } catch {
            let report = "\(error)"
            #expect(report.contains("config.yml:3:"), "\(report)")
            #expect(report.contains("'Acme Video' should be lower-case letters, digits and dashes"), "\(report)")
            #expect(report.contains("'https://bbb.example.org/b' is not a host name"), "\(report)")
            #expect(report.contains("'b/' should be a path prefix starting with /"), "\(report)")
            #expect(
                report.contains("meetings.providers[2].host: is not a known key here; did you mean `hosts`?"),
                "\(report)")
        }
    }

    @Test func aLinkWrappedTwiceIsUnwrappedAndTrimmed() {
        // Outlook SafeLinks around Google's redirect around the Zoom link, at the end of a sentence.
        let inner = "https://www.google.com/url?q=https://acme.zoom.us/j/111222333?pwd%3Dabc&sa=D"
        let wrapped =
            "https://eur03.safelinks.protection.outlook.com/?url="
            + inner.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&data=05%7C02&reserved=0"
        let result = Classifier().classify(Self.item(description: "Join here (\(wrapped))."), duration: 1800)
        #expect(result.meeting?.service == "zoom")
        #expect(result.meeting?.joinURL == "https://acme.zoom.us/j/111222333?pwd=abc")
        #expect(result.meeting?.meetingID == "111222333")
    }

    @Test func theFirstPropertyInDesignOrderWins() {
        // CONFERENCE before LOCATION before DESCRIPTION, whatever the file's order.
        let result = Classifier().classify(
            Self.item(
                location: "https://whereby.com/location-room", description: "https://zoom.us/j/5556667778",
                links: [NamedText(name: "CONFERENCE", value: "https://meet.google.com/abc-defg-hij")]),
            duration: 1800)
        #expect(result.meeting?.joinURL == "https://meet.google.com/abc-defg-hij")
    }

    @Test func attendeesBesidesTheUserMakeAMeetingAndTheUsersDeclineIsSeen() {
        let me = Attendee(address: "me@example.com", participation: "DECLINED")
        let other = Attendee(address: "ada@example.org", participation: "ACCEPTED")
        let classifier = Classifier(me: ["ME@example.com"])
        let result = classifier.classify(Self.item(summary: "Lunch", attendees: [me, other]), duration: 3600)
        #expect(result.kind == .meeting)
        #expect(result.meeting?.joinURL == nil)
        #expect(result.declined)
        // Only the user on the list: not a meeting.
        let alone = classifier.classify(Self.item(summary: "Focus", attendees: [me]), duration: 3600)
        #expect(alone.kind == .event)
        #expect(alone.confidence == 0.9)
    }

    @Test func leaveByUsesTheConfiguredLeadsAndTheOriginAirportsClock() throws {
        var leads = FlightLeads()
        leads.domestic = 3600
        leads.international = 7200
        leads.travelTime = 1800
        let classifier = Classifier(leads: leads)
        let departure = utc("2027-05-10T16:00:00Z")
        for (summary, hours, expected) in [
            ("AS 331 SEA → ANC", 3.5, "2027-05-10T14:30:00Z"),  // domestic: 1 h + 30 min
            ("LH 455 SFO → FRA", 11.0, "2027-05-10T13:30:00Z"),  // international: 2 h + 30 min
            ("flight home (DL 89)", 3.0, "2027-05-10T13:30:00Z"),  // destination unknown: the longer lead
        ] {
            let flight = try #require(classifier.classify(Self.item(summary: summary), duration: hours * 3600).flight)
            #expect(classifier.leaveBy(flight, departure: departure).description == expected, "\(summary)")
        }
        // In scan output leave-by is also shown where the traveller is: Seattle, UTC−7 in May.
        let path = SinkFixtures.folder() + "/trip.ics"
        try """
        BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:as331\r\nDTSTAMP:20270101T000000Z\r
        DTSTART:20270510T160000Z\r\nDTEND:20270510T193500Z\r\nSUMMARY:AS 331 SEA → ANC\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let result = scan([path], from: "2027-05-01", to: "2027-06-01", zone: "UTC")
        var output = ""
        OccurrenceJSON.writeLines(result.occurrences, classifier: classifier) {
            output += String(decoding: $0, as: UTF8.self)
        }
        #expect(output.contains("\"leaveBy\":\"2027-05-10T14:30:00Z\",\"leaveByLocal\":\"2027-05-10T07:30:00-07:00\""))
        let confidence = output.firstMatch(of: /"kind":"flight","confidence":([0-9.]+)/).flatMap { Double($0.1) }
        #expect(try #require(confidence) >= 0.95)
    }

    @Test func aReplayDetectsTheSampleFlightAndRemindsBeforeLeaveBy() async throws {
        let sink = SinkFixtures.EntrySink()
        let classifier = Classifier()
        let replay = Replay(
            occurrences: ReplayTests.occurrences, facts: classifier.facts(for:), configuration: PlannerConfiguration(),
            journal: try ReplayTests.journal(), sinks: [sink], recordedTime: { Timestamp(millisecondsSinceEpoch: 0) })
        _ = try await replay.run(
            from: utc("2027-02-28T00:00:00Z"), to: utc("2027-03-04T00:00:00Z"), shouldStop: { false })
        let flight = await sink.entries.filter { $0.facts.flightCode == "BA987" }
        let detected = try #require(flight.first { $0.event.type == .flightDetected })
        #expect(detected.json.contains("\"code\":\"BA987\",\"designator\":\"BA\",\"number\":987"))
        #expect(detected.json.contains("\"origin\":\"BER\",\"destination\":\"LHR\""))
        // BER–LHR is international: 3 h + 45 min before the 06:10 UTC departure.
        let leaveBy = try #require(detected.facts.leaveBy)
        #expect(leaveBy.description == "2027-03-03T02:25:00Z")
        let reminders = flight.filter { $0.event.type == .reminderDue }.map { $0.event.time.description }
        #expect(reminders == ["2027-03-03T01:55:00Z", "2027-03-03T02:10:00Z", "2027-03-03T02:20:00Z"])
        // And hooks get the meeting's link and the flight's code in their environment.
        let meeting = try #require(await sink.entries.first { $0.facts.meeting?.service == "meet" })
        #expect(HookFields(meeting).environment.contains("CALWATCH_JOIN_URL=\(meeting.facts.joinURL!)"))
        #expect(HookFields(meeting).environment.contains("CALWATCH_MEETING_ID=\(meeting.facts.meeting!.meetingID!)"))
        #expect(HookFields(detected).environment.contains("CALWATCH_FLIGHT=BA987"))
        #expect(HookFields(detected).environment.contains("CALWATCH_DESTINATION=LHR"))
    }
}

/// Calendar text is written by strangers: the classifiers must take anything without trapping, and give the same
/// answer twice.
@Suite(.ownThread) struct ClassifierFuzzTests {
    /// Pieces that reach the classifiers' edge cases, glued at random.
    static let pieces = [
        "BA", "286", " ", "-", "–", "→", "->", ">", "✈️", "(", ")", "[", "]", ":", "：", "/", "#", "@", "%", "€",
        "LHR", "FRA", "jfk", "THE", "to", "nach", "Flight", "flug", "vol", ".", ",", "\n", "\t", "https://",
        "http://", "zoom.us/j/", "meet.google.com/", "?pwd=", "&amp;", "url=", "%3A%2F%2F", "__;", "u=https-3A__",
        "tel:+", "Passcode", "Meeting ID", "é", "ü", "日本", "🛫", "\u{0}", "\u{FEFF}", "a", "Z", "0", "00000",
        "London", "New York", "Room", "Gate", "Seat", "Terminal", "Confirmation", "Delta", "Air", "Lines",
    ]

    @Test(arguments: 0..<4)
    func randomTextNeverTrapsAndIsClassifiedAlike(seed: Int) {
        // Seeded, so a failure can be replayed.
        var generator = SimpleRecurrenceTests.SplitMix(state: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        let classifier = Classifier(me: ["me@example.com"])
        for _ in 0..<400 {
            func text() -> String {
                (0..<Int.random(in: 0..<40, using: &generator)).map { _ in Self.pieces.randomElement(using: &generator)!
                }
                .joined()
            }
            var item = CalendarComponent(kind: .event, uid: "fuzz")
            item.summary = text()
            item.location = text()
            item.description = text()
            item.linkProperties = [NamedText(name: "X-ALT-DESC", value: text()), NamedText(name: "URL", value: text())]
            let duration = Bool.random(using: &generator) ? nil : Double.random(in: 0..<200_000, using: &generator)
            let first = classifier.classify(item, duration: duration)
            let second = classifier.classify(item, duration: duration)
            #expect(first == second, "\(item.summary ?? "")")
            if let code = first.flight?.code {
                #expect(code.range(of: "^[A-Z0-9]{2}[1-9][0-9]{0,3}$", options: .regularExpression) != nil)
            }
            if let link = first.meeting?.joinURL { #expect(link.hasPrefix("https://") || link.hasPrefix("http://")) }
        }
    }
}
