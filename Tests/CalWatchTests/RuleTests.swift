import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// Reminder rules and quiet hours (config.yml `rules:` and `quietHours:`), each key through a replay on a virtual
/// clock from calendar files and a configuration as a user writes them.
@Suite struct RuleTests {
    /// Replays `[from, to)` of the items under `yaml` (the top-level keys besides calendars and sinks), in
    /// `zone`; returns the reminders and live-activity starts as `uid HH:MM before` lines (UTC), sorted.
    static func replay(
        _ yaml: String, items: [String: [String]], from: String, to: String, zone: String = "UTC",
        me: String = "me@example.com"
    ) async throws -> [String] {
        let folder = try NextTests.Folder()
        for (uid, lines) in items { try folder.write(uid, lines) }
        // `{CALENDAR}` is the calendar's name (the folder's) in upper case.
        let name = (folder.path as NSString).lastPathComponent.uppercased()
        let configuration = try ConfigurationLoader.parse(
            "calendars: [\(folder.path)]\ntimezone: \(zone)\nme: [\(me)]\n"
                + yaml.replacingOccurrences(of: "{CALENDAR}", with: name), file: "config.yml", directory: folder.path)
        let rules = TimeZoneDatabase.rules(named: zone)!
        var options = ExpansionOptions(window: InstantWindow(start: utc(from), end: utc(to)), defaultZone: rules)
        options.lookBehind = 2 * 86_400
        options.lookAhead = configuration.planner.lookAhead + 86_400
        let scan = CalendarScan(paths: configuration.calendars, options: options).run()
        let sink = ReplayTests.CollectingSink()
        let classifier = Classifier(configuration)
        _ = try await Replay(
            occurrences: scan.occurrences, facts: classifier.facts(for:), configuration: configuration.planner,
            journal: try ReplayTests.journal(), sinks: [sink], recordedTime: { Timestamp(utc(from)) }
        ).run(from: utc(from), to: utc(to))
        return await sink.events.compactMap { event in
            switch event.type {
            case .reminderDue:
                let reminder = event.reminder!
                var text = "\(event.key.uid) \(event.time) \(DurationText.text(reminder.secondsBefore))"
                if let deferred = reminder.deferredFrom { text += " deferred from \(deferred)" }
                return text
            case .liveActivityStart: return "\(event.key.uid) \(event.time) live"
            default: return nil
            }
        }.sorted()
    }

    static func event(_ summary: String, _ start: String, _ end: String, _ extra: [String] = []) -> [String] {
        ["SUMMARY:\(summary)", "DTSTART:\(start)", "DTEND:\(end)"] + extra
    }

    @Test func theFirstMatchingRuleSetsOffsetsAndLiveActivity() async throws {
        let yaml = """
            reminders: { offsets: [15m] }
            rules:
              - summary: "(?i)standup"
                offsets: [2m]
                liveActivity: false
              - kinds: [meeting]
                services: [zoom]
                offsets: [10m]
              - calendars: [OTHER]
                offsets: [1h]
            """
        let items = [
            "standup": Self.event("Daily Standup", "20270301T090000Z", "20270301T091500Z"),
            "zoom": Self.event(
                "Sync", "20270301T100000Z", "20270301T103000Z", ["LOCATION:https://us02web.zoom.us/j/81234567890"]),
            "plain": Self.event("Dentist", "20270301T120000Z", "20270301T130000Z"),
        ]
        let events = try await Self.replay(yaml, items: items, from: "2027-03-01T07:00:00Z", to: "2027-03-01T12:10:00Z")
        #expect(
            events == [
                "plain 2027-03-01T11:45:00Z 15m", "plain 2027-03-01T11:45:00Z live",
                "standup 2027-03-01T08:58:00Z 2m",
                "zoom 2027-03-01T09:45:00Z live", "zoom 2027-03-01T09:50:00Z 10m",
            ])
    }

    /// How an item shows its time, as Outlook and Google write it: out of office, focus time and working location
    /// get no reminders under one rule, working elsewhere one of its own, and an ordinary meeting the defaults.
    @Test func showAsChoosesByOutOfOfficeFocusTimeAndWorkingLocation() async throws {
        let yaml = """
            reminders: { offsets: [15m] }
            liveActivity: { lead: 0s }
            rules:
              - showAs: [outOfOffice, focusTime, workingLocation]
                offsets: []
                liveActivity: false
              - showAs: [workingElsewhere]
                offsets: [5m]
            """
        let items = [
            "away": Self.event("Away", "20270301T090000Z", "20270301T170000Z", ["X-MICROSOFT-CDO-BUSYSTATUS:OOF"]),
            "focus": Self.event(
                "Focus time", "20270301T100000Z", "20270301T120000Z", ["X-GOOGLE-EVENT-TYPE:focusTime"]),
            "office": Self.event(
                "Office", "20270301T080000Z", "20270301T170000Z", ["X-GOOGLE-EVENT-TYPE:workingLocation"]),
            "site": Self.event(
                "Client site", "20270301T130000Z", "20270301T140000Z", ["X-MICROSOFT-CDO-BUSYSTATUS:WORKINGELSEWHERE"]),
            "review": Self.event(
                "Review", "20270301T150000Z", "20270301T160000Z",
                ["X-MICROSOFT-CDO-BUSYSTATUS:BUSY", "X-GOOGLE-EVENT-TYPE:default"]),
        ]
        let events = try await Self.replay(yaml, items: items, from: "2027-03-01T07:00:00Z", to: "2027-03-01T18:00:00Z")
        #expect(
            events.filter { !$0.hasSuffix("live") } == [
                "review 2027-03-01T14:45:00Z 15m", "site 2027-03-01T12:55:00Z 5m",
            ], "\(events)")
    }

    @Test func calendarsMatchWithoutRegardToCase() async throws {
        let yaml = """
            reminders: { offsets: [15m] }
            liveActivity: { lead: 0s }
            rules:
              - calendars: [Family]
                offsets: [2h]
              - calendars: [{CALENDAR}]
                offsets: [1d]
            """
        let events = try await Self.replay(
            yaml, items: ["a": Self.event("A", "20270302T090000Z", "20270302T100000Z")],
            from: "2027-03-01T00:00:00Z", to: "2027-03-02T09:05:00Z")
        #expect(events.filter { !$0.hasSuffix("live") } == ["a 2027-03-01T09:00:00Z 1d"])
    }

    @Test func allDayEventsAtAClockTimeTheDayBefore() async throws {
        let yaml = """
            rules:
              - kinds: [event]
                allDay: { at: "18:00", daysBefore: 1 }
            """
        let events = try await Self.replay(
            yaml,
            items: ["birthday": ["SUMMARY:Birthday", "DTSTART;VALUE=DATE:20270305", "DTEND;VALUE=DATE:20270306"]],
            from: "2027-03-03T00:00:00Z", to: "2027-03-06T00:00:00Z", zone: "Europe/Berlin")
        // 18:00 in Berlin (UTC+1) on the 4th; no live activity for an all-day event.
        #expect(events == ["birthday 2027-03-04T17:00:00Z 6h"])
    }

    @Test func attendanceSaysWhichAnswersGetReminders() async throws {
        let yaml = """
            reminders: { offsets: [10m] }
            liveActivity: { lead: 0s }
            rules:
              - attendance: [accepted]
            """
        func invitation(_ answer: String, at hour: Int) -> [String] {
            Self.event(
                answer, String(format: "20270301T%02d0000Z", hour), String(format: "20270301T%02d3000Z", hour),
                [
                    "ORGANIZER:mailto:boss@example.com", "ATTENDEE;PARTSTAT=\(answer):mailto:me@example.com",
                    "ATTENDEE;PARTSTAT=ACCEPTED:mailto:boss@example.com",
                ])
        }
        let events = try await Self.replay(
            yaml,
            items: [
                "accepted": invitation("ACCEPTED", at: 9), "tentative": invitation("TENTATIVE", at: 10),
                "open": invitation("NEEDS-ACTION", at: 11),
                "mine": Self.event("Focus", "20270301T120000Z", "20270301T130000Z"),
            ], from: "2027-03-01T08:00:00Z", to: "2027-03-01T12:05:00Z")
        #expect(
            events.filter { !$0.hasSuffix("live") } == [
                "accepted 2027-03-01T08:50:00Z 10m", "mine 2027-03-01T11:50:00Z 10m",
            ])
    }

    @Test func quietHoursDeferAcrossMidnightAndDropWhenAsked() async throws {
        let items = [
            // 07:30: its 30m reminder (07:00) is after the quiet hours, its 1h (06:30) and 8h (23:30) inside.
            "early": Self.event("Early train", "20270302T073000Z", "20270302T083000Z")
        ]
        let deferred = try await Self.replay(
            """
            reminders: { offsets: [8h, 1h, 30m] }
            liveActivity: { lead: 0s }
            quietHours: { from: "22:00", to: "07:00", then: defer }
            """, items: items, from: "2027-03-01T20:00:00Z", to: "2027-03-02T07:40:00Z")
        // Both quiet ones come at 07:00, as one (the nearest the start), with the 30m one due then too: one reminder.
        #expect(deferred.filter { !$0.hasSuffix("live") } == ["early 2027-03-02T07:00:00Z 30m"])
        let dropped = try await Self.replay(
            """
            reminders: { offsets: [8h, 1h, 20m] }
            liveActivity: { lead: 0s }
            quietHours: { from: "22:00", to: "07:00", then: drop }
            """, items: items, from: "2027-03-01T20:00:00Z", to: "2027-03-02T07:40:00Z")
        #expect(dropped.filter { !$0.hasSuffix("live") } == ["early 2027-03-02T07:10:00Z 20m"])
        let deferredAlone = try await Self.replay(
            """
            reminders: { offsets: [1h] }
            liveActivity: { lead: 0s }
            quietHours: { from: "22:00", to: "07:00", then: defer }
            """, items: items, from: "2027-03-01T20:00:00Z", to: "2027-03-02T07:40:00Z")
        #expect(
            deferredAlone.filter { !$0.hasSuffix("live") } == [
                "early 2027-03-02T07:00:00Z 1h deferred from 2027-03-02T06:30:00Z"
            ])
    }

    @Test func quietHoursEndOnTheLocalClockAcrossADSTChange() async throws {
        // Europe/Berlin moves to summer time at 02:00 on 2027-03-28. A run at 07:30 local (05:30 UTC): its 1h
        // reminder (06:30 local) is quiet, and comes when quiet hours end at 07:00 local: 05:00 UTC, not 06:00.
        let events = try await Self.replay(
            """
            reminders: { offsets: [1h] }
            liveActivity: { lead: 0s }
            quietHours: { from: "22:00", to: "07:00", then: defer }
            """, items: ["sunday": Self.event("Run", "20270328T053000Z", "20270328T063000Z")],
            from: "2027-03-27T20:00:00Z", to: "2027-03-28T06:10:00Z", zone: "Europe/Berlin")
        #expect(
            events.filter { !$0.hasSuffix("live") } == [
                "sunday 2027-03-28T05:00:00Z 1h deferred from 2027-03-28T04:30:00Z"
            ])
    }

    @Test func aFlightsTimeToLeaveIsNotHeldBackUnlessARuleSaysSo() async throws {
        let flight = [
            "ba": Self.event(
                "Flight BA987 Berlin (BER) to London (LHR)", "20270302T061000Z", "20270302T080500Z",
                ["LOCATION:Berlin Brandenburg Airport (BER)"])
        ]
        let quiet = """
            reminders: { offsets: [30m] }
            liveActivity: { lead: 0s }
            quietHours: { from: "00:00", to: "06:00", then: drop }
            """
        let kept = try await Self.replay(quiet, items: flight, from: "2027-03-01T20:00:00Z", to: "2027-03-02T06:20:00Z")
        #expect(kept.filter { !$0.hasSuffix("live") }.count == 1, "\(kept)")
        let held = try await Self.replay(
            quiet + "\nrules:\n  - kinds: [flight]\n    quietHours: true\n", items: flight,
            from: "2027-03-01T20:00:00Z", to: "2027-03-02T06:20:00Z")
        #expect(held.filter { !$0.hasSuffix("live") }.isEmpty, "\(held)")
    }

    @Test func checkReportsRulesThatCanNeverMatchAndUnknownKeys() throws {
        let text = """
            rules:
              - offsets: [5m]
              - services: [skyp]
                summary: "(unclosed"
                showAs: [vacation]
                ofsets: [1m]
            quietHours: { from: "22:00", to: "7am" }
            """
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.parse(text, file: "config.yml", directory: "/tmp")
        }
        do {
            _ = try ConfigurationLoader.parse(text, file: "config.yml", directory: "/tmp")
        } catch {
            let report = "\(error)"
            #expect(report.contains("rules[1]: can never apply: rules[0] before it has no condition"), "\(report)")
            #expect(report.contains("'skyp' is not a meeting service calwatch knows"))
            #expect(report.contains("'(unclosed' is not a regular expression"))
            #expect(report.contains("'vacation' is not one of busy, free, tentative, outOfOffice"), "\(report)")
            #expect(report.contains("rules[1].ofsets: is not a known key here; did you mean `offsets`?"))
            #expect(report.contains("'7am' is not a time of day"))
            #expect(report.contains("config.yml:3:"), "problems name their line: \(report)")
        }
    }

    /// The examples config.yml gives in comments parse as documented when uncommented.
    @Test func theDocumentedExamplesParse() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let text = try String(contentsOfFile: root + "/config.yml", encoding: .utf8)
        // The `# rules:`, `# meetings:`, `# places:` and `# travel:` blocks (their lines indented under them) and
        // the `# quietHours:` line, uncommented.
        var examples: [Substring] = []
        var inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            inBlock =
                ["# rules:", "# meetings:", "# places:", "# travel:"].contains(line)
                || (inBlock && line.hasPrefix("#   "))
            if inBlock || line.hasPrefix("# quietHours:") { examples.append(line.dropFirst(2)) }
        }
        let configuration = try ConfigurationLoader.parse(
            examples.joined(separator: "\n"), file: "config.yml", directory: root)
        #expect(configuration.planner.rules.count == 6)
        #expect(
            configuration.planner.rules[5].travelMode == .cycling && configuration.planner.rules[5].anchor == .leaveBy)
        #expect(configuration.planner.rules[3].showAs == [.outOfOffice, .focusTime, .workingLocation])
        #expect(configuration.places.map(\.name) == ["Home", "Office"])
        #expect(configuration.travel.routing?.askAgainBefore == 3600 && configuration.travel.replanAfter == 300)
        #expect(configuration.travel.geocoder?.userAgent == "calwatch (you@example.com)")
        #expect(configuration.planner.rules[1].allDay == ClockTimeReminder(hour: 18, minute: 0, daysBefore: 1))
        #expect(configuration.planner.rules[4].attendance == ["ACCEPTED", "TENTATIVE"])
        #expect(configuration.planner.quietHours == QuietHours(from: 22 * 60, to: 7 * 60, deferToEnd: true))
        #expect(
            configuration.meetingProviders == [
                MeetingProvider(
                    id: "acme-video", hosts: ["video.acme.example"], join: ["/room/"], names: ["acme video"])
            ])
    }
}
