import Foundation
import Testing

@testable import CalWatchCore

/// The airport and airline data files: checked against the SHA-256 their manifest records, refused when changed,
/// and named with their versions by `calwatch check`.
@Suite struct ReferenceDataTests {
    static let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/CalWatchCore/Resources/data").path

    /// A copy of the shipped files to change.
    static func copy() throws -> String {
        let folder = TestFolders.path("calwatch-data")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: shipped) {
            try FileManager.default.copyItem(atPath: shipped + "/" + name, toPath: folder + "/" + name)
        }
        return folder
    }

    @Test func sha256GivesTheStandardsTestVectors() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // 55, 56 and 64 bytes: where the padding takes one block or two.
        #expect(
            SHA256.hex(Array(repeating: 0x61, count: 55))
                == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(
            SHA256.hex(Array(repeating: 0x61, count: 56))
                == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(
            SHA256.hex(Array(repeating: 0x61, count: 64))
                == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }

    @Test func theShippedFilesMatchTheirManifestAndFillTheTables() throws {
        let loaded = ReferenceData.load(from: [Self.shipped])
        #expect(loaded.problems.isEmpty)
        #expect(
            loaded.files.map(\.name) == [
                "airlines", "airports", "city-names", "flight-weights", "flight-words", "metro-areas", "place-names",
            ])
        for file in loaded.files {
            #expect(file.problem == nil, "\(file.file): \(file.problem ?? "")")
            let text = try #require(loaded.texts[file.name])
            #expect(text.split(separator: "\n").count == file.rows)
        }
        #expect(loaded.files.first { $0.name == "airports" }?.version == "airportsdata-20260905")
        // What the process itself loaded is the same.
        #expect(ReferenceData.problems.isEmpty)
        #expect(AirportDatabase.shared.airport("LHR")?.city == "London")
        #expect(AirlineTable.shared.carrier("LH")?.name == "Lufthansa")
        // The gazetteer's names reach cities the hand-written table does not name.
        #expect(AirportDatabase.shared.airports(inCity: "Hà Nội").first?.code == "HAN")
    }

    @Test func aChangedFileIsRefusedAndTheOthersAreStillRead() throws {
        let folder = try Self.copy()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/airlines.txt"
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(of: "LH|Lufthansa|DLH\n", with: "LH|Lufthansa Express|DLH\n")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let loaded = ReferenceData.load(from: [folder])
        let airlines = try #require(loaded.files.first { $0.name == "airlines" })
        #expect(airlines.problem?.contains("the file was changed or damaged, and is not used") == true)
        #expect(loaded.texts["airlines"] == nil)
        #expect(loaded.texts["airports"] != nil && loaded.texts["metro-areas"] != nil)
    }

    @Test func noDataAtAllIsOneProblemNamingWhereItLooked() {
        let loaded = ReferenceData.load(from: ["/nonexistent/calwatch-data"])
        #expect(loaded.files.isEmpty && loaded.texts.isEmpty)
        #expect(loaded.problems.count == 1)
        #expect(loaded.problems.first?.contains("were not found in /nonexistent/calwatch-data") == true)
    }

    /// As a user meets it: `calwatch check` with a damaged file names it and exits 65; with the shipped ones it
    /// prints each file's version.
    @Test func checkNamesTheDataVersionsAndARefusedFile() async throws {
        let folder = try Self.copy()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let calendars = fixture("minimal.ics")
        let good = try await Self.check(calendars, data: Self.shipped)
        #expect(good.status == 0)
        #expect(
            good.output.contains("airports airportsdata-20260905, 7884 rows, sha256 0db59d4c1697… verified"),
            "\(good.output)")
        try Data("garbage\n".utf8).write(to: URL(fileURLWithPath: folder + "/airports.txt"))
        let bad = try await Self.check(calendars, data: folder)
        #expect(bad.status == 65)
        #expect(bad.errors.contains("calwatch: error: airports.txt: its SHA-256 is "), "\(bad.errors)")
        #expect(bad.output.contains("airports airportsdata-20260905, 7884 rows, sha256 0db59d4c1697… REFUSED"))
    }

    static func check(_ calendars: String, data: String) async throws -> CommandLineTests.Run {
        try await CommandLineTests().calwatch(
            ["check", calendars, "--tz", "UTC"], environment: ["CALWATCH_DATA": data])
    }

    /// Without its data files (a binary copied elsewhere, a broken install) no command that classifies goes on as
    /// if every flight were a plain event: scan, explain, replay, why and next refuse with exit 72 and say why;
    /// watch says so in its log at start.
    @Test func everyCommandThatClassifiesRefusesWithoutItsDataFiles() async throws {
        let calendars = ConfigurationTests.repository + "/samples/calendars/travel"
        let missing = ["CALWATCH_DATA": "/nonexistent/calwatch-data"]
        let cli = CommandLineTests()
        for arguments in [
            ["scan", calendars, "--from", "2027-03-01", "--to", "2027-03-08"], ["explain", calendars],
            ["replay", calendars, "--from", "2027-03-01", "--to", "2027-03-08"],
            ["next", calendars, "--at", "2027-03-03T03:00", "--no-daemon"],
        ] {
            let run = try await cli.calwatch(arguments, environment: missing)
            #expect(run.status == 72, "\(arguments[0]): \(run.status) \(run.errors)")
            #expect(run.errors.contains("data files (airports, airlines) were not found"), "\(run.errors)")
            #expect(run.output.isEmpty, "\(arguments[0]) printed as if nothing were wrong: \(run.output)")
        }
        let shipped = try await cli.calwatch(
            ["scan", calendars, "--from", "2027-03-01", "--to", "2027-03-08"],
            environment: ["CALWATCH_DATA": Self.shipped])
        #expect(shipped.status == 0 && shipped.output.contains("flight"), "\(shipped.errors)")
    }
}
