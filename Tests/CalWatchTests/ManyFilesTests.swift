import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// A vdir of hundreds of items, read the way the daemon reads it at start and after a sync rewrote it: each file
/// parsed, expanded and classified on its own on all cores, the items' repeated VTIMEZONEs read once.
@Suite(.timeLimit(.minutes(2))) struct ManyFilesTests {
    /// A vdirsyncer item as Google or Nextcloud writes it: the zone its times name, then the event.
    static func item(uid: String, start: String, zone: String = "Office", offset: String = "+0300") -> String {
        [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VTIMEZONE", "TZID:\(zone)",
            "BEGIN:STANDARD", "TZOFFSETFROM:\(offset)", "TZOFFSETTO:\(offset)", "DTSTART:19700101T000000",
            "END:STANDARD", "END:VTIMEZONE", "BEGIN:VEVENT", "UID:\(uid)", "DTSTAMP:20270101T000000Z",
            "DTSTART;TZID=\(zone):\(start)", "DURATION:PT30M", "SUMMARY:Review \(uid)", "END:VEVENT", "END:VCALENDAR",
        ].joined(separator: "\r\n") + "\r\n"
    }

    @Test func hundredsOfItemsAtStartAreEachRemindedOnceWithTheBrokenOnesHeldBackByName() async throws {
        let bench = try WatchTests.Bench(collections: ["work", "team"])
        bench.configuration.planner.liveActivityLead = 0
        bench.configuration.planner.liveActivityUpdateInterval = 3_600
        // 150 items from 12:00 Office time (09:00Z), at five times a minute apart; three of them half-written.
        for index in 0..<150 {
            try bench.writeRenamed(
                "work/item-\(String(format: "%03d", index)).ics",
                Self.item(uid: "u\(index)", start: "20270301T120\(index % 5)00"))
        }
        let broken = ["work/item-007.ics", "work/item-070.ics", "work/item-140.ics"]
        for path in broken { try bench.writeInPlace(path, "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:cut") }
        // Five of them also in the team's calendar: one invitation in two calendars.
        for index in 10..<15 {
            try bench.writeRenamed(
                "team/copy-\(index).ics", Self.item(uid: "u\(index)", start: "20270301T120\(index % 5)00"))
        }

        let start = try await bench.start(at: "2027-03-01T08:00:00Z")
        #expect(start.parsed == 155)
        #expect(start.changed == 152)
        #expect(start.unsettled == broken.map { bench.root + "/" + $0 })
        #expect(bench.watch.occurrenceCount == 147)

        // The copies' team files go: the work calendar's items go on being planned.
        for index in 10..<15 { try bench.delete("team/copy-\(index).ics") }
        try await bench.changes(at: "2027-03-01T08:01:00Z", expecting: Set((10..<15).map { "team/copy-\($0).ics" }))
        #expect(bench.watch.occurrenceCount == 147)

        // Woken for what is due, as the daemon is.
        for _ in 0..<100 {
            guard let wake = bench.watch.nextWake, wake <= utc("2027-03-01T12:00:00Z") else { break }
            try await bench.advance(to: "\(wake)")
        }
        _ = await bench.received()
        let reminders = await bench.sink.events.filter { $0.type == .reminderDue }
        var byUID: [String: Int] = [:]
        for reminder in reminders { byUID[reminder.key.uid, default: 0] += 1 }
        let expected = Set((0..<150).map { "u\($0)" }).subtracting(["u7", "u70", "u140"])
        #expect(Set(byUID.keys) == expected)
        #expect(byUID.values.allSatisfy { $0 == 3 }, "\(byUID.filter { $0.value != 3 })")
        // Each at its own time: 30 minutes before 12:00 Office (+03:00) is 08:30Z for the first.
        #expect(reminders.first { $0.key.uid == "u0" }?.time == utc("2027-03-01T08:30:00Z"))
        #expect(reminders.first { $0.key.uid == "u149" }?.time == utc("2027-03-01T08:34:00Z"))
    }

    /// Two files may give one TZID different rules: each file's times follow its own VTIMEZONE, however many
    /// files named that zone before.
    @Test func aZoneReadBeforeIsTakenByItsTextNotItsName() throws {
        let folder = TestFolders.path("calwatch-zones")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/cal", withIntermediateDirectories: true)
        // Many files with the +03:00 rules, then one with -05:00 under the same name, then +03:00 again.
        for index in 0..<80 {
            try Self.item(uid: "east-\(index)", start: "20270301T090000")
                .write(
                    toFile: folder + "/cal/a-\(String(format: "%02d", index)).ics", atomically: true, encoding: .utf8)
        }
        try Self.item(uid: "west", start: "20270301T090000", offset: "-0500")
            .write(toFile: folder + "/cal/b.ics", atomically: true, encoding: .utf8)
        try Self.item(uid: "east-again", start: "20270301T090000")
            .write(toFile: folder + "/cal/c.ics", atomically: true, encoding: .utf8)

        for _ in 0..<2 {
            let result = scan([folder], from: "2027-03-01T00:00:00Z", to: "2027-03-02T00:00:00Z", zone: "UTC")
            #expect(result.problems.isEmpty, "\(result.problems)")
            #expect(starts(result, uid: "east-0") == ["2027-03-01T06:00:00Z"])
            #expect(starts(result, uid: "east-79") == ["2027-03-01T06:00:00Z"])
            #expect(starts(result, uid: "west") == ["2027-03-01T14:00:00Z"])
            #expect(starts(result, uid: "east-again") == ["2027-03-01T06:00:00Z"])
        }
    }

    /// A zone too long to keep (years of RDATEs) is read from each file as it comes.
    @Test func aLongZoneIsReadFromEachFile() throws {
        let folder = TestFolders.path("calwatch-long-zone")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let dates = (1971..<2030).map { "RDATE:\($0)0101T000000" }.joined(separator: "\r\n")
        let padding = String(repeating: "X-PADDING:" + String(repeating: "z", count: 60) + "\r\n", count: 300)
        for (name, offset) in [("a", "+0300"), ("b", "-0500"), ("c", "+0300")] {
            let text = Self.item(uid: name, start: "20270301T090000", offset: offset)
                .replacingOccurrences(of: "END:STANDARD", with: dates + "\r\n" + padding + "END:STANDARD")
            #expect(text.utf8.count > ICalDocumentParser.knownZoneBytes)
            try text.write(toFile: folder + "/\(name).ics", atomically: true, encoding: .utf8)
        }
        let result = scan([folder], from: "2027-03-01T00:00:00Z", to: "2027-03-02T00:00:00Z", zone: "UTC")
        #expect(
            triples(result) == [
                "a 2027-03-01T06:00:00Z 2027-03-01T06:30:00Z", "c 2027-03-01T06:00:00Z 2027-03-01T06:30:00Z",
                "b 2027-03-01T14:00:00Z 2027-03-01T14:30:00Z",
            ])
    }

    /// A problem in an item whose zone was read from an earlier item still names its line.
    @Test func anItemWithAZoneReadBeforeKeepsItsLines() throws {
        let folder = TestFolders.path("calwatch-zone-lines")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.item(uid: "first", start: "20270301T090000")
            .write(toFile: folder + "/a.ics", atomically: true, encoding: .utf8)
        let bad = Self.item(uid: "second", start: "20270301T090000")
            .replacingOccurrences(of: "DURATION:PT30M", with: "RRULE:FREQ=SOMETIMES")
        try bad.write(toFile: folder + "/b.ics", atomically: true, encoding: .utf8)
        let result = scan([folder], from: "2027-03-01T00:00:00Z", to: "2027-03-02T00:00:00Z", zone: "UTC")
        let problem = try #require(result.problems.first { $0.path == folder + "/b.ics" })
        // The VEVENT begins on line 12 of b.ics, after the 11 lines of the calendar's head and its VTIMEZONE.
        #expect(problem.line == 12, "\(result.problems)")
    }

    @Test func runsComeBackInTheItemsOrderAndBothPartsRun() {
        let items = Array(0..<1_000)
        let runs = ParallelRuns.map(items, runLength: 7) { run in run.map { $0 * 2 } }
        #expect(runs.count == 143)
        #expect(Array(runs.joined()) == items.map { $0 * 2 })
        #expect(ParallelRuns.map([Int](), { $0.count }).isEmpty)

        let first = Locked(0)
        var second = 0
        ParallelRuns.both {
            first.withLock { $0 = 1 }
        } _: {
            second = 2
        }
        #expect(first.withLock { $0 } == 1 && second == 2)
    }
}
