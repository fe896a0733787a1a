import Foundation
import Testing

@testable import CalWatchCore

/// A traveller's day of twenty placed events through the commands, against the routing stand-in
/// (`scripts/routing-server.py`: OSRM and Valhalla are not in Debian): back-to-back meetings in Berlin, a flight to
/// Munich, meetings there, some with Apple Calendar's own travel times.
@Suite struct LeaveDayTests {
    struct Stop {
        var uid: String
        var start: Int64
        var end: Int64
        var point: (lat: Double, lon: Double)
        var apple: Bool
    }

    static let midnight: Int64 = 1_804_204_800  // 2027-03-05T00:00:00Z
    static let home = (lat: 52.50, lon: 13.40)

    /// Eight half-hour meetings in Berlin from 07:30, an hour apart; the flight at 17:00; eleven back-to-back
    /// 25-minute meetings in Munich from 19:00. Every third has Apple's travel time of 25 minutes.
    static let stops: [Stop] = {
        var stops: [Stop] = []
        for index in 0..<8 {
            let start = midnight + 7 * 3600 + 1800 + Int64(index) * 3600
            stops.append(
                Stop(
                    uid: "berlin-\(index)", start: start, end: start + 1800,
                    point: (52.50 + 0.01 * Double(index + 1), 13.40 + 0.005 * Double(index)), apple: index % 3 == 2))
        }
        for index in 0..<11 {
            let start = midnight + 19 * 3600 + Int64(index) * 1500
            stops.append(
                Stop(
                    uid: "munich-\(index)", start: start, end: start + 1500,
                    point: (48.14 + 0.01 * Double(index), 11.58), apple: index % 3 == 2))
        }
        return stops
    }()

    static func calendar() -> String {
        var text = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Apple Inc.//macOS 15.3//EN\r\n"
        for stop in stops {
            text += "BEGIN:VEVENT\r\nUID:\(stop.uid)\r\nDTSTAMP:20270301T000000Z\r\n"
            text +=
                "DTSTART:\(NextCommandTests.stamp(Int(stop.start)))\r\nDTEND:\(NextCommandTests.stamp(Int(stop.end)))\r\n"
            text += "SUMMARY:Visit \(stop.uid)\r\nLOCATION:Site \(stop.uid)\r\n"
            text += "GEO:\(GeoPoint.text(stop.point.lat));\(GeoPoint.text(stop.point.lon))\r\n"
            if stop.apple { text += "X-APPLE-TRAVEL-DURATION;VALUE=DURATION:PT25M\r\n" }
            text += "END:VEVENT\r\n"
        }
        text += "BEGIN:VEVENT\r\nUID:flight\r\nDTSTAMP:20270301T000000Z\r\n"
        text += "DTSTART:20270305T170000Z\r\nDTEND:20270305T181000Z\r\nSUMMARY:LH 2040 BER → MUC\r\nEND:VEVENT\r\n"
        return text + "END:VCALENDAR\r\n"
    }

    /// The stand-in's answer (60 s per 0.01 degree, rounded to a tenth, then up to the second) with a 10% buffer.
    static func routed(_ a: (lat: Double, lon: Double), _ b: (lat: Double, lon: Double)) -> Int64 {
        let raw = ((abs(a.lat - b.lat) + abs(a.lon - b.lon)) / 0.01 * 60 * 10).rounded() / 10
        let seconds = Int64(raw.rounded(.up))
        return seconds + (seconds * 10 + 99) / 100
    }

    static func setUp(in folder: String, server: FeedServer, budget: Int = 30) throws {
        try FileManager.default.createDirectory(atPath: folder + "/cal", withIntermediateDirectories: true)
        try calendar().write(toFile: folder + "/cal/day.ics", atomically: true, encoding: .utf8)
        try """
        calendars: [cal]
        timezone: UTC
        places:
          - { name: Home, at: { lat: \(home.lat), lon: \(home.lon) }, hours: "00:00-08:00" }
        travel:
          buffer: 10%
          routing: { engine: osrm, url: "\(server.url("/"))", requestsPerHour: \(budget) }
        reminders: { anchor: { event: leaveBy } }
        sinks:
          - { type: jsonl, path: events.jsonl }
        """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
    }

    @Test func everyTimeToLeaveOfTheDayIsRoutedFromTheEventBeforeRemindedAtItsInstantsAndExplained() async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try Self.setUp(in: folder, server: server)
            let cli = CommandLineTests()
            let replay = try await cli.calwatch([
                "replay", "--config", folder + "/config.yml", "--state", folder + "/journal.db",
                "--from", "2027-03-05T00:00:00Z", "--to", "2027-03-06T00:00:00Z",
            ])
            #expect(replay.status == 0, "\(replay.errors)")
            let events = try String(contentsOfFile: folder + "/events.jsonl", encoding: .utf8).split(separator: "\n")
                .compactMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }
            func data(_ event: [String: Any]) -> [String: Any] { event["data"] as? [String: Any] ?? [:] }
            func uid(_ event: [String: Any]) -> String? {
                (data(event)["occurrence"] as? [String: Any])?["uid"] as? String
            }
            // The flight: the way to Berlin's airport routed from the last Berlin meeting (ended two hours before).
            let flightLeave = try #require(
                events.lazy.filter { uid($0) == "flight" }.compactMap { data($0)["leave"] as? [String: Any] }.first)
            let airport = try #require(flightLeave["destination"] as? [String: Any])
            let last = Self.stops[7]
            #expect((flightLeave["origin"] as? [String: Any])?["name"] as? String == "Site berlin-7")
            #expect(
                flightLeave["travelSeconds"] as? Int
                    == Int(Self.routed(last.point, (airport["lat"] as! Double, airport["lon"] as! Double))))

            var expectedRequests = 1
            for (index, stop) in Self.stops.enumerated() {
                let leave: Int64
                if stop.apple {
                    leave = stop.start - 1500
                } else if stop.uid == "berlin-0" {
                    leave = stop.start - Self.routed(Self.home, stop.point)
                    expectedRequests += 1
                } else if stop.uid == "munich-0" {
                    // From Munich's airport, where the flight landed 50 minutes before.
                    let first = try #require(events.first { uid($0) == stop.uid })
                    let origin = try #require((data(first)["leave"] as? [String: Any])?["origin"] as? [String: Any])
                    #expect((origin["name"] as? String)?.contains("Munich") == true, "\(origin)")
                    leave = stop.start - Self.routed((origin["lat"] as! Double, origin["lon"] as! Double), stop.point)
                    expectedRequests += 1
                } else {
                    leave = stop.start - Self.routed(Self.stops[index - 1].point, stop.point)
                    expectedRequests += 1
                }
                let reminders = events.filter { $0["type"] as? String == "calwatch.reminderDue" && uid($0) == stop.uid }
                    .compactMap { $0["time"] as? String }
                let expected = [1800, 900, 300].map { Instant(secondsSinceEpoch: leave - Int64($0)).description }
                #expect(reminders == expected, "\(stop.uid)")
            }
            // Each way asked once, all within the budget.
            #expect(server.log.count == expectedRequests, "\(server.log)")
            #expect(Set(server.log).count == server.log.count && server.log.allSatisfy { $0.hasSuffix(" 200") })

            // `why` explains each time to leave step by step.
            for (index, stop) in Self.stops.enumerated() where index % 4 == 1 || stop.uid == "munich-0" {
                let why = try await cli.calwatch([
                    "why", stop.uid, "--config", folder + "/config.yml", "--state", folder + "/journal.db", "--at",
                    "2027-03-05T00:00:00Z",
                ])
                #expect(why.status == 0, "\(why.errors)")
                #expect(why.output.contains("time to leave"), "\(why.output)")
                if stop.apple {
                    #expect(why.output.contains("25m of travel time written in the item"), "\(why.output)")
                } else if stop.uid == "munich-0" {
                    #expect(
                        why.output.contains("where LH2040 lands") || why.output.contains("where LH 2040 lands"),
                        "\(why.output)")
                } else {
                    #expect(
                        why.output.contains("where Visit \(Self.stops[index - 1].uid) ends"), "\(why.output)")
                    #expect(why.output.contains("driving from Site \(Self.stops[index - 1].uid) (routing engine)"))
                }
            }
        }
    }

    /// The daemon when the engine stops answering mid-day and comes back: the ways it answered keep their time to
    /// leave, new ones count from the start meanwhile, nothing is lost, and the log says so once per change. (The
    /// live activities, updated every 2 s, carry each visit's time to leave as planned at the time.)
    @Test func anEngineThatFailsMidDayLosesNoReminderAndIsSaidOncePerChange() async throws {
        try await FeedServer.with(script: "routing-server.py") { server in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try FileManager.default.createDirectory(atPath: folder + "/cal", withIntermediateDirectories: true)
            let now = Int(Date().timeIntervalSince1970 / 60) * 60
            func item(_ uid: String, minutes: Int, lat: Double) -> String {
                """
                BEGIN:VCALENDAR\r
                VERSION:2.0\r
                PRODID:-//routing//EN\r
                BEGIN:VEVENT\r
                UID:\(uid)\r
                DTSTAMP:20270101T000000Z\r
                DTSTART:\(NextCommandTests.stamp(now + minutes * 60))\r
                DTEND:\(NextCommandTests.stamp(now + minutes * 60 + 1800))\r
                SUMMARY:Visit \(uid)\r
                GEO:\(lat);13.40\r
                END:VEVENT\r
                END:VCALENDAR\r

                """
            }
            try item("early", minutes: 90, lat: 52.62).write(
                toFile: folder + "/cal/early.ics", atomically: true, encoding: .utf8)
            try """
            calendars: [cal]
            timezone: UTC
            state: journal.db
            places:
              - { name: Home, at: { lat: 52.52, lon: 13.40 }, hours: "00:00-23:59" }
            travel:
              routing: { engine: osrm, url: "\(server.url("/"))" }
            reminders: { anchor: { event: leaveBy } }
            liveActivity: { lead: 6h, updateEvery: 2s }
            sinks:
              - { type: jsonl, path: events.jsonl }
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let process = try WatchCommandTests.watch(in: folder)
            defer { process.signalIfRunning(SIGKILL) }
            func lines() -> [String] {
                ((try? String(contentsOfFile: folder + "/events.jsonl", encoding: .utf8)) ?? "").split(separator: "\n")
                    .map(String.init)
            }
            func log() -> String { (try? String(contentsOfFile: folder + "/log.txt", encoding: .utf8)) ?? "" }
            try await eventually("the first way routed") {
                lines().contains { $0.contains("Visit early") && $0.contains(#""source":"routing""#) }
            }

            // The engine fails; two new visits want ways it cannot give.
            try "busy".write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
            try item("later", minutes: 150, lat: 52.70).write(
                toFile: folder + "/cal/later.ics", atomically: true, encoding: .utf8)
            try item("last", minutes: 200, lat: 52.80).write(
                toFile: folder + "/cal/last.ics", atomically: true, encoding: .utf8)
            try await eventually("both new visits planned with an estimated time to leave") {
                let started = lines().filter { $0.contains("liveActivityStart") }
                return started.contains { $0.contains("Visit later") } && started.contains { $0.contains("Visit last") }
            }
            try await eventually("the failure said") { log().contains("gave no way") }
            // Said once for the state, not per way; the early visit keeps the time to leave it had.
            try await Task.sleep(for: .milliseconds(500))
            #expect(log().components(separatedBy: "gave no way").count == 2, "\(log())")
            #expect(!lines().contains { $0.contains("Visit early") && $0.contains("liveActivityEnd") })
            let later = try #require(lines().first { $0.contains("Visit later") && $0.contains("liveActivityStart") })
            #expect(later.contains(#""confidence":"straightLine","estimated":true"#), "\(later)")

            // The engine answers again: the next change asks for what it lacked, and the log says so once.
            try "".write(toFile: server.folder + "/mode", atomically: true, encoding: .utf8)
            try item("later", minutes: 151, lat: 52.70).write(
                toFile: folder + "/cal/later.ics", atomically: true, encoding: .utf8)
            try await eventually("the moved visit routed") {
                lines().contains { $0.contains("Visit later") && $0.contains(#""source":"routing""#) }
            }
            try await eventually("the recovery said") { log().contains("answers again") }
            process.terminate()
            try await offCooperativePool { process.waitUntilExit() }
            #expect(log().components(separatedBy: "answers again").count == 2, "\(log())")
        }
    }
}
