import Foundation
import Synchronization
import Testing

@testable import CalWatchCore
@testable import CalWatchRemote
@testable import CalWatchRuntime

/// Boarding passes' barcodes (IATA BCBP): read as other readers read them, refused with the character where they
/// go wrong, and joined with the calendar's flight of that day only.
@Suite struct BoardingPassTests {
    /// A barcode and what its legs say: code, route, day of the year, seat, class, check-in number, booking.
    struct Expected: Sendable, CustomTestStringConvertible {
        var barcode: String
        var passenger: String
        var legs: [(String, String, String, Int, String?, String?, Int?, String)]
        var testDescription: String { String(barcode.prefix(40)) }
    }

    /// The barcodes of KItinerary's parser tests (KDE, autotests/bcbpparsertest.cpp and bcbpdata/*.json,
    /// LGPL-2.0-or-later test data), with the legs its expected JSON gives: the first five are IATA Resolution 792's
    /// own examples (Attachment B); then real carriers' departures from the standard.
    static let written: [Expected] = [
        .init(
            barcode: "M1DESMARAIS/LUC       EABC123 YULFRAAC 0834 326J001A0025 100", passenger: "DESMARAIS/LUC",
            legs: [("AC834", "YUL", "FRA", 326, "1A", "J", 25, "ABC123")]),
        .init(
            barcode:
                "M1DESMARAIS/LUC       EAB12C3 YULFRAAC 0834 326J003A0027 167>5321WW1325BAC 0014123456002001412346700100141234789012A0141234567890 1AC AC 1234567890123    4PCYLX58Z^108ABCDEFGH",
            passenger: "DESMARAIS/LUC", legs: [("AC834", "YUL", "FRA", 326, "3A", "J", 27, "AB12C3")]),
        .init(
            barcode:
                "M1GRANDMAIRE/MELANIE  EABC123 GVACDGAF 0123 339C002F0025 130>5002A0571234567890  AF AF 1234567890123456    Y^18ABCDEFGH",
            passenger: "GRANDMAIRE/MELANIE", legs: [("AF123", "GVA", "CDG", 339, "2F", "C", 25, "ABC123")]),
        .init(
            barcode:
                "M2DESMARAIS/LUC       EAB12C3 YULFRAAC 0834 326J003A0027 167>5321WW1325BAC 0014123456002001412346700100141234789012A0141234567890 1AC AC 1234567890123    4PCYLX58ZDEF456 FRAGVALH 3664 327C012C0002 12E2A0140987654321 1AC AC 1234567890123    3PCNWQ^108ABCDEFGH",
            passenger: "DESMARAIS/LUC",
            legs: [
                ("AC834", "YUL", "FRA", 326, "3A", "J", 27, "AB12C3"),
                ("LH3664", "FRA", "GVA", 327, "12C", "C", 2, "DEF456"),
            ]),
        .init(
            barcode:
                "M2GRANDMAIRE/MELANIE  EABC123 GVACDGAF 0123 339C002F0025 130>5002A0571234567890  AF AF 1234567890123456    YDEF456 CDGDTWNW 0049 339F001A0002 12C2A012098765432101                       2PC ^18ABCDEFGH",
            passenger: "GRANDMAIRE/MELANIE",
            legs: [
                ("AF123", "GVA", "CDG", 339, "2F", "C", 25, "ABC123"),
                ("NW49", "CDG", "DTW", 339, "1A", "F", 2, "DEF456"),
            ]),
        // No electronic ticket indicator.
        .init(
            barcode:
                "M1DOE/JOHN             XXX007 BRUTXLEW 8103 035Y012C0030 147>1181W 8033BEW 0000000000000291040000000000 0   LH 123456789012345     ",
            passenger: "DOE/JOHN", legs: [("EW8103", "BRU", "TXL", 35, "12C", "Y", 30, "XXX007")]),
        // An ICAO designator and a blank class.
        .init(
            barcode: "M1DOE/JOHN            EABCDEFGMRSLGWEZY8724 99  3C  506  10Axxxxxxxxxx", passenger: "DOE/JOHN",
            legs: [("EZY8724", "MRS", "LGW", 99, "3C", nil, 506, "ABCDEFG")]),
        // A booking confirmation's short code: nothing after the class, or after the date.
        .init(
            barcode: "M1DOE/JOHN            EXXX007 TXLBRUSN 2592 110Y", passenger: "DOE/JOHN",
            legs: [("SN2592", "TXL", "BRU", 110, nil, "Y", nil, "XXX007")]),
        .init(
            barcode: "M1DOE/JOHN            EXXX007 TXLBRUSN 2592 110", passenger: "DOE/JOHN",
            legs: [("SN2592", "TXL", "BRU", 110, nil, nil, nil, "XXX007")]),
        // The first pass with its padding lost, as a terminal's copy or a scanner's line may give it.
        .init(
            barcode: "M1DOE/JOHN             XXX007 BRUTXLEW 8103 035Y012C0030 147>1181W 8033BEW 0000000000000291040\n",
            passenger: "DOE/JOHN", legs: [("EW8103", "BRU", "TXL", 35, "12C", "Y", 30, "XXX007")]),
    ]

    @Test(arguments: written)
    func everyLegIsReadAsTheOtherReaderReadsIt(expected: Expected) throws {
        let pass = try BoardingPass(barcode: expected.barcode)
        #expect(pass.passenger == expected.passenger)
        let legs = pass.legs.map {
            "\($0.code) \($0.origin) \($0.destination) \($0.dayOfYear) \($0.seat ?? "-") \($0.compartment ?? "-") "
                + "\($0.sequence.map(String.init) ?? "-") \($0.bookingReference)"
        }
        let wanted = expected.legs.map {
            "\($0.0) \($0.1) \($0.2) \($0.3) \($0.4 ?? "-") \($0.5 ?? "-") \($0.6.map(String.init) ?? "-") \($0.7)"
        }
        #expect(legs == wanted)
    }

    /// What is not a pass is refused, with the character where it goes wrong.
    @Test(
        arguments: [
            ("", 1, "ends before the format code"),
            ("M1DESMARAIS/LUC       ", 23, "ends before the electronic ticket"),
            // Two legs announced, one written.
            ("M2DESMARAIS/LUC       EABC123 YULFRAAC 0834 326J001A0025 100", 61, "ends before leg 2's booking"),
            ("M1DOE/JOHN            EXXX007 TXLBRUSN 2592 11", 45, "ends before leg 1's date"),
            ("M2Mobi Lab / ML-586 [In Progress]\nSplit Fooo.Config from main Fooo", 34, "does not use"),
            ("M1DOE/JOHN            EXXX007 TXLBRÜSN 2592 110Y", 36, "does not use"),
            ("M1DOE/JOHN            EXXX007 TXLbruSN 2592 110Y", 34, "'bru' is not an IATA code"),
            ("M1DOE/JOHN            EXXX007 TXLBRUSN 25A2 410Y", 45, "'410' is not a day of the year"),
            ("M1DOE/JOHN            EXXX007 TXLBRUSN XXXX 110Y", 40, "'XXXX ' is not a number"),
            // A first leg's conditional items said longer than the rest: where would the second leg start?
            ("M2DOE/JOHN            EXXX007 TXLBRUSN 2592 110Y012C0030 1FF>", 59, "255 characters, only 1 follow"),
            ("M1DOE/JOHN            EXXX007 TXLBRUSN 2592 110Y012C0030 1ZZ", 59, "'ZZ' is not hexadecimal"),
            ("S1DOE/JOHN            EXXX007 TXLBRUSN 2592 110Y", 1, "not an IATA boarding pass"),
            ("M0DOE/JOHN            EXXX007 TXLBRUSN 2592 110Y", 2, "not a digit from 1 to 9"),
            ("M1DOE/JOHN            EXXX007 TXLBRUSN 2592 110Y" + String(repeating: " x", count: 1100), 2049, "longer"),
        ] as [(String, Int, String)])
    func whatIsNotAPassIsRefusedWithWhereAndWhy(barcode: String, position: Int, reason: String) {
        #expect {
            try BoardingPass(barcode: barcode)
        } throws: { error in
            guard let problem = error as? BoardingPass.Problem else { return false }
            return problem.position == position && problem.reason.contains(reason)
        }
    }

    /// A calendar's flights on two days and another route; the pass is for the first day's.
    static let flights = """
        BEGIN:VEVENT\r
        UID:out\r
        DTSTAMP:20270101T000000Z\r
        DTSTART;TZID=America/Toronto:20271122T183000\r
        DTEND;TZID=Europe/Berlin:20271123T074500\r
        SUMMARY:Flight AC 834 YUL → FRA\r
        END:VEVENT\r
        BEGIN:VEVENT\r
        UID:next-day\r
        DTSTAMP:20270101T000000Z\r
        DTSTART;TZID=America/Toronto:20271123T183000\r
        DTEND;TZID=Europe/Berlin:20271124T074500\r
        SUMMARY:Flight AC 834 YUL → FRA\r
        END:VEVENT\r
        BEGIN:VEVENT\r
        UID:other-route\r
        DTSTAMP:20270101T000000Z\r
        DTSTART;TZID=America/Toronto:20271122T183000\r
        DTEND;TZID=Europe/Berlin:20271123T074500\r
        SUMMARY:Flight AC 834 YYZ → FRA\r
        END:VEVENT\r

        """

    /// `trips.ics` (`flights`) in `folder`, and a config.yml reading `calendars` with the passes of `passes/`, its
    /// events as JSON Lines on standard output.
    static func configure(_ folder: String, calendars: String = "[trips.ics]", extra: String = "") throws {
        try ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//pass//EN\r\n" + flights + "END:VCALENDAR\r\n")
            .write(toFile: folder + "/trips.ics", atomically: true, encoding: .utf8)
        try """
        calendars: \(calendars)
        timezone: UTC
        passes: [passes]
        sinks:
          - { type: jsonl, path: "-" }
        \(extra)
        """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
    }

    @Test func aPassJoinsItsDaysFlightAndNoOther() throws {
        let folder = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.written[1].barcode.write(toFile: folder + "/ac834.bcbp", atomically: true, encoding: .utf8)
        try "not a pass".write(toFile: folder + "/junk.bcbp", atomically: true, encoding: .utf8)
        try "M1 ignored: not .bcbp".write(toFile: folder + "/notes.txt", atomically: true, encoding: .utf8)
        let passes = BoardingPasses.read(folders: [folder, folder + "/missing"])
        #expect(passes.entries.map(\.leg.code) == ["AC834"])
        #expect(passes.problems.count == 1 && passes.problems[0].hasPrefix(folder + "/junk.bcbp: not a boarding pass"))

        let configuration = try ConfigurationLoader.parse("", file: "config.yml", directory: "/tmp", environment: [:])
        let classifier = Classifier(configuration, passes: passes)
        let occurrences = try ProducerHabitTests.scanText(Self.flights, from: "2027-11-01", to: "2027-12-01")
            .occurrences
        #expect(occurrences.count == 3)
        var seats: [String: String] = [:]
        for occurrence in occurrences {
            let flight = try #require(classifier.facts(for: occurrence).flight, "\(occurrence.uid)")
            seats[occurrence.uid] = flight.pass.map { "\($0.seat ?? "-") \($0.bookingReference)" } ?? "none"
            if flight.pass != nil { #expect(flight.seat == "3A" && flight.bookingReference == "AB12C3") }
        }
        #expect(seats == ["out": "3A AB12C3", "next-day": "none", "other-route": "none"])
        // The cards' and pushes' detail line says the seat.
        let out = try #require(occurrences.first { $0.uid == "out" })
        let facts = classifier.facts(for: out)
        let detected = try #require(
            Planner.plan(
                [out], facts: { _ in facts }, state: PlannerState(), configuration: PlannerConfiguration(),
                now: utc("2027-11-20T00:00:00Z")
            ).due.first { $0.type == .flightDetected })
        let entry = JournalStore.Entry(
            sequence: 1, event: detected, occurrence: out, facts: facts, recorded: Timestamp(millisecondsSinceEpoch: 0))
        #expect(ReminderText.details(entry).contains("Seat 3A"), "\(ReminderText.details(entry))")
        // Without the pass, nothing is said of a seat.
        let without = Classifier(configuration)
        #expect(occurrences.allSatisfy { without.facts(for: $0).flight?.pass == nil })
    }
}

extension BoardingPassTests {
    /// As a traveller uses it: `pass add` keeps a pass (a refused one keeps nothing), `check` counts it and the
    /// flight it joins, the flight's events carry the pass as the schema says, and `pass remove` takes it away.
    @Test func aPassAddedReachesTheFlightsEventsAndCheck() async throws {
        let folder = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.configure(folder, extra: "horizon: 1000d")
        let cli = CommandLineTests()
        let config = ["--config", folder + "/config.yml"]
        // A pass and a text that is not one, together: nothing is kept.
        let refused = try await cli.calwatch(["pass", "add", Self.written[1].barcode, "M1DOE"] + config)
        #expect(refused.status == 65, "\(refused.errors)")
        #expect(refused.errors.contains("barcode 2 is not a boarding pass: character 3"), "\(refused.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/passes"))
        // zbarimg's line on standard input.
        let added = try await cli.calwatch(
            ["pass", "add", "-"] + config, input: "PDF417:" + Self.written[1].barcode + "\n")
        #expect(added.status == 0, "\(added.errors)")
        #expect(added.output.contains("AC834 YUL→FRA") && added.output.contains("seat 3A"), "\(added.output)")
        // A stream without end is not read without end: one byte more than a folder of barcodes is refused (all of
        // it read, so that the test's writer never meets a closed pipe).
        let flood = try await cli.calwatch(
            ["pass", "add", "-"] + config, input: String(repeating: "M1", count: 1_040_000) + "\n")
        #expect(flood.status == 65 && flood.errors.contains("more than 1000 barcodes"), "\(flood.errors)")
        let file = folder + "/passes/AB12C3-AC834-326.bcbp"
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)

        let check = try await cli.calwatch(["check"] + config)
        #expect(
            check.output.contains("1 boarding pass, 1 leg; 1 flight of the calendars with a pass"), "\(check.output)")

        let replay = try await cli.calwatch(["replay", "--from", "2027-11-20", "--to", "2027-11-25"] + config)
        #expect(replay.status == 0, "\(replay.errors)")
        let lines = replay.output.split(separator: "\n").map(String.init)
        let detected = lines.filter { $0.contains("calwatch.flightDetected") }
        #expect(detected.count == 3, "\(detected)")
        let joined = try #require(detected.first { $0.contains("\"subject\":\"out/") })
        #expect(
            joined.contains(
                #""seat":"3A","bookingReference":"AB12C3","tier":1,"pass":{"seat":"3A","compartment":"J","sequence":27,"bookingReference":"AB12C3"}"#
            ), "\(joined)")
        #expect(detected.filter { $0.contains("\"pass\":") }.count == 1)
        let validator = EventSchemaTests.Validator(root: EventSchemaTests.schema)
        for line in detected {
            let errors = validator.validate(try EventSchemaTests.JSON.parse(line), EventSchemaTests.schema)
            #expect(errors.isEmpty, "\(errors)")
        }

        // explain and why say what the pass adds, for that day's flight only.
        let explained = try await cli.calwatch(["explain", folder + "/trips.ics", "--uid", "out"] + config)
        #expect(explained.output.contains("seat 3A, booking AB12C3"), "\(explained.output)")
        #expect(
            explained.output.contains("boarding pass: seat 3A, class J, check-in 27, booking AB12C3"),
            "\(explained.output)")
        let nextDay = try await cli.calwatch(["explain", folder + "/trips.ics", "--uid", "next-day"] + config)
        #expect(nextDay.status == 0 && !nextDay.output.contains("boarding pass"), "\(nextDay.output)")
        let why = try await cli.calwatch(["why", "out", "--at", "2027-11-22T12:00:00Z"] + config)
        #expect(why.output.contains("  boarding pass: seat 3A, class J"), "\(why.output)")

        let list = try await cli.calwatch(["pass", "list"] + config)
        #expect(list.output.contains("DESMARAIS/LUC") && list.output.contains("booking AB12C3"), "\(list.output)")
        let outside = try await cli.calwatch(["pass", "remove", "../trips.ics"] + config)
        #expect(outside.status == 65 && FileManager.default.fileExists(atPath: folder + "/trips.ics"))
        let removed = try await cli.calwatch(["pass", "remove", "AB12C3-AC834-326.bcbp"] + config)
        #expect(removed.status == 0 && !FileManager.default.fileExists(atPath: file), "\(removed.errors)")
        #expect(!check.errors.contains("joins no flight"), "\(check.errors)")

        // A pass for a flight no calendar has is only joined, never planned: check says so.
        let other = try BoardingPass(barcode: Self.written[2].barcode)
        _ = try await cli.calwatch(["pass", "add", Self.written[2].barcode] + config)
        let unjoined = try await cli.calwatch(["check"] + config)
        let leg = try #require(other.legs.first)
        #expect(
            unjoined.errors.contains(
                "\(leg.code) \(leg.origin)–\(leg.destination) on day \(leg.dayOfYear) of the year joins no flight"),
            "\(unjoined.errors)")
    }
}

extension BoardingPassTests {
    /// Wallet passes made by `scripts/pkpass-fixtures.py` (Python's zipfile, openssl for the signature): a signed
    /// one and an unsigned one are read with the gate, terminal and boarding time; one altered after it was issued,
    /// a ZIP bomb, 10,000 files, a file that is no ZIP and a pass without a barcode are refused, each saying why.
    @Test func walletPassesAreReadOrRefusedWithAReason() async throws {
        let folder = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try await runProgram(["python3", ConfigurationTests.repository + "/scripts/pkpass-fixtures.py", folder])
        func read(_ name: String) -> Result<BoardingPass, BoardingPasses.FileProblem> {
            BoardingPasses.pass(at: folder + "/" + name + ".pkpass")
        }
        for (name, signed) in [("signed", true), ("unsigned", false)] {
            let pass = try read(name).get()
            #expect(pass.signed == signed)
            let leg = try #require(pass.legs.first)
            #expect(leg.code == "AC834" && leg.seat == "3A" && leg.dayOfYear == 326)
            #expect(leg.gate == "B12" && leg.terminal == "1" && leg.boarding == utc("2027-11-22T22:45:00Z"))
        }
        for (name, reason) in [
            ("altered", "altered: pass.json is not the file manifest.json lists"),
            ("bomb", "pass.json unpacks to more than a pass holds (16 MiB)"),
            ("many", "more than 64 files"), ("garbage", "not a ZIP archive"),
            ("no-barcode", "a wallet pass without a barcode"),
        ] {
            guard case .failure(let problem) = read(name) else {
                Issue.record("\(name) was read")
                continue
            }
            #expect(problem.reason.contains(reason), "\(name): \(problem.reason)")
        }

        // Kept by `pass add`, joined with its flight: the wallet's gate wins over none, as its pass says.
        try Self.configure(folder)
        let cli = CommandLineTests()
        let config = ["--config", folder + "/config.yml"]
        let refused = try await cli.calwatch(["pass", "add", folder + "/altered.pkpass"] + config)
        #expect(refused.status == 65 && refused.errors.contains("altered"), "\(refused.errors)")
        let added = try await cli.calwatch(["pass", "add", folder + "/signed.pkpass"] + config)
        #expect(added.status == 0, "\(added.errors)")
        #expect(FileManager.default.fileExists(atPath: folder + "/passes/AB12C3-AC834-326.pkpass"))
        let replay = try await cli.calwatch(["replay", "--from", "2027-11-20", "--to", "2027-11-25"] + config)
        let detected = try #require(
            replay.output.split(separator: "\n").first {
                $0.contains("calwatch.flightDetected") && $0.contains("\"subject\":\"out/")
            })
        #expect(detected.contains(#""terminal":"1","gate":"B12","seat":"3A""#), "\(detected)")
        #expect(
            detected.contains(#""gate":"B12","terminal":"1","boarding":"2027-11-22T22:45:00Z"}"#), "\(detected)")
        let validator = EventSchemaTests.Validator(root: EventSchemaTests.schema)
        let errors = validator.validate(try EventSchemaTests.JSON.parse(String(detected)), EventSchemaTests.schema)
        #expect(errors.isEmpty, "\(errors)")
        let list = try await cli.calwatch(["pass", "list"] + config)
        #expect(
            list.output.contains(
                "(wallet pass, signed by Pass Type ID: pass.org.example, whom Apple's root does not vouch for"),
            "\(list.output)")
        // A pass whose signature is of another pass is altered: refused, nothing kept.
        let forged = try await cli.calwatch(["pass", "add", folder + "/forged.pkpass"] + config)
        #expect(forged.status == 65 && forged.errors.contains("its signature is not of this pass"), "\(forged.errors)")
        // Put in the folder by hand, it is left out all the same, and check says why.
        try FileManager.default.copyItem(atPath: folder + "/forged.pkpass", toPath: folder + "/passes/forged.pkpass")
        let checked = try await cli.calwatch(["check"] + config)
        #expect(
            checked.errors.contains("passes/forged.pkpass: altered: its signature is not of this pass"),
            "\(checked.errors)")
        let again = try await cli.calwatch(["replay", "--from", "2027-11-20", "--to", "2027-11-25"] + config)
        #expect(again.output.contains(#""gate":"B12""#) && !again.output.contains(#""gate":"C3""#))
    }

    /// `replay`, `why` and `check` as a user runs them: a wallet pass with no calendar item is a flight of its own
    /// (at its relevantDate, with its seat); with the calendar's flight beside it, only the calendar's is planned and
    /// `why` names both copies; a barcode alone (no time) gives no flight.
    @Test func aWalletPassWithoutACalendarItemIsPlannedAsItsOwnFlight() async throws {
        let folder = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try await runProgram(["python3", ConfigurationTests.repository + "/scripts/pkpass-fixtures.py", folder])
        try FileManager.default.createDirectory(atPath: folder + "/passes", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: folder + "/signed.pkpass", toPath: folder + "/passes/ac834.pkpass")
        try (Self.written[2].barcode + "\n").write(
            toFile: folder + "/passes/af123.bcbp", atomically: true, encoding: .utf8)
        let cli = CommandLineTests()
        let config = ["--config", folder + "/config.yml"]
        func detected() async throws -> [String] {
            let replay = try await cli.calwatch(["replay", "--from", "2027-11-20", "--to", "2027-12-10"] + config)
            #expect(replay.status == 0, "\(replay.errors)")
            return replay.output.split(separator: "\n").map(String.init).filter {
                $0.contains("calwatch.flightDetected")
            }
        }
        try Self.configure(folder, calendars: "[]")
        let alone = try await detected()
        #expect(alone.count == 1, "\(alone)")
        #expect(alone.first?.contains(#""subject":"AB12C3-AC834-326@pass.calwatch/2027-11-22T22:45:00Z""#) == true)
        #expect(alone.first?.contains(#""pass":{"seat":"3A""#) == true)

        try Self.configure(folder)
        let beside = try await detected()
        #expect(beside.contains { $0.contains(#""subject":"out/"#) && $0.contains(#""pass":{"seat":"3A""#) })
        #expect(!beside.contains { $0.contains("@pass.calwatch") }, "\(beside)")
        let why = try await cli.calwatch(
            ["why", "AB12C3-AC834-326@pass.calwatch", "--at", "2027-11-22T12:00:00Z"] + config)
        #expect(why.output.contains("one flight in 2 calendars (the same boarding pass)"), "\(why.output)")
        #expect(why.output.contains("this copy is not planned"), "\(why.output)")
    }

    /// The signature of each pass of `scripts/pkpass-fixtures.py`, checked with the fixtures' own authority trusted
    /// in Apple's stead, then with Apple's root alone: valid, then signed by someone Apple does not vouch for; a
    /// signature of another pass's manifest is invalid whoever is trusted; no signature is said so.
    @Test func aWalletPassSignatureIsCheckedAgainstTheRootTrusted() async throws {
        let folder = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try await runProgram(["python3", ConfigurationTests.repository + "/scripts/pkpass-fixtures.py", folder])
        let authority = try String(contentsOfFile: folder + "/authority.pem", encoding: .utf8)
        func pass(_ name: String) throws -> WalletPass {
            try WalletPass(archive: Data(contentsOf: URL(fileURLWithPath: folder + "/" + name + ".pkpass")))
        }
        let verdict = await WalletPassSignature.check(try pass("signed"), roots: [authority])
        #expect(verdict == .valid(signer: "Pass Type ID: pass.org.example"), "\(verdict)")
        guard case .untrusted(let signer, _) = await WalletPassSignature.check(try pass("signed")) else {
            Issue.record("a pass Apple's root does not vouch for was trusted")
            return
        }
        #expect(signer == "Pass Type ID: pass.org.example")
        for roots in [[authority], nil] {
            guard case .invalid = await WalletPassSignature.check(try pass("forged"), roots: roots) else {
                Issue.record("a signature of another pass was taken")
                continue
            }
        }
        #expect(await WalletPassSignature.check(try pass("unsigned")) == .unsigned)
    }
}

extension BoardingPassTests {
    /// A wallet pass naming its issuer's web service (a stand-in speaking PassKit's web service): asked every
    /// 10 minutes in the last 3 hours before boarding with `ApplePass` and `If-Modified-Since`; a 304 changes
    /// nothing; a new version (gate A7, boarding 35 minutes later) replaces the file; a redirect is not followed
    /// (the token is for that address alone); the token is never logged.
    @Test func aWalletPassAsksItsIssuerForItsLatestVersion() async throws {
        try await FeedServer.with(script: "pass-web-service.py", arguments: ["2027-11-22T22:45:00Z"]) { server in
            let passes = server.folder + "/passes"
            try FileManager.default.createDirectory(atPath: passes, withIntermediateDirectories: true)
            try FileManager.default.moveItem(atPath: server.folder + "/pass.pkpass", toPath: passes + "/ac834.pkpass")
            let file = passes + "/ac834.pkpass"
            let clock = Mutex(utc("2027-11-22T20:45:00Z"))
            let log = LogRecorder()
            let updates = WalletPassUpdates(folders: [passes], logger: log.logger, now: { clock.withLock { $0 } })
            func requests() -> [String] { server.log.filter { $0.hasPrefix("GET /v1/passes/") } }

            // Two hours before boarding: asked, and told nothing changed.
            #expect(await updates.askDue().isEmpty)
            #expect(requests().count == 1 && requests()[0].contains(" 304 True "), "\(requests())")
            #expect(!requests()[0].hasSuffix(" -"), "If-Modified-Since sent: \(requests())")
            // Not again within 10 minutes.
            clock.withLock { $0 = $0.adding(seconds: 300) }
            #expect(await updates.askDue().isEmpty)
            #expect(requests().count == 1)
            // The airline moved the gate and the boarding time: the new version replaces the file.
            try "moved".write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
            clock.withLock { $0 = $0.adding(seconds: 301) }
            #expect(await updates.askDue() == [file])
            let leg = try #require(try BoardingPasses.pass(at: file).get().legs.first)
            #expect(leg.gate == "A7" && leg.boarding == utc("2027-11-22T23:20:00Z"), "\(leg)")
            #expect(
                (try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
            // A redirect is the answer, not followed: the pass stays, and the log says so once, without the token.
            try "redirect".write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
            clock.withLock { $0 = $0.adding(seconds: 601) }
            #expect(await updates.askDue().isEmpty)
            #expect(server.log.allSatisfy { !$0.contains("/elsewhere") }, "\(server.log)")
            #expect(try BoardingPasses.pass(at: file).get().legs.first?.gate == "A7")
            #expect(log.messages.contains { $0.contains("gave no update: HTTP 302") }, "\(log.messages)")
            #expect(log.messages.allSatisfy { !$0.contains("vxwxd7J8") })
            #expect(log.metadata.allSatisfy { "\($0)".contains("vxwxd7J8") == false })
            // After boarding nothing is asked.
            clock.withLock { $0 = utc("2027-11-23T00:00:00Z") }
            let before = requests().count
            #expect(await updates.askDue().isEmpty)
            #expect(requests().count == before)
        }
    }
}
