import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// One calendar of one event, as a stranger could send it: `lines` go between UID and SUMMARY.
func strangersCalendar(uid: String = "stranger", _ lines: [String], summary: String = "Sync") -> [UInt8] {
    let body =
        ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Stranger//EN", "BEGIN:VEVENT", "UID:\(uid)", "DTSTAMP:20250101T000000Z"]
        + lines + ["SUMMARY:\(summary)", "END:VEVENT", "END:VCALENDAR", ""]
    return Array(body.joined(separator: "\r\n").utf8)
}

/// Outlook display-name zones (`(UTC+01:00) Amsterdam`) whose offset no zone has.
@Suite struct DisplayNameZoneTests {
    @Test(arguments: ["(UTC+01:35791395) Amsterdam", "(UTC+01:75) Amsterdam", "(UTC+15:00) Nowhere", "UTC+1:2:3"])
    func anOffsetNoZoneHasIsAnUnknownZoneNotACrash(tzid: String) {
        let text = strangersCalendar(["DTSTART;TZID=\"\(tzid)\":20270301T090000", "DURATION:PT30M"])
        let result = scan(["-"], from: "2027-03-01", to: "2027-03-02", zone: "UTC", standardInput: text)
        // Read in the default zone, with a warning naming the TZID: not moved by decades, not a trap.
        #expect(starts(result, uid: "stranger") == ["2027-03-01T09:00:00Z"])
        #expect(result.problems.contains { $0.description.contains("TZID '\(tzid)' is neither a known zone") })
    }

    @Test func realDisplayNameOffsetsStillWork() {
        let text = strangersCalendar(["DTSTART;TZID=\"(UTC+05:30) Chennai, Kolkata\":20270301T090000"])
        let result = scan(["-"], from: "2027-03-01", to: "2027-03-02", zone: "UTC", standardInput: text)
        #expect(starts(result, uid: "stranger") == ["2027-03-01T03:30:00Z"])
        #expect(result.problems.isEmpty)
    }
}
