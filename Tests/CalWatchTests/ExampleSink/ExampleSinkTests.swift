import CalWatchDaemon
import Foundation
import Logging
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// docs/development.md's "A sink in one folder": the example sink is added with one line (the kinds handed to the
/// loader), and the rest of calwatch finds it through that list.
@Suite struct ExampleSinkTests {
    static let kinds = SinkKinds.calwatch + [FilePerEventSettings.self]

    @Test func theExampleSinkGetsEveryEventAsAFileAndWhySaysItTookThem() async throws {
        let setup = try WhyTests.Setup(
            sinks: """
                  - type: file-per-event
                    folder: events
                """, kinds: Self.kinds)
        try setup.write("planning", WhyTests.meeting)
        try await setup.replay(from: "2027-04-05T09:00:00Z", to: "2027-04-05T11:00:00Z")
        let folder = setup.folder.path + "/events"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        let journal = try JournalStore(path: setup.configuration.statePath)
        let ids = try await journal.events(after: 0, limit: 1000).map { $0.event.id.description + ".json" }.sorted()
        #expect(!ids.isEmpty && files == ids, "\(files) \(ids)")
        for file in files {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            #expect(text.contains(#""id":"\#(file.dropLast(5))""#), "\(file): \(text.prefix(200))")
        }
        let trace = try await setup.why("planning", at: "2027-04-05T11:00:00Z")
        let reminder = try WhyTests.step(trace, .reminderDue, "15m before")
        #expect(reminder.deliveries.map(\.sink) == ["file-per-event:" + folder])
        #expect(reminder.deliveries.map(\.state) == ["delivered"])
    }

    @Test func itsEntryIsReadWithLinesAndSuggestionsAndCheckedForCheck() async throws {
        func problems(_ sinks: String, kinds: SinkKinds = Self.kinds) -> [String] {
            do {
                _ = try ConfigurationLoader.parse(
                    "sinks:\n" + sinks, file: "config.yml", directory: "/tmp", environment: ["HOME": "/home/ada"],
                    sinks: kinds, sources: .none)
                return []
            } catch {
                return error.problems.map(\.description)
            }
        }
        #expect(
            problems("  - { type: file-per-event }")
                == ["line 2: sinks[0]: has no `folder:`; write where the files go, such as ~/calwatch-events"])
        #expect(
            problems("  - type: file-per-event\n    folders: ~/events")
                == [
                    "line 2: sinks[0]: has no `folder:`; write where the files go, such as ~/calwatch-events",
                    "line 3: sinks[0].folders: is not a known key here; did you mean `folder`?",
                ])
        // Without the line that offers it, the type is unknown, and the message lists the program's own.
        let unknown = problems("  - { type: file-per-event, folder: /tmp }", kinds: .calwatch)
        #expect(unknown.count == 1 && unknown[0].contains("'file-per-event' is not a sink type; write one of jsonl"))
        #expect(!unknown[0].contains("file-per-event,") && unknown[0].contains("mqtt"), "\(unknown)")

        // `check` asks each sink through its driver: a folder that cannot be written is an error.
        func findings(_ folder: String) async throws -> [SinkFinding] {
            let read = try ConfigurationLoader.parse(
                "sinks: [{ type: file-per-event, folder: \(folder) }]", file: "config.yml", directory: "/tmp",
                environment: ["HOME": "/home/ada"], sinks: Self.kinds, sources: .none)
            let sink = try #require(read.sinks.first)
            #expect(sink.name == "file-per-event:" + folder.replacingOccurrences(of: "~", with: "/home/ada"))
            let environment = SinkEnvironment(
                now: { utc("2027-04-05T09:00:00Z") }, logger: .init(label: "t"), journal: "")
            return try await #require(sink.driver).check(named: sink.name, in: environment)
        }
        let file = NSTemporaryDirectory() + "calwatch-example-\(getpid())"
        try Data().write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(
            try await findings(file + "/events") == [
                .error("cannot create \(file)/events/.check: \(file) is a file, not a folder")
            ])
        #expect(try await findings("/tmp").isEmpty)
        _ = try await findings("~/events")
    }

    /// The page shows the example exactly as the suite compiles it.
    @Test func developmentMdShowsTheExampleAsItIs() throws {
        let page = try String(contentsOfFile: ConfigurationTests.repository + "/docs/development.md", encoding: .utf8)
        let section = try #require(page.range(of: "## A sink in one folder"))
        let block = try #require(page[section.upperBound...].range(of: "```swift\n"))
        let end = try #require(page[block.upperBound...].range(of: "```\n"))
        let source = try String(
            contentsOfFile: ConfigurationTests.repository + "/Tests/CalWatchTests/ExampleSink/FilePerEventSink.swift",
            encoding: .utf8)
        #expect(String(page[block.upperBound..<end.lowerBound]) == source)
    }
}
