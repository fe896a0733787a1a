import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRemote

/// The weather on the way (`travel.weather`): the forecast's hour as Open-Meteo answers it (from
/// `scripts/weather-server.py`, its documented shape), made a travel-time factor from the studies it cites, and a
/// replay whose drive in heavy rain leaves earlier by that factor, the same twice.
@Suite struct WeatherTests {
    @Test(
        arguments: [
            (
                WeatherCache.Conditions(rain: 4, snowfall: 0, temperature: 12), 8,
                "4.0 mm/h rain: HCM 2010 Exhibit 10-15"
            ),
            (.init(rain: 8, snowfall: 0, temperature: 12), 17, "rain > 0.25 in/h, −14.13% capacity"),
            (.init(rain: 0.5, snowfall: 2, temperature: -3), 29, "2.0 cm/h snow"),
            (.init(rain: 0, snowfall: 0, temperature: -25), 10, "below −4 °F"),
            (.init(rain: 0, snowfall: 0, temperature: 5), 2, "34 to 50 °F"),
            (.init(rain: 0, snowfall: 0, temperature: 15, visibility: 200), 14, "200 m visibility"),
        ] as [(WeatherCache.Conditions, Int, String)])
    func eachConditionGivesItsStudysFactorAndTheWorstApplies(
        conditions: WeatherCache.Conditions, percent: Int, reason: String
    ) throws {
        let factor = try #require(WeatherFactor.of(conditions))
        #expect(factor.percent == percent && factor.reason.contains(reason), "\(factor)")
        #expect(factor.applied(to: 1000) == 1000 + Int64(percent) * 10)
    }

    @Test func dryAndMildSlowsNothing() {
        #expect(WeatherFactor.of(.init(rain: 0, snowfall: 0, temperature: 15, visibility: 24_000)) == nil)
        #expect(WeatherFactor.of(.init(rain: 0.05, snowfall: 0.01, temperature: 11)) == nil)
    }

    static let key = WeatherCache.Key(
        GeoPoint(latitude: 52.57, longitude: 13.40)!, at: Instant(secondsSinceEpoch: 1_804_489_200))

    static func answer(_ text: String, status: Int = 200) -> HTTPClient.Answer {
        HTTPClient.Answer(
            status: status, headers: [:], body: Data(text.utf8), url: URL(string: "http://127.0.0.1/v1/forecast")!,
            received: text.utf8.count)
    }

    /// Open-Meteo's documented example (https://open-meteo.com/en/docs), its times as `timeformat=unixtime` gives
    /// them, and what is refused: other units than asked for, the documented error, another shape.
    @Test func theForecastsAnswerIsReadAndAStrangeOneRefused() throws {
        let hour = Self.key.hour * 3600
        let documented = """
            {"latitude":52.52,"longitude":13.419,"elevation":44.812,"generationtime_ms":2.2119,"utc_offset_seconds":0,
             "timezone":"GMT","timezone_abbreviation":"GMT",
             "hourly":{"time":[\(hour - 3600),\(hour)],"temperature_2m":[13,12.7],"rain":[0.0,3.2],"showers":[0,0.4],
                       "snowfall":[0,0],"visibility":[24140,null]},
             "hourly_units":{"time":"unixtime","temperature_2m":"°C","rain":"mm","showers":"mm","snowfall":"cm",
                             "visibility":"m"}}
            """
        let hours = try WeatherClient.hours(in: Self.answer(documented), at: Self.key).get()
        let conditions = try #require(hours[Self.key])
        #expect(conditions.rain == 3.6 && conditions.temperature == 12.7 && conditions.visibility == nil)
        #expect(hours.count == 2)
        let fahrenheit = documented.replacingOccurrences(of: #""temperature_2m":"°C""#, with: #""temperature_2m":"°F""#)
        #expect(
            (try? WeatherClient.hours(in: Self.answer(fahrenheit), at: Self.key).get()) == nil)
        let error = Self.answer(
            #"{"error":true,"reason":"Cannot initialize WeatherVariable from invalid String value tempeture_2m"}"#,
            status: 400)
        guard case .failure(let failure) = WeatherClient.hours(in: error, at: Self.key) else {
            Issue.record("an error was taken for a forecast")
            return
        }
        #expect(failure.reason.hasPrefix("HTTP 400: Cannot initialize"))
        #expect((try? WeatherClient.hours(in: Self.answer("[1,2,3]"), at: Self.key).get()) == nil)
        // A time no clock has, a temperature no place has: skipped, never trapped on.
        let absurd = documented.replacingOccurrences(of: "[\(hour - 3600),\(hour)]", with: "[1e300,\(hour)]")
            .replacingOccurrences(of: "[13,12.7]", with: "[13,1e300]")
        #expect((try? WeatherClient.hours(in: Self.answer(absurd), at: Self.key).get()) == nil)
    }

    @Test func checkSaysWhetherTheForecastAnswers() async throws {
        try await FeedServer.with(script: "weather-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            for (mode, answers) in [("", true), ("error", false)] {
                try mode.write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
                try "calendars: []\ntravel:\n  weather: { provider: open-meteo, url: \"\(server.url("/"))\" }\n".write(
                    toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
                let run = try await CommandLineTests().calwatch(["check", "--config", folder + "/config.yml"])
                #expect((run.status == 0) == answers, "\(run.errors)")
                #expect(run.errors.contains("travel.weather") != answers, "\(run.errors)")
            }
            #expect(server.log.count == 2, "\(server.log)")
        }
    }

    /// A drive across town in heavy rain, the engine and the forecast stand-ins both asked: the way's time grows by
    /// the cited factor, `why` says it with its numbers, a bike ride is not slowed, and a second replay prints the
    /// same events.
    @Test func heavyRainMovesTheTimeToLeaveByTheCitedFactor() async throws {
        try await FeedServer.with(script: "routing-server.py") { routing in
            try await FeedServer.with(script: "weather-server.py") { weather in
                let folder = SinkFixtures.folder()
                defer { try? FileManager.default.removeItem(atPath: folder) }
                try #"{"rain": 4.0, "temperature_2m": 12}"#.write(
                    toFile: weather.folder + "/weather.json", atomically: true, encoding: .utf8)
                try """
                BEGIN:VCALENDAR\r
                VERSION:2.0\r
                PRODID:-//weather//EN\r
                BEGIN:VEVENT\r
                UID:client-visit\r
                DTSTAMP:20270101T000000Z\r
                DTSTART:20270308T090000Z\r
                DTEND:20270308T100000Z\r
                SUMMARY:Client visit\r
                GEO:52.62;13.40\r
                END:VEVENT\r
                BEGIN:VEVENT\r
                UID:ride\r
                DTSTAMP:20270101T000000Z\r
                DTSTART:20270308T150000Z\r
                DTEND:20270308T160000Z\r
                SUMMARY:Ride to the lake\r
                GEO:52.42;13.40\r
                END:VEVENT\r
                END:VCALENDAR\r

                """.write(toFile: folder + "/cal.ics", atomically: true, encoding: .utf8)
                try """
                calendars: [cal.ics]
                timezone: UTC
                places:
                  - { name: Home, at: { lat: 52.52, lon: 13.40 } }
                rules:
                  - { summary: "(?i)ride", travelMode: cycling }
                travel:
                  routing: { engine: osrm, url: "\(routing.url("/"))" }
                  weather: { provider: open-meteo, url: "\(weather.url("/"))" }
                reminders: { offsets: [15m], anchor: { event: leaveBy } }
                liveActivity: { lead: 5m, updateEvery: 1h }
                sinks:
                  - { type: jsonl, path: "-" }
                """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
                let cli = CommandLineTests()
                let arguments = [
                    "replay", "--config", folder + "/config.yml", "--from", "2027-03-08", "--to", "2027-03-09",
                ]
                let first = try await cli.calwatch(arguments)
                #expect(first.status == 0, "\(first.errors)")
                let lines = first.output.split(separator: "\n")
                // 600 s in the stand-in; 4 mm/h of rain: +8% (HCM 2010, 7.24% less capacity).
                let visit = try #require(lines.first { $0.contains("calwatch.reminderDue") && $0.contains("Client") })
                #expect(visit.contains(#""travelSeconds":648"#), "\(visit)")
                #expect(visit.contains(#""weather":{"percent":8,"reason":"4.0 mm/h rain: HCM 2010 Exhibit 10-15"#))
                #expect(visit.contains(#""time":"2027-03-08T08:34:12Z""#), "\(visit)")
                // The bike ride is as long as the engine says.
                let ride = try #require(lines.first { $0.contains("calwatch.reminderDue") && $0.contains("lake") })
                #expect(ride.contains(#""travelSeconds":900"#) && !ride.contains(#""weather""#), "\(ride)")
                #expect(weather.log.count == 1, "one request for the day at that place: \(weather.log)")
                let second = try await cli.calwatch(arguments)
                func stable(_ text: String) -> [String] {
                    text.split(separator: "\n").map { String($0).replacing(/"recordedtime":"[^"]*"/, with: "") }
                }
                #expect(stable(second.output) == stable(first.output))
                let why = try await cli.calwatch([
                    "why", "client-visit", "--config", folder + "/config.yml", "--at", "2027-03-08T08:40:00Z",
                ])
                #expect(why.output.contains("weather: +8%: 4.0 mm/h rain: HCM 2010 Exhibit 10-15"), "\(why.output)")
            }
        }
    }
}
