import Foundation
import Testing

@testable import CalWatchCore

/// Producer habits met on calendars written outside the team, each from calendar text of our own.
@Suite struct ProducerHabitTests {
    static func scanText(_ body: String, from: String = "2027-03-01", to: String = "2027-04-01") throws
        -> CalendarScan.Result
    {
        let path = TestFolders.path("habit", suffix: ".ics")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//habits//EN\r\n" + body + "END:VCALENDAR\r\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return scan([path], from: from, to: to, zone: "UTC")
    }

    /// Teamup writes its own property names without `X-`: one summary line per file, not one per property per item.
    @Test func producersOwnPropertyNamesAreSummedUpOncePerFile() throws {
        let items = (1...4).map { day in
            "BEGIN:VEVENT\r\nUID:t\(day)\r\nDTSTAMP:20270101T000000Z\r\nDTSTART:2027030\(day)T090000Z\r\n"
                + "SUMMARY:Shift \(day)\r\nTEAMUP-EVENT-ID:\(day)\r\nTEAMUP-WHO:Ana\r\nEND:VEVENT\r\n"
        }
        let result = try Self.scanText(items.joined())
        #expect(result.occurrences.count == 4)
        #expect(
            result.problems.map(\.message) == [
                "properties calwatch does not know are ignored in 4 items: TEAMUP-EVENT-ID (4), TEAMUP-WHO (4); a "
                    + "producer's own properties should be named X-…, which are passed over silently"
            ])
        #expect(result.problems.first?.line == 4)
    }

    @Test func anExdateOnAnOverriddenInstanceDeletesItOverrideAndAll() throws {
        let result = try Self.scanText(
            """
            BEGIN:VEVENT\r
            UID:s1\r
            DTSTAMP:20270101T000000Z\r
            DTSTART:20270301T090000Z\r
            DTEND:20270301T093000Z\r
            RRULE:FREQ=DAILY;COUNT=5\r
            EXDATE:20270303T090000Z\r
            SUMMARY:Series\r
            END:VEVENT\r
            BEGIN:VEVENT\r
            UID:s1\r
            DTSTAMP:20270101T000000Z\r
            RECURRENCE-ID:20270303T090000Z\r
            DTSTART:20270303T110000Z\r
            DTEND:20270303T113000Z\r
            SUMMARY:Moved, then deleted\r
            END:VEVENT\r
            BEGIN:VEVENT\r
            UID:s1\r
            DTSTAMP:20270101T000000Z\r
            RECURRENCE-ID:20270304T090000Z\r
            DTSTART:20270304T120000Z\r
            DTEND:20270304T123000Z\r
            SUMMARY:Moved\r
            END:VEVENT\r

            """)
        #expect(
            starts(result, uid: "s1") == [
                "2027-03-01T09:00:00Z", "2027-03-02T09:00:00Z", "2027-03-04T12:00:00Z", "2027-03-05T09:00:00Z",
            ])
    }

    @Test func aCountOfZeroOrLessBesideAnUntilIsReadAsTheUntil() throws {
        let result = try Self.scanText(
            """
            BEGIN:VEVENT\r
            UID:c1\r
            DTSTAMP:20270101T000000Z\r
            DTSTART:20270301T090000Z\r
            DTEND:20270301T093000Z\r
            RRULE:FREQ=DAILY;COUNT=-1;UNTIL=20270304T090000Z\r
            SUMMARY:Team plugin\r
            END:VEVENT\r

            """)
        #expect(starts(result, uid: "c1").count == 4)
        let warning = try #require(result.problems.first)
        #expect(warning.severity == .warning)
        #expect(
            warning.message.contains(
                "read it as 'FREQ=DAILY;UNTIL=20270304T090000Z' (COUNT=-1 beside an UNTIL dropped)"), "\(warning)")
    }

    /// A typo in a rule part must not turn a series that ended in 2019 into one that never ends.
    @Test func anUnknownRulePartNeverWidensASeries() throws {
        let result = try Self.scanText(
            """
            BEGIN:VEVENT\r
            UID:u1\r
            DTSTAMP:20190101T000000Z\r
            DTSTART:20190101T090000Z\r
            DTEND:20190101T093000Z\r
            RRULE:FREQ=WEEKLY;UNTL=20191023\r
            SUMMARY:Weekly, until October 2019\r
            END:VEVENT\r

            """, from: "2019-01-01", to: "2027-04-01")
        #expect(starts(result, uid: "u1") == ["2019-01-01T09:00:00Z"])
        let error = try #require(result.problems.first)
        #expect(error.severity == .error)
        #expect(error.message.contains("UNTL is not an RRULE part (did you mean UNTIL?)"), "\(error)")
        #expect(error.line == 4)
    }

    @Test func typosAreOneEditFromAKnownPart() {
        #expect(RecurrenceRuleRepair.closeTo("UNTIL", "UNTL"))
        #expect(RecurrenceRuleRepair.closeTo("BYDAY", "BYDYA"))
        #expect(RecurrenceRuleRepair.closeTo("COUNT", "COUNTS"))
        #expect(!RecurrenceRuleRepair.closeTo("UNTIL", "X-FOO"))
    }

    /// The same series' master written twice in one file: the later one is used, and the warning names both lines
    /// and the EXDATE the other held.
    @Test func aMasterWrittenTwiceIsNamedWithWhatIsLost() throws {
        let master = { (summary: String, extra: String) in
            """
            BEGIN:VEVENT\r
            UID:d1\r
            DTSTAMP:20270101T000000Z\r
            DTSTART:20270301T090000Z\r
            DTEND:20270301T093000Z\r
            RRULE:FREQ=DAILY;COUNT=4\r
            \(extra)SUMMARY:\(summary)\r
            END:VEVENT\r

            """
        }
        let result = try Self.scanText(
            master("First", "EXDATE:20270302T090000Z\r\n") + master("Second", ""))
        #expect(result.occurrences.map(\.summary) == ["Second", "Second", "Second", "Second"])
        let warning = try #require(result.problems.first)
        #expect(warning.severity == .warning && warning.line == 13)
        #expect(
            warning.message
                == "the series is written twice (a master at line 4 and one at line 13); the one at line 13 is used, "
                + "and the other's EXDATEs 2027-03-02T09:00:00Z are not, so those instances are shown; keep one "
                + "master (with every EXDATE)")
    }

    /// Thunderbird's daily task: DTSTART and RRULE, no DUE, an alarm before the start. It happens at its DTSTART
    /// each day and its alarm fires before each; a dated one (no time) at the start of its day. Without DTSTART or
    /// DUE a to-do has no moment and stays out, without complaint.
    @Test func aToDoWithoutDueHappensAtItsStartAndItsAlarmsFire() throws {
        let path = TestFolders.path("todo", suffix: ".ics")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
        BEGIN:VCALENDAR\r
        PRODID:-//Mozilla.org/NONSGML Mozilla Calendar V1.1//EN\r
        VERSION:2.0\r
        BEGIN:VTODO\r
        CREATED:20270225T101112Z\r
        LAST-MODIFIED:20270225T101140Z\r
        DTSTAMP:20270225T101140Z\r
        UID:5f6e1c9e-2f3a-4d57-9d1e-3c7f7b0b8a11\r
        SUMMARY:Water the plants\r
        RRULE:FREQ=DAILY\r
        DTSTART;TZID=Europe/Berlin:20270301T090000\r
        PERCENT-COMPLETE:0\r
        X-MOZ-GENERATION:2\r
        BEGIN:VALARM\r
        ACTION:DISPLAY\r
        TRIGGER;VALUE=DURATION:-PT15M\r
        DESCRIPTION:Default Mozilla Description\r
        END:VALARM\r
        END:VTODO\r
        BEGIN:VTODO\r
        DTSTAMP:20270225T101140Z\r
        UID:dated\r
        SUMMARY:Pay the rent\r
        DTSTART;VALUE=DATE:20270302\r
        END:VTODO\r
        BEGIN:VTODO\r
        DTSTAMP:20270225T101140Z\r
        UID:undated\r
        SUMMARY:Someday\r
        END:VTODO\r
        END:VCALENDAR\r

        """.write(toFile: path, atomically: true, encoding: .utf8)
        let result = scan([path], from: "2027-03-01", to: "2027-03-04", zone: "Europe/Berlin", todos: true)
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(
            starts(result, uid: "5f6e1c9e-2f3a-4d57-9d1e-3c7f7b0b8a11") == [
                "2027-03-01T08:00:00Z", "2027-03-02T08:00:00Z", "2027-03-03T08:00:00Z",
            ])
        #expect(starts(result, uid: "dated") == ["2027-03-01T23:00:00Z"])
        #expect(starts(result, uid: "undated").isEmpty)
        let triggers = AlarmExpander.triggers(
            of: result.occurrences,
            in: InstantWindow(start: utc("2027-03-01T00:00:00Z"), end: utc("2027-03-04T00:00:00Z")))
        #expect(
            triggers.map(\.trigger.description) == [
                "2027-03-01T07:45:00Z", "2027-03-02T07:45:00Z", "2027-03-03T07:45:00Z",
            ])
    }

    /// `todos: true` in the configuration: the daemon's planning (here `replay`) reminds of Thunderbird's daily task
    /// at its own alarm and the configured offsets, each day; without it, to-dos are left out.
    @Test(arguments: [true, false])
    func theDaemonRemindsOfAToDoWithoutDueWhenToDosAreOn(todos: Bool) async throws {
        let task = """
            BEGIN:VTODO\r
            DTSTAMP:20270225T101140Z\r
            UID:plants\r
            SUMMARY:Water the plants\r
            RRULE:FREQ=DAILY\r
            DTSTART:20270301T080000Z\r
            BEGIN:VALARM\r
            ACTION:DISPLAY\r
            TRIGGER;VALUE=DURATION:-PT15M\r
            DESCRIPTION:Default Mozilla Description\r
            END:VALARM\r
            END:VTODO\r

            """
        let folder = try await NotifySinkTests.replay(
            task, "todos: \(todos)\nreminders: { offsets: [5m] }\nsinks: [{ type: jsonl, path: events.jsonl }]\n",
            from: "2027-03-01T00:00:00Z", to: "2027-03-03T00:00:00Z")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let due = SinkFixtures.lines(folder + "/events.jsonl").filter { $0.contains("calwatch.reminderDue") }
            .compactMap { $0.firstMatch(of: /"time":"([^"]+)"/).map { String($0.1) } }
        #expect(
            due
                == (todos
                    ? [
                        "2027-03-01T07:45:00Z", "2027-03-01T07:55:00Z", "2027-03-02T07:45:00Z",
                        "2027-03-02T07:55:00Z",
                    ] : []),
            "\(due)")
    }

    /// A recurring to-do expands like an event (`--todos`), each instance at its DUE, and its alarms follow every
    /// instance: `RELATED=START` from its DTSTART, `RELATED=END` from its DUE (RFC 5545 §3.8.6.3).
    @Test func aRecurringToDoExpandsWithItsAlarmsFromDtstartOrDue() throws {
        let path = TestFolders.path("todo", suffix: ".ics")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
        BEGIN:VCALENDAR\r
        VERSION:2.0\r
        PRODID:-//habits//EN\r
        BEGIN:VTODO\r
        UID:t1\r
        DTSTAMP:20270101T000000Z\r
        DTSTART:20270301T080000Z\r
        DUE:20270301T090000Z\r
        RRULE:FREQ=DAILY;COUNT=3\r
        SUMMARY:Water the plants\r
        BEGIN:VALARM\r
        ACTION:DISPLAY\r
        TRIGGER:-PT5M\r
        END:VALARM\r
        BEGIN:VALARM\r
        ACTION:DISPLAY\r
        TRIGGER;RELATED=END:-PT10M\r
        END:VALARM\r
        END:VTODO\r
        END:VCALENDAR\r

        """.write(toFile: path, atomically: true, encoding: .utf8)
        let result = scan([path], from: "2027-03-01", to: "2027-03-10", zone: "UTC", todos: true)
        #expect(starts(result, uid: "t1") == ["2027-03-01T09:00:00Z", "2027-03-02T09:00:00Z", "2027-03-03T09:00:00Z"])
        let triggers = AlarmExpander.triggers(
            of: result.occurrences,
            in: InstantWindow(start: utc("2027-03-01T00:00:00Z"), end: utc("2027-03-10T00:00:00Z")))
        #expect(
            triggers.map(\.trigger.description) == [
                "2027-03-01T07:55:00Z", "2027-03-01T08:50:00Z", "2027-03-02T07:55:00Z", "2027-03-02T08:50:00Z",
                "2027-03-03T07:55:00Z", "2027-03-03T08:50:00Z",
            ])
    }
}
