import CalWatchCore
import CalWatchDaemon
import CalWatchRemote
import Foundation
import Testing

/// docs/development.md's "A calendar on a server in one type": the example kind is added by handing it to the
/// loader, and its entries are read, refused and fetched like calwatch's own.
@Suite struct ExampleSourceTests {
    static let kinds = SourceKinds.calwatch + [CopiedCalendarSettings.self]

    static func read(_ text: String, kinds: SourceKinds = Self.kinds) -> Result<Configuration, ConfigurationError> {
        Result { () throws(ConfigurationError) in
            try ConfigurationLoader.parse(
                text, file: "config.yml", directory: "/tmp", environment: ["HOME": "/home/ada"], sinks: .calwatch,
                sources: kinds)
        }
    }

    static func problems(_ text: String, kinds: SourceKinds = Self.kinds) -> [String] {
        guard case .failure(let error) = read(text, kinds: kinds) else { return [] }
        return error.problems.map { "\($0.line ?? 0) \($0.key ?? ""): \($0.message)" }
    }

    @Test func itsEntryIsReadWithTheCommonKeysAndItsOwn() throws {
        let configuration = try Self.read(
            """
            calendars:
              - ~/calendars
              - copy: file:///srv/share/team.ics
                name: Team
                every: 2m
                keep: false
              - url: https://example.org/team.ics
            """
        ).get()
        var copied = CopiedCalendarSettings(address: "file:///srv/share/team.ics")
        copied.keep = false
        #expect(
            configuration.sources == [
                SourceSettings(copied, name: "Team", every: 120),
                SourceSettings(ICSFeedSettings(address: "https://example.org/team.ics")),
            ])
        #expect(configuration.calendars == ["/home/ada/calendars"])
    }

    @Test func itsProblemsComeWithLinesAndSuggestions() {
        let problems = Self.problems(
            """
            calendars:
              - copy: file:///srv/team.ics
                username: me
              - name: nothing
              - copy: https://example.org/team.ics
              - copy: file:///srv/a.ics
                kep: false
              - copy: file:///srv/b.ics
                url: https://example.org/b.ics
            """)
        #expect(problems.count == 5, "\(problems)")
        #expect(problems[0].hasPrefix("3 calendars[0].username: is for CalDAV (`caldav:`), not a copied file"))
        #expect(problems[1].hasPrefix("4 calendars[1]: has no `url:`, `caldav:` or `copy:`"))
        #expect(problems[1].contains("copy: file:///srv/share/team.ics"))
        #expect(problems[2].hasPrefix("5 calendars[2].copy: 'https://example.org/team.ics' is not an address for"))
        #expect(problems[2].contains("file://"))
        #expect(problems[3].hasPrefix("7 calendars[3].kep: is not a known key here; did you mean `keep`?"))
        #expect(problems[4].hasPrefix("8 calendars[4]: has both `url:` and `copy:`"))
        // Without the kind in the list, its key is unknown and the entry has no address.
        let without = Self.problems("calendars:\n  - copy: file:///srv/team.ics\n", kinds: .calwatch)
        #expect(without.count == 2, "\(without)")
        #expect(without.contains { $0.hasPrefix("2 calendars[0]: has no `url:` or `caldav:`") })
    }

    @Test func itIsFetchedIntoTheCacheAndReadLikeAFolder() async throws {
        let folder = SinkFixtures.folder()
        let calendar = folder + "/team.ics"
        try FeedTests.calendar(["stand-up"]).write(toFile: calendar, atomically: true, encoding: .utf8)
        let settings = SourceSettings(CopiedCalendarSettings(address: "file://" + calendar), name: "Team")
        let window = ExpansionOptions(
            window: InstantWindow(start: utc("2027-03-01T00:00:00Z"), end: utc("2027-03-02T00:00:00Z")),
            defaultZone: .utc)
        let fetched = await FeedSync.fetch([settings], root: folder + "/cache")
        #expect(fetched.problems.isEmpty, "\(fetched.problems)")
        let scan = CalendarScan(paths: fetched.folders, options: window).run()
        #expect(scan.occurrences.map { "\($0.calendar) \($0.summary ?? "")" } == ["Team stand-up"])
        // The share gone: its copy is read, and the failure said with the kind's own words.
        try FileManager.default.removeItem(atPath: calendar)
        let offline = await FeedSync.fetch([settings], root: folder + "/cache")
        #expect(offline.problems == ["file://\(calendar): cannot be read (its copy from before is read)"])
        #expect(CalendarScan(paths: offline.folders, options: window).run().occurrences.count == 1)
    }
}
