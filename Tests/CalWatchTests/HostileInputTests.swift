import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// Every calendar is a stranger's: hostile lines in one event never crash the scan or cost another event.
@Suite(.ownThread) struct HostileInputTests {
    static let hostileLines = [
        "DTSTART:99991231T235959Z", "DTSTART;TZID=Nowhere/Land:20250324T093000", "DTSTART;VALUE=DATE:20250230",
        "DTEND:19000101T000000Z", "DURATION:P99999999W", "DURATION:-P1D", "RRULE:FREQ=SECONDLY",
        "RRULE:FREQ=YEARLY;BYYEARDAY=366;BYWEEKNO=53;BYSETPOS=-1", "RRULE:FREQ=DAILY;COUNT=2147483647",
        "RRULE:FREQ=MINUTELY;INTERVAL=0", "RRULE:FREQ=WEEKLY;BYDAY=1MO,-53SU", "RRULE:;;;", "EXDATE:garbage",
        "RDATE;VALUE=PERIOD:20250101T000000Z/", "RECURRENCE-ID;RANGE=THISANDFUTURE:20250101T090000Z",
        "SUMMARY:$(touch /tmp/calwatch-test-pwned); `id`; rm -rf / | cat", "X-WR-TIMEZONE:../../etc/passwd",
        "BEGIN:VALARM", "UID:", "SUMMARY:\u{0}\u{1}\u{7f}",
    ]

    @Test(arguments: hostileLines)
    func hostileLineInOneEventLeavesTheOtherEventIntact(line: String) throws {
        let original = try String(contentsOfFile: fixture("google-recurring.ics"), encoding: .utf8)
        // Inject into the recurring standup (the first VEVENT); the design review is a separate VEVENT.
        let marker = "UID:7kukuqrfedlm2f9t4oa4kr5j6c@google.com\r\nCREATED"
        let text = original.replacingOccurrences(of: marker, with: line + "\r\n" + marker)
        #expect(text != original)
        let result = scan(["-"], from: "2025-03-01", to: "2025-05-01", standardInput: Array(text.utf8))
        #expect(
            triples(result, uid: "0a1b2c3d4e5f@google.com") == [
                "0a1b2c3d4e5f@google.com 2025-03-25T15:00:00Z 2025-03-25T16:00:00Z"
            ])
        #expect(!FileManager.default.fileExists(atPath: "/tmp/calwatch-test-pwned"))
    }
}

/// Broken structure is mended so that one bad component never takes its neighbours with it.
@Suite struct StructureRepairTests {
    func events(_ body: String) -> (uids: [String], problems: [String]) {
        let text = body.replacingOccurrences(of: "\n", with: "\r\n")
        let result = scan(["-"], from: "2025-03-01", to: "2025-04-01", zone: "UTC", standardInput: Array(text.utf8))
        return (result.occurrences.map(\.uid), result.problems.map(\.description))
    }

    @Test func unclosedAlarmIsClosedAtItsEventsEnd() {
        let (uids, problems) = events(
            """
            BEGIN:VCALENDAR
            BEGIN:VEVENT
            UID:a
            DTSTART:20250305T100000Z
            BEGIN:VALARM
            TRIGGER:-PT5M
            END:VEVENT
            BEGIN:VEVENT
            UID:b
            DTSTART:20250306T100000Z
            END:VEVENT
            END:VCALENDAR

            """)
        #expect(uids == ["a", "b"])
        #expect(problems.contains("-:7: warning: BEGIN:VALARM is never closed; closed before END:VEVENT on line 7"))
    }

    @Test func missingEndBeforeTheNextEventIsSupplied() {
        let (uids, problems) = events(
            """
            BEGIN:VCALENDAR
            BEGIN:VEVENT
            UID:a
            DTSTART:20250305T100000Z
            BEGIN:VEVENT
            UID:b
            DTSTART:20250306T100000Z
            END:VEVENT
            END:VCALENDAR

            """)
        #expect(uids == ["a", "b"])
        #expect(problems.contains("-:5: warning: BEGIN:VEVENT is never closed; closed before BEGIN:VEVENT on line 5"))
    }

    @Test func strayEndIsDroppedAndEventsAfterTheCalendarAreKept() {
        let (uids, problems) = events(
            """
            BEGIN:VCALENDAR
            BEGIN:VEVENT
            UID:a
            END:VTODO
            DTSTART:20250305T100000Z
            END:VEVENT
            END:VCALENDAR
            BEGIN:VEVENT
            UID:b
            DTSTART:20250306T100000Z
            END:VEVENT

            """)
        #expect(uids == ["a", "b"])
        #expect(problems.contains("-:4: warning: END:VTODO without a matching BEGIN is ignored"))
        #expect(problems.contains("-:8: warning: BEGIN:VEVENT after END:VCALENDAR is read as part of the calendar"))
    }

    @Test func truncatedFileKeepsWhatWasComplete() {
        let (uids, problems) = events(
            """
            BEGIN:VCALENDAR
            BEGIN:VEVENT
            UID:a
            DTSTART:20250305T100000Z
            END:VEVENT
            BEGIN:VEVENT
            UID:b
            DTSTART:20250306T10

            """)
        #expect(uids == ["a"])
        #expect(problems.contains { $0.contains("BEGIN:VCALENDAR is never closed") })
    }

    @Test func nulByteIsRemovedNotTheRestOfTheFile() {
        let (uids, problems) = events(
            "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:a\nSUMMARY:x\u{0}y\nDTSTART:20250305T100000Z\nEND:VEVENT\nBEGIN:VEVENT\nUID:b\nDTSTART:20250306T100000Z\nEND:VEVENT\nEND:VCALENDAR\n"
        )
        #expect(uids == ["a", "b"])
        #expect(problems.contains("-:4: warning: NUL bytes removed (the first on this line)"))
    }
}
