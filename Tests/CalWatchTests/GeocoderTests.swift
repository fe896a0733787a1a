import Foundation
import Logging
import Synchronization
import Testing

@testable import CalWatchCore
@testable import CalWatchRemote

/// The geocoder for a LOCATION that is only an address, against `scripts/geocoder-server.py` (a stand-in speaking
/// Nominatim's search API: Nominatim needs a PostGIS import and is not in Debian).
@Suite struct GeocoderTests {
    static func geocoder(_ server: FeedServer, cache: String) -> TravelSettings.Geocoder {
        var geocoder = TravelSettings.Geocoder(url: server.url("/"), userAgent: "calwatch-tests (ops@example.org)")
        geocoder.cachePath = cache
        return geocoder
    }

    @Test func aLinkAServiceOrOnlineIsNotAnAddress() {
        for location in [
            "Microsoft Teams Meeting", "https://zoom.us/j/123456", "Online", "Zoom", "anna@example.org", "Google Meet",
            "meet.google.com/abc-defg-hij", "  ",
        ] {
            #expect(GeocodeCache.query(location) == nil, "\(location)")
        }
        #expect(GeocodeCache.query("Kastanienallee 12,\n  10435 Berlin") == "Kastanienallee 12,")
        #expect(GeocodeCache.query("Marienplatz   8, München") == "Marienplatz 8, München")
    }

    @Test func addressesAreAskedOneASecondWithTheUserAgentAndKeptOnDisk() async throws {
        try await FeedServer.with(script: "geocoder-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let geocoder = Self.geocoder(server, cache: folder + "/cache/geocoder.json")
            let cache = GeocodeCache()
            let changes = Mutex(0)
            let poller = GeocodePoller(
                geocoder: geocoder, cache: cache, logger: Logger(label: "test"),
                changed: { changes.withLock { $0 += 1 } })
            let addresses = [
                "Kastanienallee 12, 10435 Berlin", "Marienplatz 8, München", "Nowhere Street 99, Atlantis",
            ]
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await poller.run() }
                for address in addresses { #expect(cache.point(for: address) == nil) }
                try await eventually("three answers kept on disk") {
                    server.log.count == 3 && FileManager.default.fileExists(atPath: folder + "/cache/geocoder.json")
                }
                group.cancelAll()
            }
            #expect(cache.point(for: addresses[0]) == GeoPoint(latitude: 52.53864, longitude: 13.40956))
            // Asked once each, a second apart at least, with the User-Agent the policy asks for.
            let lines = server.log.map { $0.split(separator: "\t") }
            let times = lines.compactMap { $0.count == 5 ? Double($0[3]) : nil }
            #expect(times.count == 3 && zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 0.95 }, "\(server.log)")
            #expect(server.log.allSatisfy { $0.hasSuffix("calwatch-tests (ops@example.org)") }, "\(server.log)")
            #expect(changes.withLock { $0 } >= 1)
            // The next run reads them from the file, the unknown address included: nothing is asked again.
            let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/cache/geocoder.json")
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let again = Geocoder.loadCache(geocoder)
            #expect(again.point(for: addresses[1]) == GeoPoint(latitude: 48.1373932, longitude: 11.5754485))
            #expect(again.point(for: addresses[2]) == nil)
            #expect(again.takeWanted().isEmpty)
        }
    }

    /// `why` on an item whose LOCATION is only an address: placed by the geocoder, routed from home, and the
    /// address asked once across two runs.
    @Test func anItemWithOnlyAnAddressIsPlacedRoutedAndExplained() async throws {
        try await FeedServer.with(script: "geocoder-server.py") { geocoder in
            try await FeedServer.with(script: "routing-server.py") { routing in
                let folder = SinkFixtures.folder()
                defer { try? FileManager.default.removeItem(atPath: folder) }
                try FileManager.default.createDirectory(atPath: folder + "/cal", withIntermediateDirectories: true)
                try """
                BEGIN:VCALENDAR\r
                VERSION:2.0\r
                PRODID:-//Mozilla.org/NONSGML Mozilla Calendar V1.1//EN\r
                BEGIN:VEVENT\r
                UID:physio\r
                DTSTAMP:20270301T000000Z\r
                DTSTART:20270305T160000Z\r
                DTEND:20270305T170000Z\r
                SUMMARY:Physio\r
                LOCATION:Kastanienallee 12\\, 10435 Berlin\r
                END:VEVENT\r
                END:VCALENDAR\r

                """.write(toFile: folder + "/cal/physio.ics", atomically: true, encoding: .utf8)
                try """
                calendars: [cal]
                timezone: UTC
                places:
                  - { name: Home, at: { lat: 52.50, lon: 13.40 }, hours: "00:00-23:59" }
                travel:
                  routing: { engine: osrm, url: "\(routing.url("/"))" }
                  geocoder: { url: "\(geocoder.url("/"))", userAgent: "calwatch-tests (ops@example.org)", cache: geo.json }
                reminders: { anchor: { event: leaveBy } }
                """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
                let cli = CommandLineTests()
                for _ in 0..<2 {
                    let why = try await cli.calwatch([
                        "why", "physio", "--config", folder + "/config.yml", "--state", folder + "/journal.db",
                        "--at", "2027-03-05T12:00:00Z",
                    ])
                    #expect(why.status == 0, "\(why.errors)")
                    #expect(
                        why.output.contains("to: Kastanienallee 12, 10435 Berlin (52.53864,13.40956)"), "\(why.output)")
                    #expect(why.output.contains("driving from Home (routing engine)"), "\(why.output)")
                    // 0.03864 + 0.00956 degrees from home: 290 s in the stand-in; left at 15:55:10.
                    #expect(why.output.contains("time to leave 2027-03-05 15:55:10"), "\(why.output)")
                }
                #expect(geocoder.log.count == 1, "\(geocoder.log)")
            }
        }
    }

    @Test func aGeocoderWithoutAUserAgentIsRefusedAndCheckSaysWhetherItAnswers() async throws {
        var text: [String] = []
        do {
            _ = try ConfigurationLoader.parse(
                "travel:\n  geocoder:\n    url: https://nominatim.openstreetmap.org\n", file: "config.yml",
                directory: "/tmp", environment: [:])
        } catch {
            text = error.problems.map { "\($0.line ?? 0): \($0.key ?? ""): \($0.message)" }
        }
        #expect(
            text.contains { $0.hasPrefix("3: travel.geocoder.userAgent") && $0.contains("usage policy") }, "\(text)")

        try await FeedServer.with(script: "geocoder-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let cli = CommandLineTests()
            for (mode, answers) in [("", true), ("down", false)] {
                try mode.write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
                try """
                calendars: []
                travel:
                  geocoder: { url: "\(server.url("/"))", userAgent: "calwatch-tests (ops@example.org)", cache: g.json }
                """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
                let run = try await cli.calwatch(["check", "--config", folder + "/config.yml"])
                #expect((run.status == 0) == answers, "\(run.errors)")
                #expect(run.errors.contains("travel.geocoder") != answers, "\(run.errors)")
            }
        }
    }
}
