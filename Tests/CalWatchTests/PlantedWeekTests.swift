import Foundation
import Testing

/// The shipped planted week (`samples/day`) through the built executable as a user runs it: `calwatch replay` into
/// a journal, then `calwatch why` on what it emitted. Overlapping meetings, one running into the next, an
/// unanswered invitation, one meeting in three calendars, and a trip to Tokyo and back.
@Suite struct PlantedWeekTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let config = repository + "/samples/day/config.yml"

    static func events(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// The day's events among `events` that `calwatch why`, asked half an hour after each, does not show as emitted
    /// under its id.
    static func unexplained(_ events: [[String: Any]], state: String, cli: CommandLineTests) async throws -> [String] {
        var missing: [String] = []
        for event in events {
            let type = event["type"] as? String ?? ""
            guard
                [
                    "calwatch.conflictDetected", "calwatch.overrunDetected", "calwatch.invitationPending",
                    "calwatch.agendaDue",
                ].contains(type)
            else { continue }
            let subject = event["subject"] as? String ?? ""
            var uids = [String(subject[..<(subject.lastIndex(of: "/") ?? subject.endIndex)])]
            // A conflict or an overrun is about two occurrences: the later one's trace shows it too.
            let data = event["data"] as? [String: Any] ?? [:]
            let other = (data["conflict"] as? [String: Any])?["with"] ?? (data["overrun"] as? [String: Any])?["next"]
            if let uid = (other as? [String: Any])?["uid"] as? String { uids.append(uid) }
            let time = try #require(ISO8601DateFormatter().date(from: event["time"] as? String ?? ""))
            let at = ISO8601DateFormatter().string(from: time.addingTimeInterval(1800))
            for uid in uids {
                let why = try await cli.calwatch([
                    "why", uid, "--config", config, "--state", state, "--at", at, "--format", "json",
                ])
                let trace = try JSONSerialization.jsonObject(with: Data(why.output.utf8)) as? [String: Any]
                let steps = trace?["events"] as? [[String: Any]] ?? []
                if !steps.contains(where: {
                    $0["id"] as? String == event["id"] as? String && $0["state"] as? String == "emitted"
                }) {
                    missing.append("\(type) \(subject) in why \(uid)")
                }
            }
        }
        return missing
    }

    @Test func everyEventOfTheDayAtItsInstantNoneTwiceAndWhyExplainsEach() async throws {
        let state = SinkFixtures.folder() + "/journal.db"
        let cli = CommandLineTests()
        // A day at a time over one journal, as a daemon stopped every midnight would run; after each, `calwatch
        // why` is asked about that day's events soon after each (the journal keeps an event a day past its expiry).
        var events: [[String: Any]] = []
        var explained: [String] = []
        var lines: [String] = []
        for end in [
            "2027-03-08", "2027-03-09", "2027-03-10", "2027-03-11", "2027-03-12", "2027-03-13", "2027-03-14",
            "2027-03-15",
        ] {
            let replay = try await cli.calwatch([
                "replay", "--config", Self.config, "--state", state, "--from", "2027-03-07", "--to", end,
            ])
            #expect(replay.status == 0, "\(replay.errors)")
            let emitted = try Self.events(replay.output)
            events += emitted
            lines += replay.output.split(separator: "\n").map(String.init)
            explained += try await Self.unexplained(emitted, state: state, cli: cli)
        }
        #expect(explained.isEmpty, "why does not show: \(explained)")
        // Every event but the minute updates (an endingSoon one among them), as the JSON Schema describes it: the
        // validator takes a second for a few dozen lines in a debug build.
        let validator = EventSchemaTests.Validator(root: EventSchemaTests.schema)
        let checked =
            lines.filter { !$0.contains("calwatch.liveActivityUpdate") }
            + lines.filter { $0.contains("\"endingSoon\"") }.prefix(1)
        #expect(checked.count > 60)
        let invalid = try checked.filter {
            !validator.validate(try EventSchemaTests.JSON.parse($0), EventSchemaTests.schema).isEmpty
        }
        #expect(invalid.isEmpty, "\(invalid.prefix(2))")
        let ids = events.compactMap { $0["id"] as? String }
        #expect(Set(ids).count == ids.count, "an event twice")

        func data(_ event: [String: Any]) -> [String: Any] { event["data"] as? [String: Any] ?? [:] }
        func occurrence(_ event: [String: Any]) -> [String: Any] { data(event)["occurrence"] as? [String: Any] ?? [:] }
        func line(_ event: [String: Any]) -> String {
            let type = (event["type"] as? String ?? "").replacingOccurrences(of: "calwatch.", with: "")
            return "\(event["time"] ?? "") \(type) \(event["subject"] ?? "")"
        }
        let new: Set = [
            "calwatch.conflictDetected", "calwatch.overrunDetected", "calwatch.invitationPending", "calwatch.agendaDue",
        ]
        let day = events.filter { new.contains($0["type"] as? String ?? "") }
        #expect(
            day.filter { $0["type"] as? String != "calwatch.agendaDue" }.map(line) == [
                // A day ahead of the first of the two (09:00 Berlin is 08:00 UTC).
                "2027-03-07T08:00:00Z conflictDetected design-review@example.org/2027-03-08T08:00:00Z",
                "2027-03-07T13:00:00Z invitationPending budget@example.org/2027-03-08T13:00:00Z",
                "2027-03-08T08:30:00Z overrunDetected design-review@example.org/2027-03-08T08:00:00Z",
                "2027-03-08T11:00:00Z invitationPending budget@example.org/2027-03-08T13:00:00Z",
            ])
        let overrun = try #require(day.first { $0["type"] as? String == "calwatch.overrunDetected" })
        let next = (data(overrun)["overrun"] as? [String: Any])?["next"] as? [String: Any]
        #expect(next?["joinUrl"] as? String == "https://us02web.zoom.us/j/81234567890")

        // Each morning at 08:00 where the user is: Berlin, then Tokyo from the day after the flight out.
        let agendas = day.filter { $0["type"] as? String == "calwatch.agendaDue" }.map { event -> String in
            let agenda = data(event)["agenda"] as? [String: Any] ?? [:]
            let items = (agenda["items"] as? [[String: Any]] ?? []).map { $0["uid"] as? String ?? "" }
            return "\(event["time"] ?? "") \(agenda["zone"] ?? "") " + items.joined(separator: ",")
        }
        #expect(
            agendas == [
                "2027-03-07T07:00:00Z Europe/Berlin ",
                "2027-03-08T07:00:00Z Europe/Berlin "
                    + "focus@example.org,design-review@example.org,customer-call@example.org,budget@example.org",
                "2027-03-09T07:00:00Z Europe/Berlin "
                    + "weekly-sync@example.org,architecture@example.org,vendor-demo@example.org",
                "2027-03-10T07:00:00Z Europe/Berlin flight-out@example.org",
                "2027-03-10T23:00:00Z Asia/Tokyo ",
                "2027-03-11T23:00:00Z Asia/Tokyo breakfast@example.org",
                "2027-03-12T23:00:00Z Asia/Tokyo tokyo-office@example.org",
                "2027-03-13T23:00:00Z Asia/Tokyo flight-back@example.org",
            ])

        // The weekly sync, in three calendars, reminded three times from the copy where the user is an attendee.
        let sync = events.filter {
            $0["type"] as? String == "calwatch.reminderDue"
                && (occurrence($0)["summary"] as? String) == "Weekly sync"
        }
        #expect(sync.count == 3)
        #expect(sync.allSatisfy { $0["source"] as? String == "calwatch:work" })
        // The floating breakfast at 09:00 in Tokyo, with the time at home beside it.
        let breakfast = try #require(
            events.first { $0["type"] as? String == "calwatch.liveActivityStart" && line($0).contains("breakfast") })
        #expect(occurrence(breakfast)["startLocal"] as? String == "2027-03-12T09:00:00+09:00")
        #expect(occurrence(breakfast)["startHome"] as? String == "2027-03-12T01:00:00+01:00")
        // The last minutes of a meeting.
        #expect(
            events.contains {
                (data($0)["liveActivity"] as? [String: Any])?["phase"] as? String == "endingSoon"
                    && $0["time"] as? String == "2027-03-08T08:55:00Z" && line($0).contains("design-review")
            })

        let why = try await cli.calwatch([
            "why", "team-weekly-sync@example.org", "--config", Self.config, "--state", state, "--at",
            "2027-03-09T12:00:00Z",
        ])
        #expect(why.output.contains("one meeting in 3 calendars"))
        #expect(why.output.contains("work (UID weekly-sync@example.org, you: accepted) planned"))
        #expect(why.output.contains("this copy is not planned"))
        let agendaTrace = try await cli.calwatch([
            "why", "agenda", "--config", Self.config, "--state", state, "--at", "2027-03-14T12:00:00Z",
        ])
        #expect(agendaTrace.output.hasPrefix("UID agenda: agendas\n"), "\(agendaTrace.output)")
        #expect(
            agendaTrace.output.contains("agendaDue, agenda for 2027-03-14 (1 item): emitted"), "\(agendaTrace.output)")
    }
}
