import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// Every input of docs/design.md §2, and what happens when one of them is bad.
@Suite struct SourceTests {
    @Test func vdirReadsOnlyICSItemsAndNamesCollectionsByDisplayname() {
        let result = scan([fixture("vdir")], from: "2025-03-01", to: "2025-04-01", zone: "UTC")
        #expect(result.occurrences.map(\.uid) == ["work-1", "work-2", "personal-1"])
        #expect(result.occurrences.map(\.calendar) == ["Work (vdirsyncer)", "Work (vdirsyncer)", "personal"])
        #expect(result.problems.isEmpty)
    }

    @Test func radicaleItemsWithoutSuffixAreReadAndTheCacheIsNot() {
        let result = scan([fixture("radicale/family")], from: "2025-03-01", to: "2025-04-01", zone: "UTC")
        #expect(result.occurrences.map(\.uid) == ["radicale-1", "radicale-2"])
        #expect(result.occurrences.allSatisfy { $0.calendar == "Family" })
        #expect(result.problems.isEmpty)
    }

    @Test func calDAVExportIsMatchedByNamespaceWithCDATAAndEscapedText() {
        let result = scan([fixture("caldav-report.xml")], from: "2025-03-01", to: "2025-04-01", zone: "UTC")
        #expect(result.occurrences.map(\.uid) == ["caldav-cdata", "caldav-escaped"])
        #expect(result.occurrences.map(\.summary) == ["From CDATA & friends", "Escaped <text> & more"])
        #expect(result.occurrences.first?.start == utc("2025-03-05T08:00:00Z"))
        #expect(result.occurrences.allSatisfy { $0.calendar == "Default" })
    }

    /// A Depth 1 export holds the collection's own response with its `displayname`: its items take that name (as a
    /// vdir's `displayname` file gives it), not the href's folder, so `Work` is `Work` whichever way it was synced.
    /// Items of a collection the document does not describe keep the folder's name.
    @Test func calDAVExportNamesItsCollectionsByTheirDisplayName() throws {
        func item(_ uid: String) -> String {
            "BEGIN:VCALENDAR&#13;\nVERSION:2.0&#13;\nBEGIN:VEVENT&#13;\nUID:\(uid)&#13;\nDTSTAMP:20250101T000000Z&#13;\n"
                + "DTSTART:20250305T080000Z&#13;\nDTEND:20250305T090000Z&#13;\nSUMMARY:\(uid)&#13;\nEND:VEVENT&#13;\n"
                + "END:VCALENDAR&#13;\n"
        }
        let document = """
            <?xml version="1.0" encoding="utf-8"?>
            <d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:a="http://apple.com/ns/ical/">
             <d:response><d:href>/dav/calendars/me/work/a.ics</d:href><d:propstat><d:prop>
              <c:calendar-data>\(item("in-work"))</c:calendar-data></d:prop></d:propstat></d:response>
             <d:response><d:href>/dav/calendars/me/work/</d:href><d:propstat><d:prop>
              <d:displayname>Work</d:displayname><a:calendar-color>#FF2968FF</a:calendar-color>
              <d:resourcetype><d:collection/><c:calendar/></d:resourcetype></d:prop></d:propstat></d:response>
             <d:response><d:href>/dav/calendars/me/side%20project/b.ics</d:href><d:propstat><d:prop>
              <c:calendar-data>\(item("in-side"))</c:calendar-data></d:prop></d:propstat></d:response>
            </d:multistatus>
            """
        let path = TestFolders.path("calwatch-displayname", suffix: ".xml")
        try document.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = scan([path], from: "2025-03-01", to: "2025-04-01", zone: "UTC")
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(
            result.occurrences.map { "\($0.uid) \($0.calendar)" }.sorted() == ["in-side side project", "in-work Work"])
    }

    /// A folder's names are read where they lie in the directory stream: every name back whole, the longest a file
    /// system allows (255 bytes, multi-byte characters too) and thousands of short ones, each stream buffer read
    /// to its end. Reading the record's whole declared name field instead ran past the buffer (`make test-asan`
    /// reports it here; a daemon rescanning a 10,000-file vdir died of it).
    @Test func aFolderIsListedWholeWithNamesOfEveryLength() throws {
        let folder = TestFolders.path("calwatch-listing")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var names = (0..<4000).map { "\($0).ics" }
        names += (1...255).map { String(repeating: "a", count: $0) }
        names.append(String(repeating: "é", count: 127) + "x")
        for name in names { #expect(FileManager.default.createFile(atPath: folder + "/" + name, contents: nil)) }
        for _ in 0..<3 { #expect(FileStatus.list(folder) == names.sorted()) }
    }

    @Test func standardInputIsOneICalendarStream() {
        let text = try! String(contentsOfFile: fixture("minimal.ics"), encoding: .utf8)
        let result = scan(["-"], from: "2025-03-01", to: "2025-04-01", standardInput: Array(text.utf8))
        #expect(triples(result) == ["bare-lf 2025-03-05T10:00:00Z 2025-03-05T10:00:00Z"])
        #expect(result.occurrences.first?.calendar == "stdin")
    }

    @Test func aFileThatDoesNotParseIsReportedAndTheOthersAreStillRead() {
        let result = scan(
            [fixture("not-a-calendar.ics"), fixture("minimal.ics"), "/no/such/calendar.ics"], from: "2025-03-01",
            to: "2025-04-01")
        #expect(result.occurrences.map(\.uid) == ["bare-lf"])
        #expect(!result.nothingReadable)
        let messages = result.problems.map(\.description)
        #expect(
            messages.contains {
                $0.hasSuffix(
                    "not-a-calendar.ics:1: error: not iCalendar data: expected BEGIN:VCALENDAR, found 'this is not a calendar'"
                )
            })
        #expect(messages.contains { $0.hasPrefix("/no/such/calendar.ics: error: no such file or directory") })
    }

    @Test func nothingReadableWhenEverySourceFails() {
        let result = scan([fixture("not-a-calendar.ics")], from: "2025-03-01", to: "2025-04-01")
        #expect(result.nothingReadable)
    }

    @Test func byteOrderMarkBinaryAndConcatenatedCalendars() {
        let twoCalendars =
            "\u{FEFF}BEGIN:VCALENDAR\r\nX-WR-CALNAME:One\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20250305T100000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\nBEGIN:VCALENDAR\r\nX-WR-CALNAME:Two\r\nBEGIN:VEVENT\r\nUID:b\r\nDTSTART:20250305T110000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
        let result = scan(["-"], from: "2025-03-01", to: "2025-04-01", standardInput: Array(twoCalendars.utf8))
        #expect(result.occurrences.map { "\($0.calendar)/\($0.uid)" } == ["One/a", "Two/b"])
        let binary = scan(["-"], from: "2025-03-01", to: "2025-04-01", standardInput: [0x80, 0, 0xFF, 0x13])
        #expect(binary.nothingReadable)
    }

    @Test func toDosAreOptionalAndOccurAtTheirDueTime() {
        let without = scan([fixture("todos.ics")], from: "2025-03-01", to: "2025-04-01")
        #expect(without.occurrences.isEmpty)
        let with = scan([fixture("todos.ics")], from: "2025-03-01", to: "2025-04-01", todos: true)
        // Completed and undated to-dos are left out without complaint.
        #expect(triples(with) == ["tax-return 2025-03-31T16:00:00Z 2025-03-31T16:00:00Z"])
        #expect(with.problems.isEmpty)
    }
}
