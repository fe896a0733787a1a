import Foundation
import Testing

@testable import CalWatchCore

/// `scan` prints occurrences by start, then uid, then calendar, then end, however the items are written: the order
/// tools that diff or merge its output rely on. The items' occurrences are merged as they are written.
@Suite struct ScanOrderTests {
    /// One calendar's text; `events` are the lines of each VEVENT.
    static func calendar(_ events: [[String]]) -> String {
        (["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN"]
            + events.flatMap { ["BEGIN:VEVENT", "DTSTAMP:20270101T000000Z"] + $0 + ["END:VEVENT"] }
            + ["END:VCALENDAR"]).joined(separator: "\r\n") + "\r\n"
    }

    /// Items written in reverse order of UID; a weekly series whose third week was moved before its second and
    /// whose fourth starts with another item; extra dates listed out of order; two items that start together and
    /// end apart; the same UID in a second calendar.
    static func folder() throws -> String {
        let root = URL(fileURLWithPath: TestFolders.path("scan-order"))
        let work = root.appendingPathComponent("work")
        let team = root.appendingPathComponent("team")
        for folder in [work, team] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let work1 = calendar([
            ["UID:zulu", "DTSTART:20270301T090000Z", "DTEND:20270301T100000Z", "SUMMARY:Long"],
            ["UID:yankee", "DTSTART:20270301T090000Z", "DTEND:20270301T093000Z", "SUMMARY:Short"],
            [
                "UID:series", "DTSTART:20270301T080000Z", "DTEND:20270301T083000Z", "RRULE:FREQ=WEEKLY;COUNT=5",
                "SUMMARY:Weekly",
            ],
            [
                "UID:series", "RECURRENCE-ID:20270315T080000Z", "DTSTART:20270307T070000Z",
                "DTEND:20270307T073000Z", "SUMMARY:Moved before the second week",
            ],
            [
                "UID:series", "RECURRENCE-ID:20270322T080000Z", "DTSTART:20270322T090000Z",
                "DTEND:20270322T100000Z", "SUMMARY:Moved to start with alpha",
            ],
            ["UID:alpha", "DTSTART:20270322T090000Z", "DTEND:20270322T091500Z", "SUMMARY:Alpha"],
            [
                "UID:extra-dates", "DTSTART:20270310T120000Z", "DTEND:20270310T130000Z",
                "RDATE:20270325T120000Z,20270305T120000Z", "SUMMARY:Dates listed late and early",
            ],
            ["UID:same-end", "DTSTART:20270322T090000Z", "DTEND:20270322T100000Z", "SUMMARY:A"],
            [
                "UID:same-end", "RECURRENCE-ID:20270322T090000Z", "DTSTART:20270322T090000Z",
                "DTEND:20270322T093000Z", "SUMMARY:B",
            ],
        ])
        try work1.write(to: work.appendingPathComponent("work.ics"), atomically: true, encoding: .utf8)
        let team1 = calendar([["UID:alpha", "DTSTART:20270322T090000Z", "DTEND:20270322T091500Z", "SUMMARY:Alpha"]])
        try team1.write(to: team.appendingPathComponent("alpha.ics"), atomically: true, encoding: .utf8)
        return root.path
    }

    @Test func occurrencesComeOutByStartUidCalendarAndEndWhateverTheOrderTheyAreWrittenIn() throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let result = scan([root], from: "2027-03-01", to: "2027-04-01", zone: "UTC")
        let lines = result.occurrences.map { "\($0.start) \($0.uid) \($0.calendar) \($0.end)" }
        #expect(
            lines == [
                "2027-03-01T08:00:00Z series work 2027-03-01T08:30:00Z",
                "2027-03-01T09:00:00Z yankee work 2027-03-01T09:30:00Z",
                "2027-03-01T09:00:00Z zulu work 2027-03-01T10:00:00Z",
                "2027-03-05T12:00:00Z extra-dates work 2027-03-05T13:00:00Z",
                "2027-03-07T07:00:00Z series work 2027-03-07T07:30:00Z",
                "2027-03-08T08:00:00Z series work 2027-03-08T08:30:00Z",
                "2027-03-10T12:00:00Z extra-dates work 2027-03-10T13:00:00Z",
                "2027-03-22T09:00:00Z alpha team 2027-03-22T09:15:00Z",
                "2027-03-22T09:00:00Z alpha work 2027-03-22T09:15:00Z",
                "2027-03-22T09:00:00Z same-end work 2027-03-22T09:30:00Z",
                "2027-03-22T09:00:00Z series work 2027-03-22T10:00:00Z",
                "2027-03-25T12:00:00Z extra-dates work 2027-03-25T13:00:00Z",
                "2027-03-29T08:00:00Z series work 2027-03-29T08:30:00Z",
            ], "\(lines.joined(separator: "\n"))")
    }

    /// What `scan` writes as it merges is what the sorted list gives, record for record.
    @Test func jsonLinesWrittenWhileMergingAreTheSortedListsLines() throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let sorted = scan([root], from: "2027-03-01", to: "2027-04-01", zone: "UTC")
        let rules = TimeZoneDatabase.rules(named: "UTC")!
        let options = ExpansionOptions(
            window: InstantWindow(start: utc("2027-03-01T00:00:00Z"), end: utc("2027-04-01T00:00:00Z")),
            defaultZone: rules)
        var (merge, result) = CalendarScan(paths: [root], options: options).runMerging()
        #expect(result.occurrences.isEmpty && merge.remaining == sorted.occurrences.count)
        var merged: [UInt8] = []
        OccurrenceJSON.writeLines(&merge, classifier: Classifier()) { merged += $0 }
        var listed: [UInt8] = []
        OccurrenceJSON.writeLines(sorted.occurrences, classifier: Classifier()) { listed += $0 }
        #expect(merge.remaining == 0)
        #expect(String(decoding: merged, as: UTF8.self) == String(decoding: listed, as: UTF8.self))
        #expect(merged.count(where: { $0 == UInt8(ascii: "\n") }) == 13)
    }

    /// The merge does not rely on the expander's order: each item's occurrences handed over backwards (and one
    /// block of two items mixed) come out as the scan orders them.
    @Test func blocksGivenInAnyOrderAreMergedIntoTheScansOrder() throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let sorted = scan([root], from: "2027-03-01", to: "2027-04-01", zone: "UTC").occurrences
        var byItem: [String: [Occurrence]] = [:]
        for occurrence in sorted { byItem["\(occurrence.calendar) \(occurrence.uid)", default: []].append(occurrence) }
        let mixed = ["work zulu", "work yankee"]
        var blocks = byItem.keys.sorted().reversed().filter { !mixed.contains($0) }.map {
            OccurrenceBlock(byItem[$0]!.reversed())
        }
        blocks.append(OccurrenceBlock(mixed.flatMap { byItem[$0]! }))
        // Both kinds of block: one source kept compact, and sources mixed (the moved weeks, the two items).
        #expect(blocks.contains { $0.isOneSourceInOrder } && blocks.contains { !$0.isOneSourceInOrder })
        var merge = OccurrenceMerge(blocks: blocks)
        let merged = merge.all()
        let line = { (occurrence: Occurrence) in
            "\(occurrence.start) \(occurrence.uid) \(occurrence.calendar) \(occurrence.end)"
        }
        #expect(merged.map(line) == sorted.map(line))
        #expect(merge.remaining == 0)
    }
}
