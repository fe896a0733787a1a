import CalWatchPostgres
import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// One calendar of one event, as a stranger could send it: `lines` go between UID and SUMMARY.
func strangersCalendar(uid: String = "stranger", _ lines: [String], summary: String = "Sync") -> [UInt8] {
    let body =
        [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Stranger//EN", "BEGIN:VEVENT", "UID:\(uid)",
            "DTSTAMP:20250101T000000Z",
        ]
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

    /// Vendor prefixes before an IANA name, as Mozilla writes them, and thousands of them as a stranger could.
    @Test(arguments: ["/mozilla.org/20070129_1/Europe/Berlin", String(repeating: "Europe/", count: 5000) + "Berlin"])
    func aPrefixedZoneEndsInItsIANAName(tzid: String) {
        let text = strangersCalendar(["DTSTART;TZID=\(tzid):20270301T090000"])
        let result = scan(["-"], from: "2027-03-01", to: "2027-03-02", zone: "UTC", standardInput: text)
        #expect(starts(result, uid: "stranger") == ["2027-03-01T08:00:00Z"])
        #expect(result.problems.isEmpty)
    }

    @Test func realDisplayNameOffsetsStillWork() {
        let text = strangersCalendar(["DTSTART;TZID=\"(UTC+05:30) Chennai, Kolkata\":20270301T090000"])
        let result = scan(["-"], from: "2027-03-01", to: "2027-03-02", zone: "UTC", standardInput: text)
        #expect(starts(result, uid: "stranger") == ["2027-03-01T03:30:00Z"])
        #expect(result.problems.isEmpty)
    }
}

/// Everything calwatch says about a file names the file: libical and libxml2 print some complaints to standard
/// error themselves, and those are kept from reaching it.
@Suite struct LibraryChatterTests {
    @Test func onlyCalwatchsOwnLinesReachStandardError() async throws {
        let folder = SinkFixtures.folder()
        // A bare VEVENT after a stray END (libical: "Encountered END before BEGIN"), and an export declared in an
        // encoding its bytes are not in (libxml2: "encoding error : input conversion failed").
        try "END:VEVENT\r\nBEGIN:VEVENT\r\nUID:bare\r\nDTSTART:20270301T090000Z\r\nEND:VEVENT\r\n".write(
            toFile: folder + "/bare.ics", atomically: true, encoding: .utf8)
        var export = Array("<?xml version=\"1.0\" encoding=\"EUC-JP\"?>\n<d:multistatus xmlns:d=\"DAV:\">".utf8)
        export += Array("<d:response><d:href>".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + Array("</d:href></d:response>".utf8)
        _ = FileManager.default.createFile(atPath: folder + "/export.xml", contents: Data(export))
        let run = try await CommandLineTests().calwatch([
            "scan", folder + "/bare.ics", folder + "/export.xml", "--from", "2027-03-01", "--to", "2027-03-02",
            "--tz", "UTC",
        ])
        #expect(run.output.contains("\"uid\":\"bare\""))
        #expect(
            run.errors.split(separator: "\n").map(String.init) == [
                "\(folder)/bare.ics:1: warning: END:VEVENT without a matching BEGIN is ignored",
                "\(folder)/export.xml:2: error: malformed XML: input conversion failed due to input error, bytes "
                    + "0xFF 0xFF 0xFF 0xFF",
            ])
    }
}

/// Every number in config.yml has a bound that `check` enforces, so nothing `check` passes overflows later.
@Suite struct ConfigurationBoundsTests {
    @Test func durationsPastTheirBoundAreProblemsWithKeyAndLine() {
        let problems = ConfigurationTests.problems(
            """
            horizon: 9223372036854775807s
            reminders:
              offsets: [30m, 9223372036854775807s, 400d]
            liveActivity: { lead: 15m, updateEvery: 2d, maxDuration: 32d }
            flights: { travelTime: 3d }
            sinks:
              - type: hook
                run: [/bin/true]
                timeout: 2d
                concurrency: 65
            """)
        #expect(
            problems.map { "\($0.line ?? 0) \($0.key ?? "")" } == [
                "1 horizon", "3 reminders.offsets[1]", "3 reminders.offsets[2]", "4 liveActivity.updateEvery",
                "4 liveActivity.maxDuration", "5 flights.travelTime", "9 sinks[0].timeout", "10 sinks[0].concurrency",
            ])
        #expect(problems[1].message.contains("is longer than the most calwatch accepts here, 366d"))
        #expect(problems[7].message.contains("must be from 1 to 64"))
    }

    /// `replay` with every duration at its bound runs to the end: the bounds are ones the planner can add.
    @Test func theLargestAcceptedValuesReplayWithoutOverflow() async throws {
        let folder = SinkFixtures.folder()
        try """
        horizon: 1830d
        reminders: { offsets: [366d, 0s], allDay: true }
        liveActivity: { lead: 7d, updateEvery: 1d, maxDuration: 31d }
        flights: { airportLead: { domestic: 2d, international: 2d }, travelTime: 2d }
        sinks: [{ type: sqlite, path: events.db, keep: 36500d }]
        """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let run = try await CommandLineTests().calwatch([
            "replay", "--config", folder + "/config.yml", ConfigurationTests.repository + "/samples/calendars",
            "--from", "2026-03-01", "--to", "2027-04-01", "--tz", "Europe/Berlin",
        ])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.errors.contains(" events"), "\(run.errors)")
    }

    /// Anchors and YAML merge keys, the way people share settings between sinks.
    @Test func mergeKeysGiveTheirKeysWhereASectionHasNone() throws {
        let configuration = try ConfigurationTests.parse(
            """
            sinks:
              - &hook { type: hook, run: [/bin/true], timeout: 5s, name: first }
              - { <<: *hook, name: second, concurrency: 2 }
            """)
        let hooks = configuration.sinks.compactMap { sink in (sink.kind as? HookSettings).map { (sink.name, $0) } }
        #expect(hooks.map(\.0) == ["first", "second"])
        #expect(hooks.map(\.1.timeout) == [.seconds(5), .seconds(5)])
        #expect(hooks.map(\.1.concurrency) == [4, 2])
    }

    @Test func tooManySinksIsOneProblem() {
        let sinks = (0..<65).map { "  - { type: jsonl, path: out\($0).jsonl }" }.joined(separator: "\n")
        let problems = ConfigurationTests.problems("sinks:\n" + sinks + "\n")
        #expect(problems.count == 1 && problems[0].message.contains("at most 64"))
    }
}

/// Folders as a stranger (or an accident) can leave them: pipes, devices and links back up the tree.
@Suite(.timeLimit(.minutes(2))) struct HostileFolderTests {
    /// A vdir of two collections with one event each.
    func vdir() throws -> String {
        let root = SinkFixtures.folder() + "/calendars"
        for (collection, uid) in [("work", "w1"), ("home", "h1")] {
            try FileManager.default.createDirectory(atPath: root + "/" + collection, withIntermediateDirectories: true)
            let text = strangersCalendar(uid: uid, ["DTSTART:20270301T090000Z", "DURATION:PT30M"])
            _ = FileManager.default.createFile(atPath: root + "/\(collection)/\(uid).ics", contents: Data(text))
        }
        return root
    }

    @Test func aPipeOrADeviceNamedIcsIsReportedAndNeverWaitedOn() throws {
        let root = try vdir()
        #expect(mkfifo(root + "/work/pipe.ics", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: root + "/home/zero.ics", withDestinationPath: "/dev/zero")
        let result = scan([root, root + "/work/pipe.ics"], from: "2027-03-01", to: "2027-03-02", zone: "UTC")
        #expect(result.occurrences.map(\.uid).sorted() == ["h1", "w1"])
        let messages = result.problems.map(\.description)
        #expect(
            messages.contains(
                "\(root)/work/pipe.ics: error: is a named pipe (FIFO), not a calendar file; it is skipped"))
        #expect(messages.contains("\(root)/work/pipe.ics: error: is a named pipe (FIFO), not a calendar file"))
        #expect(
            messages.contains("\(root)/home/zero.ics: error: is a character device, not a calendar file; it is skipped")
        )
    }

    @Test func aLinkBackUpTheTreeIsReadOnceAndNamed() throws {
        let root = try vdir()
        for index in 0..<8 {
            try FileManager.default.createSymbolicLink(atPath: root + "/work/loop\(index)", withDestinationPath: "..")
        }
        // A link to a collection elsewhere is still followed: people link calendars into their vdir.
        let elsewhere = try vdir()
        try FileManager.default.createSymbolicLink(atPath: root + "/linked", withDestinationPath: elsewhere + "/work")
        let result = scan([root], from: "2027-03-01", to: "2027-03-02", zone: "UTC")
        #expect(result.occurrences.map(\.uid).sorted() == ["h1", "w1", "w1"])
        #expect(result.problems.count == 8)
        #expect(
            result.problems.allSatisfy { $0.message == "leads back to \(root), which is already read; it is skipped" })
    }

    /// As root every folder can be listed, so the scan runs as `nobody` there (setpriv, from util-linux).
    @Test func oneUnreadableCollectionHidesNoOther() async throws {
        let root = try vdir()
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: root + "/work")
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root + "/work") }
        let arguments = ["scan", root, "--from", "2027-03-01", "--to", "2027-03-02", "--tz", "UTC"]
        let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]
        // The programs and the data files where `nobody` may read them (a clone's build folder may be its owner's
        // alone).
        let parent = (root as NSString).deletingLastPathComponent
        let data = parent + "/data"
        try FileManager.default.copyItem(atPath: ReferenceDataTests.shipped, toPath: data)
        let run = try await CommandLineTests().calwatch(
            arguments, setpriv: geteuid() == 0 ? nobody : nil, environment: ["CALWATCH_DATA": data],
            executable: try CommandLineTests.executable(in: parent + "/bin"))
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("\"uid\":\"h1\""))
        #expect(run.errors.contains("\(root)/work: error: cannot list the directory (Permission denied)"))
    }
}

/// The daemon's view of the same folders: what cannot be read now keeps the version read before.
@Suite(.timeLimit(.minutes(2))) struct HostileFolderWatchTests {
    @Test func aFileReplacedByAPipeKeepsItsLastVersionAndIsReportedOnce() throws {
        let root = try HostileFolderTests().vdir()
        let files = CalendarFiles(roots: [root])
        #expect(files.rescan().changed.count == 2)
        let item = root + "/work/w1.ics"
        try FileManager.default.removeItem(atPath: item)
        #expect(mkfifo(item, 0o600) == 0)
        let noticed = files.refresh([item])
        #expect(noticed.removed.isEmpty && noticed.changed.isEmpty)
        #expect(
            noticed.problems.map(\.description) == [
                "\(item): error: cannot read the file (is a named pipe (FIFO), not a calendar file); the version "
                    + "read before stays in effect"
            ])
        let rescanned = files.rescan()
        #expect(rescanned.removed.isEmpty && rescanned.changed.isEmpty)
        #expect(rescanned.problems.map(\.message) == ["is a named pipe (FIFO), not a calendar file; it is skipped"])
        #expect(files.rescan().problems.isEmpty)
        #expect(files.count == 2)
    }
}

@Suite struct EmptyConfigurationFileTests {
    @Test func aFileWithNoSettingsIsMarkedAndAnExplicitEmptySectionIsNot() throws {
        for text in ["", "\n\n", "# calwatch: nothing here yet\n", "~\n"] {
            #expect(try ConfigurationTests.parse(text).fileIsEmpty, "\(text.debugDescription)")
        }
        #expect(try !ConfigurationTests.parse("{}\n").fileIsEmpty)
        #expect(try !ConfigurationTests.parse("horizon: 30d\n").fileIsEmpty)
    }
}

/// What people read: calendar text never drives their terminal, and a failed write is never a silent success.
@Suite struct HumanOutputTests {
    static let osc52 = "\u{1B}]52;c;cHduZWQ=\u{07}\u{1B}[31mRED\u{202E}txt.exe"

    @Test func controlsBecomeVisibleSymbolsAndPlainTextIsUntouched() {
        #expect(TerminalText.safe(Self.osc52) == "␛]52;c;cHduZWQ=␇␛[31mRED\u{FFFD}txt.exe")
        #expect(TerminalText.safe("a\u{85}b\u{7F}") == "a\u{FFFD}b␡")
        #expect(TerminalText.safe("line 1\n\tline 2") == "line 1\n\tline 2")
        #expect(TerminalText.safe("line 1\nline 2", keepingLines: false) == "line 1␊line 2")
        #expect(TerminalText.safe("Réunion 東京 🛫") == "Réunion 東京 🛫")
    }

    @Test func explainAndWarningsShowEscapeSequencesInsteadOfRunningThem() async throws {
        let calendar = strangersCalendar(
            ["DTSTART;TZID=\"Nowhere \u{1B}]0;pwned\u{07}\":20270301T090000"], summary: Self.osc52)
        let folder = SinkFixtures.folder()
        _ = FileManager.default.createFile(atPath: folder + "/stranger.ics", contents: Data(calendar))
        let cli = CommandLineTests()
        let explained = try await cli.calwatch(["explain", folder + "/stranger.ics", "--tz", "UTC"])
        #expect(explained.status == 0, "\(explained.errors)")
        for text in [explained.output, explained.errors] {
            #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x202E })
        }
        #expect(explained.output.contains("␛]52;c;cHduZWQ=␇␛[31mRED"))
        #expect(explained.errors.contains("TZID 'Nowhere ␛]0;pwned␇' is neither a known zone"))
        let scanned = try await cli.calwatch(["scan", folder + "/stranger.ics", "--from", "2027-03-01", "--tz", "UTC"])
        #expect(!scanned.errors.unicodeScalars.contains { $0.value == 0x1B })
        // JSON Lines are for programs: the summary is there exactly, escaped the JSON way.
        #expect(scanned.output.contains(#""summary":"\u001b]52;c;cHduZWQ=\u0007\u001b[31mRED"#))
    }

    @Test func checkIntoAFullDiskFailsWith74() async throws {
        let status = try await offCooperativePool { () throws -> Int32 in
            let process = Process()
            process.executableURL = CommandLineTests.executable
            process.arguments = ["check", "--config", ConfigurationTests.repository + "/config.yml"]
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(status == 74)
    }

    @Test func aConfigurationThatNeverEndsIsRefused() async throws {
        let run = try await CommandLineTests().calwatch(["check", "--config", "/dev/zero"])
        #expect(run.status == 64)
        #expect(run.errors.contains("/dev/zero: error: is larger than 1024 KiB"))
    }
}

/// CalDAV exports as a broken server or a stranger writes them: read with libxml2, never a trap, never an entity
/// expanded or fetched, and the other paths of the command always read.
@Suite struct HostileCalDAVTests {
    static let event =
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:x1\r\nDTSTART:20270301T090000Z\r\nSUMMARY:ok\r\n"
        + "END:VEVENT\r\nEND:VCALENDAR\r\n"
    static let response = Array(
        ("<d:response><d:href>/cal/work/x1.ics</d:href><d:propstat><d:prop><c:calendar-data>" + event
            + "</c:calendar-data></d:prop></d:propstat></d:response>").utf8)

    static func document(_ inner: [UInt8]) -> [UInt8] {
        Array(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<d:multistatus xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\">\n"
                .utf8) + inner + Array("\n</d:multistatus>\n".utf8)
    }

    /// Each document once trapped inside Foundation's XMLParser (or said only "NSXMLParserErrorDomain error 89").
    @Test(arguments: [
        ("element name", Array("<d:resp".utf8) + [0xFF] + Array("onse/>".utf8), "Input is not proper UTF-8"),
        ("end tag", Array("<d:response></d:respo".utf8) + [0xFE] + Array(">".utf8), "Opening and ending tag mismatch"),
        ("prefix", [0x3C, 0xFF] + Array("d:response/>".utf8), "Namespace prefix"),
        ("processing instruction", Array("<?pi".utf8) + [0xFF] + Array(" x?>".utf8), "Input is not proper UTF-8"),
    ])
    func invalidUTF8IsAnErrorWithTheLineAndOtherPathsAreRead(place: String, bytes: [UInt8], reason: String) throws {
        let folder = SinkFixtures.folder()
        _ = FileManager.default.createFile(
            atPath: folder + "/report.xml", contents: Data(Self.document(Self.response + bytes)))
        _ = FileManager.default.createFile(
            atPath: folder + "/other.ics", contents: Data(strangersCalendar(uid: "other", ["DTSTART:20270301T100000Z"]))
        )
        let result = scan(
            [folder + "/report.xml", folder + "/other.ics"], from: "2027-03-01", to: "2027-03-02", zone: "UTC")
        #expect(result.occurrences.map(\.uid) == ["other"], "\(place)")
        let problem = result.problems.first { $0.path.hasSuffix("report.xml") }
        #expect(problem?.message.hasPrefix("malformed XML: ") == true && problem?.message.contains(reason) == true)
        #expect(problem?.line != nil && problem?.message.contains("\n") == false, "\(String(describing: problem))")
    }

    @Test func aResponseInsideAnHrefStartsTheHrefAgain() throws {
        let inner = Array(
            ("<d:response><d:href><d:response/>/cal/work/y.ics</d:href><d:propstat><d:prop><c:calendar-data>"
                + Self.event + "</c:calendar-data></d:prop></d:propstat></d:response>").utf8)
        let folder = SinkFixtures.folder()
        _ = FileManager.default.createFile(atPath: folder + "/report.xml", contents: Data(Self.document(inner)))
        let fromFile = scan([folder + "/report.xml"], from: "2027-03-01", to: "2027-03-02", zone: "UTC")
        #expect(fromFile.occurrences.map(\.source.calendar) == ["work"])
        #expect(fromFile.problems.isEmpty)
    }

    @Test func entitiesAreNeitherExpandedNorFetched() throws {
        let folder = SinkFixtures.folder()
        try "secret-\(UUID().uuidString)".write(toFile: folder + "/secret.txt", atomically: true, encoding: .utf8)
        let xxe = """
            <?xml version="1.0"?><!DOCTYPE d:multistatus [<!ENTITY x SYSTEM "file://\(folder)/secret.txt">]>
            <d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:response><d:href>/cal/work/z.ics</d:href>
            <d:propstat><d:prop><c:calendar-data>BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:xxe\r\nDTSTART:20270301T090000Z\r
            SUMMARY:&x;\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n</c:calendar-data></d:prop></d:propstat></d:response></d:multistatus>
            """
        _ = FileManager.default.createFile(atPath: folder + "/xxe.xml", contents: Data(xxe.utf8))
        let result = scan([folder + "/xxe.xml"], from: "2027-03-01", to: "2027-03-02", zone: "UTC")
        #expect(result.occurrences.map(\.uid) == ["xxe"])
        #expect(result.occurrences.first?.summary?.contains("secret") != true)

        let laughs =
            "<?xml version=\"1.0\"?><!DOCTYPE d:multistatus [<!ENTITY a \"aaaaaaaaaa\">"
            + (1...7).map { level in
                let inner = level == 1 ? "a" : "e\(level - 1)"
                return "<!ENTITY e\(level) \"" + String(repeating: "&\(inner);", count: 10) + "\">"
            }.joined()
            + "]>\n<d:multistatus xmlns:d=\"DAV:\"><d:response><d:href>&e7;</d:href></d:response></d:multistatus>"
        _ = FileManager.default.createFile(atPath: folder + "/laughs.xml", contents: Data(laughs.utf8))
        let laughed = scan([folder + "/laughs.xml"], from: "2027-03-01", to: "2027-03-02", zone: "UTC")
        #expect(laughed.occurrences.isEmpty)
        #expect(laughed.problems.count == 1)
    }
}

/// What libical loses when it writes a rule back: calwatch judges the rule as the calendar wrote it.
@Suite struct RuleAsWrittenTests {
    @Test func anUntilInYearZeroEndsTheSeriesInsteadOfDroppingOut() {
        let text = strangersCalendar(["DTSTART:20270301T090000Z", "RRULE:FREQ=DAILY;UNTIL=00000101"])
        let result = scan(["-"], from: "2027-02-25", to: "2027-03-10", zone: "UTC", standardInput: text)
        // libical writes it back as FREQ=DAILY: a daily series without end.
        #expect(starts(result, uid: "stranger") == ["2027-03-01T09:00:00Z"])
        #expect(
            result.problems.map(\.message) == [
                "RRULE 'FREQ=DAILY;UNTIL=00000101' ends (UNTIL) before DTSTART; the series is its first instance only."
            ])
    }

    @Test func aByDayOrdinalOutOfRangeIsNamedAsWritten() {
        let text = strangersCalendar(["DTSTART:20270301T090000Z", "RRULE:FREQ=MONTHLY;BYDAY=500MO"])
        let result = scan(["-"], from: "2027-02-25", to: "2027-06-10", zone: "UTC", standardInput: text)
        #expect(starts(result, uid: "stranger") == ["2027-03-01T09:00:00Z"])
        // libical reads 500MO as -12MO; the message says what the calendar says.
        #expect(
            result.problems.map(\.message) == [
                "RRULE 'FREQ=MONTHLY;BYDAY=500MO' cannot be iterated (BYDAY 500MO: an ordinal runs from -53 to 53, "
                    + "without 0) and is ignored. Correct the RRULE."
            ])
    }

    @Test func aFoldedRuleIsReadWhole() {
        let rules = RecurrenceRuleText.written(
            in: Array(
                "BEGIN:VEVENT\r\nrrule;X-A=1:FREQ=WEEKLY;BY\r\n DAY=1MO\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\n".utf8)[
                    ...])
        #expect(rules == ["FREQ=WEEKLY;BYDAY=1MO", "FREQ=DAILY"])
    }
}

/// Long EXDATE and RDATE lists: libical keeps 500 values of one property; calwatch keeps them all.
@Suite struct LongDateListTests {
    static func days(_ count: Int, from first: Int = 1) -> String {
        (first..<(first + count)).map { day in
            LocalDateTime(date: CalendarDate(year: 2027, month: 3, day: 1).adding(days: day), hour: 9).iso8601
                .replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "") + "Z"
        }.joined(separator: ",")
    }

    @Test func everyExcludedDayStaysExcluded() {
        let text = strangersCalendar([
            "DTSTART:20270301T090000Z", "RRULE:FREQ=DAILY;COUNT=700", "EXDATE:" + Self.days(650),
        ])
        let result = scan(["-"], from: "2027-03-01", to: "2029-03-01", zone: "UTC", standardInput: text)
        #expect(result.occurrences.count == 50)
    }

    @Test func everyAddedDayIsAdded() {
        let text = strangersCalendar(["DTSTART;TZID=Europe/Berlin:20270301T090000", "RDATE:" + Self.days(600)])
        let result = scan(["-"], from: "2027-03-01", to: "2029-03-01", zone: "UTC", standardInput: text)
        #expect(result.occurrences.count == 601)
    }
}

/// A `--state` pointing at someone else's database is refused with what to do, and no SQL reaches the user.
@Suite struct ForeignDatabaseTests {
    @Test func aDatabaseThatIsNotAJournalIsRefusedByName() throws {
        let path = SinkFixtures.folder() + "/theirs.db"
        try SQLiteConnection(path: path).execute("CREATE TABLE journal (x); CREATE TABLE sink_cursors (y);")
        do {
            _ = try JournalStore(path: path)
            Issue.record("opened someone else's database as a journal")
        } catch {
            #expect(
                "\(error)"
                    == "it is an SQLite database, but not a calwatch journal; move it away or use another --state")
        }
    }

    @Test func theSQLiteSinkStillSharesADatabaseOfTheUsers() async throws {
        let path = SinkFixtures.folder() + "/mine.db"
        try SQLiteConnection(path: path).execute("CREATE TABLE notes (x);")
        let sink = try SQLiteSink(path: path)
        try await sink.deliver(Array(try await SinkFixtures.wednesday().prefix(3)))
        #expect(try SinkFixtures.rows(path, "SELECT count(*) FROM events") == ["3"])
        #expect(try SinkFixtures.rows(path, "SELECT count(*) FROM notes") == ["0"])
    }

    @Test func sqlErrorsSaySQLitesReasonWithoutTheStatements() throws {
        let connection = try SQLiteConnection(path: SinkFixtures.folder() + "/x.db")
        do {
            try connection.execute("CREATE TABLE t (a); CREATE TABLE t (a);")
            Issue.record("created a table twice")
        } catch {
            #expect("\(error)" == "SQLite error 1: table t already exists")
        }
    }
}

/// Work that input decides is bounded: a property's length, a file's size, a series' overrides.
@Suite(.timeLimit(.minutes(2))) struct InputBudgetTests {
    /// One event with a 2 MiB inline attachment, folded as producers write it, then an ordinary event.
    @Test func aPropertyOverOneMebibyteIsLeftOutAndTheRestIsRead() {
        let chunk = String(repeating: "QUJD", count: 18)
        let folded = (0..<(2 << 20) / 72).map { _ in " " + chunk }.joined(separator: "\r\n")
        var text = strangersCalendar(["DTSTART:20270301T090000Z", "ATTACH;ENCODING=BASE64;VALUE=BINARY:", folded])
        text.removeLast("END:VCALENDAR\r\n".utf8.count)
        text += Array(
            """
            BEGIN:VEVENT\r
            UID:after\r
            DTSTART:20270301T100000Z\r
            SUMMARY:Next\r
            RRULE:FREQ=DAILY;COUNT=2;BYDAY=MO,TU,WE,\r
             TH,FR\r
            END:VEVENT\r
            END:VCALENDAR\r

            """.utf8)
        let result = scan(["-"], from: "2027-03-01", to: "2027-03-08", zone: "UTC", standardInput: text)
        #expect(starts(result, uid: "stranger") == ["2027-03-01T09:00:00Z"])
        #expect(starts(result, uid: "after") == ["2027-03-01T10:00:00Z", "2027-03-02T10:00:00Z"])
        #expect(
            result.problems.map(\.description) == [
                "-:8: warning: the ATTACH property is 2.1 MiB long and is left out: calwatch reads properties up to "
                    + "1 MiB. The rest of the item is read; link a large attachment with ATTACH;VALUE=URI instead of "
                    + "writing it inline."
            ])
    }

    @Test func aPropertyJustUnderTheLimitIsKept() {
        var text = strangersCalendar(["DTSTART:20270301T090000Z", "DESCRIPTION:" + String(repeating: "a", count: 1000)])
        let before = text
        #expect(PropertyLengthLimit.removeLongProperties(from: &text, limit: 1014).isEmpty)
        #expect(text == before)
        let problems = PropertyLengthLimit.removeLongProperties(from: &text, limit: 1011)
        #expect(problems.map(\.line) == [8])
        // The line stays as an empty one, so that every later line keeps its number.
        #expect(text.count == before.count - 1012 - 2 + 1)
    }

    /// An invitation with thousands of repeating VALARMs: the first alarms and firings are read, with one warning.
    @Test(arguments: [(3, 2, 9, false), (40, 0, 32, true), (2, 500, 200, true)])
    func alarmsAndTheirRepetitionsAreBounded(alarms: Int, repeats: Int, firings: Int, warned: Bool) {
        let valarms = (0..<alarms).flatMap { index in
            [
                "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT\(10 + index)M", "REPEAT:\(repeats)", "DURATION:PT1M",
                "END:VALARM",
            ]
        }
        let text = strangersCalendar(["DTSTART:20270301T090000Z", "DURATION:PT30M"] + valarms)
        let calendars = ICalDocumentParser.parse(text)
        let component = calendars[0].components[0]
        #expect(component.alarms.reduce(0) { $0 + $1.repeatCount + 1 } == firings)
        #expect(component.alarms.count == min(alarms, 32))
        #expect(component.problems.contains { $0.hasPrefix("the item's \(alarms) VALARMs fire") } == warned)
    }

    /// A sparse file: 257 MiB long without using the disk.
    @Test func aFileOverTheSizeLimitIsRefusedAndTheOthersAreRead() throws {
        let folder = SinkFixtures.folder()
        _ = FileManager.default.createFile(
            atPath: folder + "/small.ics", contents: Data(strangersCalendar(["DTSTART:20270301T090000Z"])))
        let huge = open(folder + "/huge.ics", O_CREAT | O_WRONLY, 0o600)
        #expect(ftruncate(huge, off_t(257 << 20)) == 0)
        close(huge)
        let result = scan([folder], from: "2027-03-01", to: "2027-03-02", zone: "UTC")
        #expect(result.occurrences.map(\.uid) == ["stranger"])
        #expect(
            result.problems.map(\.description) == [
                "\(folder)/huge.ics: error: cannot read the file (it is larger than the 256 MiB calwatch reads from "
                    + "one file; split the calendar into several files (a vdir folder holds one item per file))"
            ])
    }

    /// 5,000 overrides of one UID, each moving its instance by a quarter hour, with later copies replacing earlier
    /// ones and a THISANDFUTURE split: every instance is where its newest override says.
    @Test func thousandsOfOverridesOfOneSeriesAreEachApplied() {
        var lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "BEGIN:VEVENT", "UID:busy", "DTSTART:20270101T000000Z",
            "DURATION:PT10M", "RRULE:FREQ=HOURLY;COUNT=6000", "SUMMARY:Series", "END:VEVENT",
        ]
        func stamp(_ hour: Int) -> String {
            let wall = LocalDateTime(date: CalendarDate(year: 2027, month: 1, day: 1), hour: 0).adding(
                seconds: Int64(hour) * 3600)
            return wall.iso8601.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        }
        for hour in 0..<5000 {
            for sequence in [0, 1] {
                lines += [
                    "BEGIN:VEVENT", "UID:busy", "SEQUENCE:\(sequence)", "RECURRENCE-ID:\(stamp(hour))Z",
                    "DTSTART:\(stamp(hour).dropLast(4))\(sequence == 1 ? "15" : "45")00Z", "DURATION:PT10M",
                    "SUMMARY:Moved", "END:VEVENT",
                ]
            }
        }
        lines += [
            "BEGIN:VEVENT", "UID:busy", "RECURRENCE-ID;RANGE=THISANDFUTURE:\(stamp(5500))Z",
            "DTSTART:\(stamp(5500).dropLast(4))3000Z", "DURATION:PT10M", "SUMMARY:Later", "END:VEVENT",
            "END:VCALENDAR", "",
        ]
        let text = Array(lines.joined(separator: "\r\n").utf8)
        let result = scan(["-"], from: "2027-01-01", to: "2028-01-01", zone: "UTC", standardInput: text)
        #expect(result.problems.isEmpty)
        let minutes = Dictionary(grouping: result.occurrences) { ($0.start.secondsSinceEpoch % 3600) / 60 }
        #expect(minutes[15]?.count == 5000)
        #expect(minutes[15]?.allSatisfy { $0.summary == "Moved" } == true)
        #expect(minutes[0]?.count == 500)
        #expect(minutes[30]?.count == 500)
        #expect(minutes[30]?.allSatisfy { $0.summary == "Later" } == true)
        #expect(result.occurrences.count == 6000)
    }
}

/// A journal that no longer matches what the sinks hold is refused with the fix, instead of sinks receiving again
/// every event they already have.
@Suite struct JournalMatchesSinksTests {
    /// A replay of Monday into a kept journal, a JSON Lines file and a SQLite database.
    static func monday(folder: String) async throws -> (journal: String, lines: [String]) {
        let journal = folder + "/journal.db"
        try await ReplayTests.replay(
            journal: try JournalStore(path: journal),
            sinks: [
                try JSONLinesSink.file(path: folder + "/events.jsonl"), try SQLiteSink(path: folder + "/events.db"),
            ],
            from: "2027-03-01", to: "2027-03-02")
        return (journal, SinkFixtures.lines(folder + "/events.jsonl"))
    }

    @Test(arguments: ["deleted", "truncated", "emptied", "replaced"])
    func aJournalThatLostTheSinksEventsIsRefusedAndNothingIsWrittenTwice(change: String) async throws {
        let folder = SinkFixtures.folder()
        let (path, lines) = try await Self.monday(folder: folder)
        #expect(lines.count > 20)
        switch change {
        case "deleted":
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        case "truncated":
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            #expect(truncate(path, 0) == 0)
        case "emptied":
            _ = try SinkFixtures.rows(path, "DELETE FROM events")
        default:
            // Another journal, longer than this one: same sequence numbers, other events.
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            try await ReplayTests.replay(
                journal: try JournalStore(path: path), sinks: [], from: "2027-03-03", to: "2027-03-06")
        }
        for sinks in [
            [try JSONLinesSink.file(path: folder + "/events.jsonl")] as [any EventSink],
            [try SQLiteSink(path: folder + "/events.db")],
        ] {
            let error = await #expect(throws: SinkError.self) {
                try await ReplayTests.replay(
                    journal: try JournalStore(path: path), sinks: sinks, from: "2027-03-01", to: "2027-03-03")
            }
            #expect(error?.sink == sinks[0].name)
            let ending = change == "replaced" ? "never delivered it" : "ends at sequence 0"
            #expect(error?.reason.contains("the journal \(path) \(ending)") == true, "\(String(describing: error))")
            #expect(error?.reason.hasSuffix("or move the sink's file away to start both afresh.") == true)
        }
        #expect(SinkFixtures.lines(folder + "/events.jsonl") == lines)
    }

    /// The same journal, continued: its sinks' records match, and a crash's repeated lines are still fine.
    @Test func theJournalThatWroteTheRecordsGoesOn() async throws {
        let folder = SinkFixtures.folder()
        let (path, lines) = try await Self.monday(folder: folder)
        try await ReplayTests.replay(
            journal: try JournalStore(path: path),
            sinks: [
                try JSONLinesSink.file(path: folder + "/events.jsonl"), try SQLiteSink(path: folder + "/events.db"),
            ],
            from: "2027-03-01", to: "2027-03-03")
        let after = SinkFixtures.lines(folder + "/events.jsonl")
        #expect(after.count > lines.count)
        #expect(Set(after).count == after.count)
    }

    /// From the command line: the daemon's journal removed by hand, then a `replay --state` onto the same file.
    @Test func theCommandSaysWhatToDo() async throws {
        let folder = SinkFixtures.folder()
        try "sinks: [{ type: jsonl, path: events.jsonl }]\n".write(
            toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let arguments = [
            "replay", "--config", folder + "/config.yml", "--state", folder + "/journal.db",
            ConfigurationTests.repository + "/samples/calendars", "--from", "2027-03-01", "--to", "2027-03-02",
            "--tz", "Europe/Berlin",
        ]
        let first = try await CommandLineTests().calwatch(arguments)
        #expect(first.status == 0, "\(first.errors)")
        let written = SinkFixtures.lines(folder + "/events.jsonl")
        try FileManager.default.removeItem(atPath: folder + "/journal.db")
        let second = try await CommandLineTests().calwatch(arguments)
        #expect(second.status != 0)
        #expect(second.errors.contains("jsonl:\(folder)/events.jsonl: its records end with event"), "\(second.errors)")
        #expect(SinkFixtures.lines(folder + "/events.jsonl") == written)
    }
}

/// An occurrence is its UID and RECURRENCE-ID wherever it is stored: renaming a collection or keeping one
/// invitation in two calendars changes where it is found, not which reminders it gets.
@Suite(.timeLimit(.minutes(2))) struct OccurrenceIdentityTests {
    @Test func aCollectionRenamedMidwayIsNotRemindedAgainAndGoesOnUnderItsNewName() async throws {
        let bench = try WatchTests.Bench()
        try bench.writeRenamed(
            "work/review.ics", WatchTests.event(uid: "r1", start: "20270301T100000Z", end: "20270301T110000Z"))
        try await bench.start(at: "2027-03-01T09:00:00Z")
        for instant in ["09:30", "09:45", "09:46"] { try await bench.advance(to: "2027-03-01T\(instant):00Z") }
        #expect(rename(bench.root + "/work", bench.root + "/job") == 0)
        try await bench.changes(at: "2027-03-01T09:47:00Z", rescan: true)
        for instant in ["09:55", "10:00", "10:30", "11:00"] { try await bench.advance(to: "2027-03-01T\(instant):00Z") }
        let events = await bench.sink.events
        let received = await bench.received().filter { !$0.hasPrefix("liveActivityUpdate") }
        #expect(
            received == [
                "reminderDue 2027-03-01T09:30:00Z 30m", "liveActivityStart 2027-03-01T09:45:00Z",
                "reminderDue 2027-03-01T09:45:00Z 15m", "reminderDue 2027-03-01T09:55:00Z 5m",
                "liveActivityEnd 2027-03-01T11:00:00Z ended",
            ])
        #expect(events.filter { $0.type == .reminderDue }.map(\.key.calendar) == ["work", "work", "job"])
    }

    @Test func oneInvitationInTwoCalendarsIsRemindedOnce() async throws {
        let bench = try WatchTests.Bench(collections: ["work", "team"])
        bench.configuration.planner.liveActivityLead = 0
        let invitation = WatchTests.event(uid: "shared", start: "20270301T100000Z", end: "20270301T110000Z")
        try bench.writeRenamed("work/shared.ics", invitation)
        try bench.writeRenamed("team/shared.ics", invitation)
        try await bench.start(at: "2027-03-01T09:00:00Z")
        for instant in ["09:30", "09:45", "09:55", "11:00"] { try await bench.advance(to: "2027-03-01T\(instant):00Z") }
        let reminders = await bench.received().filter { $0.hasPrefix("reminderDue") }
        #expect(
            reminders == [
                "reminderDue 2027-03-01T09:30:00Z 30m", "reminderDue 2027-03-01T09:45:00Z 15m",
                "reminderDue 2027-03-01T09:55:00Z 5m",
            ])
    }

    /// Deleting or declining the invitation in one calendar leaves the other copy planned.
    @Test func removingOneOfTwoCopiesKeepsTheOther() async throws {
        let bench = try WatchTests.Bench(collections: ["work", "team"])
        let invitation = WatchTests.event(uid: "shared", start: "20270301T100000Z", end: "20270301T110000Z")
        try bench.writeRenamed("team/shared.ics", invitation)
        try await bench.start(at: "2027-03-01T09:00:00Z")
        try bench.writeRenamed("work/shared.ics", invitation)
        try await bench.changes(at: "2027-03-01T09:01:00Z", expecting: ["work/shared.ics"])
        try await bench.advance(to: "2027-03-01T09:30:00Z")
        try bench.delete("work/shared.ics")
        try await bench.changes(at: "2027-03-01T09:40:00Z", expecting: ["work/shared.ics"])
        for instant in ["09:45", "09:55", "11:00"] { try await bench.advance(to: "2027-03-01T\(instant):00Z") }
        let received = await bench.received().filter { !$0.hasPrefix("liveActivityUpdate") }
        #expect(
            received == [
                "reminderDue 2027-03-01T09:30:00Z 30m", "liveActivityStart 2027-03-01T09:45:00Z",
                "reminderDue 2027-03-01T09:45:00Z 15m", "reminderDue 2027-03-01T09:55:00Z 5m",
                "liveActivityEnd 2027-03-01T11:00:00Z ended",
            ])
    }

    /// A journal of layout 3 (ids hashed with the calendar) continues without repeating its offset reminders.
    @Test func aJournalFromBeforeIsMigratedAndItsRemindersAreNotRepeated() async throws {
        let path = JournalTests.temporaryPath()
        let file = SinkFixtures.folder() + "/events.jsonl"
        let first = ReplayTests.CollectingSink()
        try await ReplayTests.replay(
            journal: try JournalStore(path: path), sinks: [first, try JSONLinesSink.file(path: file)],
            from: "2027-03-01T00:00", to: "2027-03-01T09:45")
        let delivered = await first.events.filter { $0.type == .reminderDue }
        #expect(!delivered.isEmpty)
        // What layout 3 had written: the same rows and lines, with ids that hashed the calendar first.
        var lines = try String(contentsOfFile: file, encoding: .utf8)
        for event in delivered {
            var hasher = EventID.Hasher()
            hasher.feed(event.key.calendar)
            hasher.feed(event.key.uid)
            hasher.feed(event.key.recurrenceID?.description ?? "")
            let old = EventID.make(
                hasher, .reminderDue, "offset,anchor", event.reminder!.secondsBefore, event.expiry.secondsSinceEpoch)
            _ = try SinkFixtures.rows(path, "UPDATE events SET id = '\(old)' WHERE id = '\(event.id)'")
            lines = lines.replacingOccurrences(of: event.id.description, with: old.description)
        }
        try lines.write(toFile: file, atomically: false, encoding: .utf8)
        _ = try SinkFixtures.rows(path, "PRAGMA user_version = 3")
        let second = ReplayTests.CollectingSink()
        try await ReplayTests.replay(
            journal: try JournalStore(path: path), sinks: [second, try JSONLinesSink.file(path: file)],
            from: "2027-03-01T00:00", to: "2027-03-01T12:00")
        let again = Set(await second.events.map(\.id))
        #expect(delivered.allSatisfy { !again.contains($0.id) })
        #expect(try SinkFixtures.rows(path, "PRAGMA user_version") == ["\(JournalStore.schemaVersion)"])
        // The file's lines from before the upgrade are accepted as the journal's, and continued without repeats.
        let sequences = SinkFixtures.lines(file).map { $0.firstMatch(of: /"sequence":"(\d+)"/)!.1 }
        #expect(sequences.map { Int($0)! } == Array(1...sequences.count))
    }
}

/// Copies of one item in several files of a calendar: the newest is read, and each copy is named.
@Suite struct DuplicateItemTests {
    @Test func fiveFilesWithOneUIDAreOneItemAndFourWarnings() throws {
        let root = SinkFixtures.folder() + "/calendars"
        for collection in ["work", "team"] {
            try FileManager.default.createDirectory(atPath: root + "/" + collection, withIntermediateDirectories: true)
        }
        for (index, sequence) in [1, 3, 2, 0, 3].enumerated() {
            let text = strangersCalendar(
                uid: "copied", ["SEQUENCE:\(sequence)", "DTSTART:20270301T09\(index)000Z", "DURATION:PT30M"],
                summary: "Copy \(index)")
            _ = FileManager.default.createFile(atPath: root + "/work/copy\(index).ics", contents: Data(text))
        }
        // The same invitation in another calendar is another place, not a copy.
        _ = FileManager.default.createFile(
            atPath: root + "/team/copy.ics",
            contents: Data(strangersCalendar(uid: "copied", ["DTSTART:20270301T091000Z"], summary: "Team copy")))
        let result = scan([root], from: "2027-03-01", to: "2027-03-02", zone: "UTC")
        // SEQUENCE 3 twice: the first by name of the two is kept.
        #expect(result.occurrences.map { "\($0.calendar) \($0.summary ?? "")" } == ["team Team copy", "work Copy 1"])
        #expect(
            result.problems.map(\.description)
                == [0, 2, 3, 4].map { index in
                    "\(root)/work/copy\(index).ics:4: warning: this item is also in \(root)/work/copy1.ics of calendar "
                        + "'work', which is newer or first by name; this copy is left out. A calendar holds each UID "
                        + "once: remove the copy. (UID copied)"
                })
    }

    /// A series kept in two files of one collection, the older copy holding EXDATEs the newer lacks: the newer is
    /// used, and the warning names the deletions that are lost with the other.
    @Test func theEXDATEsOfACopyLeftOutAreNamed() throws {
        let root = SinkFixtures.folder() + "/calendars/work"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let series = ["DTSTART:20270301T090000Z", "DURATION:PT30M", "RRULE:FREQ=DAILY;COUNT=5"]
        _ = FileManager.default.createFile(
            atPath: root + "/a.ics",
            contents: Data(
                strangersCalendar(
                    uid: "daily", ["SEQUENCE:1"] + series + ["EXDATE:20270302T090000Z,20270304T090000Z"],
                    summary: "Old")))
        _ = FileManager.default.createFile(
            atPath: root + "/b.ics",
            contents: Data(strangersCalendar(uid: "daily", ["SEQUENCE:2"] + series, summary: "New")))
        let result = scan([root], from: "2027-03-01", to: "2027-03-08", zone: "UTC")
        #expect(result.occurrences.map(\.summary) == Array(repeating: "New", count: 5))
        #expect(result.problems.count == 1)
        #expect(
            result.problems.first?.description.contains(
                "Its EXDATEs 2027-03-02T09:00:00Z, 2027-03-04T09:00:00Z are not in the copy kept, so those instances are "
                    + "shown: move them there first.") == true, "\(result.problems)")
    }
}

/// The inputs the fuzz targets start from and every input they found (`make fuzz`), read here as each target reads
/// them, so a fixed crash or hang stays fixed.
@Suite(.timeLimit(.minutes(2))) struct FuzzFixtureTests {
    static func files(_ kind: String) throws -> [String] {
        let folder = fixture("fuzz/" + kind)
        return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().map { folder + "/" + $0 }
    }

    @Test func everyCalendarInputIsReadWithItsProblemsNamed() throws {
        for path in try Self.files("calendar") {
            let result = scan([path], from: "2026-01-01", to: "2027-01-01", zone: "UTC", todos: true)
            #expect(result.problems.allSatisfy { $0.path == path }, "\(path)")
        }
        let hostile = scan(
            [fixture("fuzz/calendar/hostile.ics")], from: "2026-01-01", to: "2027-01-01", zone: "UTC", todos: true)
        let messages = hostile.problems.map(\.message)
        #expect(messages.contains { $0.hasPrefix("TZID '(UTC+01:35791395) Amsterdam' is neither a known zone") })
        #expect(messages.contains { $0.contains("matches no day in 400 years") })
        #expect(messages.contains { $0.contains("COUNT=0 allows no instance") })
        // The override of 2026-03-02 is deleted by the series' EXDATE of that instant, as clients delete one.
        #expect(hostile.occurrences.map(\.uid) == ["a", "t"])
    }

    /// Found by FuzzCalendar as a timeout: a VTIMEZONE observance with `FREQ=HOURLY;BYDAY=1SU;BYMONTH=11` from 1601,
    /// which libical stepped an hour at a time up to 2200 (17 s). Observance rules other than YEARLY are not stepped.
    @Test func aVTimeZoneWithAnHourlyRuleIsReadFromItsOnsetAlone() throws {
        let result = scan(
            [fixture("fuzz/calendar/timeout-hourly-vtimezone-rule.ics")], from: "2025-03-12", to: "2025-03-13",
            zone: "Europe/Berlin")
        // 09:00 in the zone's yearly daylight time (from the second Sunday of March, UTC-4).
        #expect(
            result.occurrences.map { "\($0.summary ?? "") \($0.start)" } == [
                "Call with New York office 2025-03-12T13:00:00Z", "Call with New York office 2025-03-12T13:00:00Z",
            ])
    }

    @Test func everyCalDAVInputIsReadWithoutExpandingEntities() throws {
        for path in try Self.files("caldav") {
            _ = scan([path], from: "2026-01-01", to: "2027-01-01", zone: "UTC")
        }
        let hostile = scan([fixture("fuzz/caldav/hostile.xml")], from: "2026-01-01", to: "2027-01-01", zone: "UTC")
        #expect(hostile.occurrences.map { "\($0.calendar) \($0.summary ?? "")" } == ["hostile &e;", "☃ "])
    }

    /// A fleet's rows as anyone who can write the table might write them: the good ones read, every other one
    /// refused with a reason, none of them stopping the watcher.
    @Test func everyFleetRowIsReadOrRefusedWithAReason() throws {
        var read: [String] = []
        for path in try Self.files("fleet-row") {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            let row = FleetDatabase.row(FleetDatabase.columns(fromFuzzInput: bytes))
            switch row.calendar {
            case .success:
                read.append(URL(fileURLWithPath: path).lastPathComponent)
                // Instants no clock has are no instants.
                #expect(row.leaseUntil.map { abs($0.millisecondsSinceEpoch) < 1 << 50 } ?? true, "\(path)")
            case .failure(let refusal): #expect(!refusal.description.isEmpty, "\(path)")
            }
        }
        #expect(read == ["good-caldav", "good-despite-odd-times", "good-path"])
    }

    @Test func everyConfigurationIsAcceptedOrRefusedWithLines() throws {
        for path in try Self.files("configuration") {
            do {
                _ = try ConfigurationLoader.load(path: path, environment: ["HOME": "/nonexistent"])
            } catch {
                #expect(error.problems.allSatisfy { $0.line != nil }, "\(path): \(error)")
            }
        }
    }
}

/// A file rewritten every second for a day leaves nothing behind: what its old versions had waiting is swept out.
@Suite struct PlanningLoopMemoryTests {
    @Test func aFileRewrittenThousandsOfTimesKeepsTheWaitingQueueBounded() {
        var loop = PlanningLoop(configuration: PlannerConfiguration(), facts: { _ in .event }, state: PlannerState())
        let now = utc("2027-03-01T08:00:00Z")
        loop.add([PlannerTests.meeting("stable", "2027-03-20T10:00:00Z", "2027-03-20T11:00:00Z")], origin: 1, now: now)
        for version in 0..<5000 {
            let start = utc("2027-03-10T10:00:00Z").adding(seconds: Int64(version) * 60)
            loop.remove(origin: 2)
            loop.add(
                [PlannerTests.meeting("changing", start.description, start.adding(seconds: 3600).description)],
                origin: 2, now: now)
        }
        #expect(loop.waitingCount <= 1026)
        // What is live still comes due: the stable item and the last version of the changing one, nothing older.
        var reminders: [String] = []
        var instant = utc("2027-03-10T00:00:00Z")
        while instant < utc("2027-03-21T00:00:00Z") {
            reminders += loop.step(at: instant).events.filter { $0.event.type == .reminderDue }
                .map { "\($0.event.key.uid) \($0.event.time)" }
            instant = instant.adding(seconds: 60)
        }
        let last = utc("2027-03-10T10:00:00Z").adding(seconds: 4999 * 60)
        #expect(
            reminders == [
                "changing \(last.adding(seconds: -1800))", "changing \(last.adding(seconds: -900))",
                "changing \(last.adding(seconds: -300))", "stable 2027-03-20T09:30:00Z", "stable 2027-03-20T09:45:00Z",
                "stable 2027-03-20T09:55:00Z",
            ])
    }
}

/// Rules that start long ago: those without COUNT jump to the window; all of one calendar's rules share a budget.
@Suite(.ownThread) struct LongAgoRuleTests {
    /// Jumping to the window gives what stepping from DTSTART gives (a huge COUNT forces every step).
    @Test(arguments: [
        "FREQ=DAILY", "FREQ=DAILY;INTERVAL=3", "FREQ=WEEKLY;INTERVAL=3;BYDAY=MO,TH;WKST=SU", "FREQ=WEEKLY",
        "FREQ=HOURLY;INTERVAL=7", "FREQ=MINUTELY;INTERVAL=17;BYHOUR=9,10",
    ])
    func jumpingToTheWindowMatchesSteppingThere(rule: String) {
        func starts(_ written: String) -> [String] {
            let text = strangersCalendar(["DTSTART;TZID=Europe/Berlin:20050103T093000", "RRULE:" + written])
            let result = scan(["-"], from: "2027-03-01", to: "2027-03-29", zone: "UTC", standardInput: text)
            #expect(result.problems.isEmpty, "\(result.problems)")
            return result.occurrences.map(\.start.description)
        }
        let jumped = starts(rule)
        #expect(!jumped.isEmpty)
        #expect(jumped == starts(rule + ";COUNT=10000000"))
    }

    @Test func oneCalendarsRulesShareABudgetAndTheRestAreNamedOnce() throws {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0"]
        for index in 0..<20 {
            lines += [
                "BEGIN:VEVENT", "UID:old\(index)", "DTSTART:20000101T000000Z",
                "RRULE:FREQ=HOURLY;COUNT=10000000", "END:VEVENT",
            ]
        }
        lines += ["END:VCALENDAR", ""]
        let text = Array(lines.joined(separator: "\r\n").utf8)
        let options = ExpansionOptions(
            window: InstantWindow(start: utc("2027-03-01T00:00:00Z"), end: utc("2027-03-02T00:00:00Z")),
            defaultZone: .utc, maxIterationsPerCalendar: 1_000_000)
        let result = CalendarScan(paths: ["-"], options: options).run(standardInput: { text })
        // 2000 to 2027 is about 237,000 hours: four rules fit in the budget, the fifth is cut, the rest not stepped.
        #expect(result.occurrences.filter { $0.uid == "old0" }.count == 24)
        #expect(result.occurrences.filter { $0.uid == "old3" }.count == 24)
        #expect(result.occurrences.filter { $0.uid == "old5" }.isEmpty)
        let warnings = result.problems.filter { $0.message.hasPrefix("the calendar's rules used up") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.contains("15 rule(s) from here on were not stepped") == true)
        #expect(warnings.first?.uid == "old5")
    }
}
