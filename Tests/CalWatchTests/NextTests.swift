import Foundation
import Synchronization
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// `calwatch next`: what a status bar shows, read from real calendar files at instants a test chooses.
@Suite struct NextTests {
    /// A folder of calendar files written the way vdirsyncer writes them: one item per file.
    final class Folder {
        let path: String

        init() throws {
            path =
                TestFolders.path("calwatch-next")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// Writes one VEVENT (the lines inside it) as `<uid>.ics`, renamed into place.
        func write(_ uid: String, _ lines: [String], extra: [String] = []) throws {
            let text =
                ([
                    "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT", "UID:\(uid)",
                    "DTSTAMP:20270101T000000Z",
                ] + lines + ["END:VEVENT"] + extra + ["END:VCALENDAR", ""])
                .joined(separator: "\r\n")
            let temporary = path + "/.\(uid).tmp"
            try text.write(toFile: temporary, atomically: false, encoding: .utf8)
            _ = rename(temporary, path + "/\(uid).ics")
        }

        func remove(_ uid: String) { try? FileManager.default.removeItem(atPath: path + "/\(uid).ics") }
    }

    static let zone = TimeZoneDatabase.rules(named: "Europe/Berlin")!

    /// The status at `now` (UTC text), as `calwatch next` works it out.
    static func status(
        _ folder: Folder, at now: String, me: [String] = [], options: NextUp.Options = NextUp.Options()
    ) -> NextUp {
        let instant = utc(now)
        var expansion = ExpansionOptions(
            window: InstantWindow(start: instant, end: instant.adding(seconds: options.horizon)), defaultZone: zone)
        expansion.lookBehind = 2 * 86_400
        let scan = CalendarScan(paths: [folder.path], options: expansion).run()
        var configuration = Configuration(home: NSHomeDirectory())
        configuration.me = me
        let classifier = Classifier(configuration)
        return NextUp(scan.occurrences, facts: classifier.facts(for:), options: options, now: instant, zone: zone)
    }

    static func render(_ status: NextUp, _ format: NextUpFormat, maxWidth: Int? = nil) -> String {
        format.render(status, style: .init(maxWidth: maxWidth))
    }

    static func waybar(_ status: NextUp) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(render(status, .waybar).utf8)) as! [String: Any]
    }

    static let standup = [
        "SUMMARY:Standup", "DTSTART:20270405T080000Z", "DTEND:20270405T083000Z",
        "LOCATION:https://us02web.zoom.us/j/81234567890",
    ]

    @Test func nothingTodaySaysSoInTextAndHidesInTheBars() throws {
        let folder = try Folder()
        try folder.write("later", ["SUMMARY:Next week", "DTSTART:20270412T080000Z", "DTEND:20270412T090000Z"])
        try folder.write("allday", ["SUMMARY:Holiday", "DTSTART;VALUE=DATE:20270405", "DTEND;VALUE=DATE:20270406"])
        let status = Self.status(folder, at: "2027-04-05T07:00:00Z")
        #expect(status.current == nil && status.state == "none")
        #expect(Self.render(status, .text) == "Nothing in the next 24 h")
        let waybar = try Self.waybar(status)
        #expect(waybar["text"] as? String == "" && waybar["class"] as? String == "none")
        #expect(waybar["tooltip"] as? String == "Nothing in the next 24 h")
        #expect(Self.render(status, .polybar) == "")
        #expect(Self.render(status, .i3blocks) == "\n\n")
        #expect(NextUpFormat.text.render(status, style: .init(none: "")) == "")
        #expect(Self.render(status, .json).contains(#""state":"none","now":"2027-04-05T07:00:00Z","text":null"#))
    }

    @Test func aMeetingIn40MinutesCountsDownAndTurnsSoonWithinTheLead() throws {
        let folder = try Folder()
        try folder.write("standup", Self.standup)
        let early = Self.status(folder, at: "2027-04-05T07:20:00Z")
        #expect(Self.render(early, .text) == "Standup in 40 min · zoom")
        #expect(try Self.waybar(early)["class"] as? String == "upcoming")
        #expect(Self.render(early, .polybar) == "Standup in 40 min · zoom")
        let close = Self.status(folder, at: "2027-04-05T07:48:30Z")
        #expect(Self.render(close, .text) == "Standup in 12 min · zoom")  // 11 min 30 s: rounded up
        #expect(try Self.waybar(close)["class"] as? String == "soon")
        #expect(Self.render(close, .i3blocks) == "Standup in 12 min · zoom\nStandup 12 min\n#e5c07b")
        #expect(Self.render(close, .polybar) == "%{F#e5c07b}Standup in 12 min · zoom%{F-}")
    }

    @Test func aLiveMeetingShowsTimeLeftAndProgress() throws {
        let folder = try Folder()
        try folder.write("standup", Self.standup)
        let status = Self.status(folder, at: "2027-04-05T08:12:00Z")
        #expect(Self.render(status, .text) == "Standup: 18 min left · zoom")
        let waybar = try Self.waybar(status)
        #expect(waybar["class"] as? String == "live" && waybar["percentage"] as? Int == 40)
        #expect((waybar["tooltip"] as? String)?.hasSuffix("https://us02web.zoom.us/j/81234567890") == true)
        #expect(Self.render(status, .i3blocks).hasSuffix("\n#e06c75"))
    }

    @Test func ofTwoOverlappingTheLiveOneWinsAndTheTooltipListsBoth() throws {
        let folder = try Folder()
        try folder.write("review", ["SUMMARY:Design review", "DTSTART:20270405T080000Z", "DTEND:20270405T090000Z"])
        try folder.write("call", ["SUMMARY:Vendor call", "DTSTART:20270405T083000Z", "DTEND:20270405T084500Z"])
        // 08:25: the review runs; the call is 5 min away but the running one wins.
        let before = Self.status(folder, at: "2027-04-05T08:25:00Z")
        #expect(Self.render(before, .text) == "Design review: 35 min left")
        // 08:35: both run; the one that began last is the one you are in.
        let both = Self.status(folder, at: "2027-04-05T08:35:00Z")
        #expect(Self.render(both, .text) == "Vendor call: 10 min left")
        let tooltip = try #require(try Self.waybar(both)["tooltip"] as? String)
        // Each says which it overlaps.
        #expect(
            tooltip
                == "  10:00–11:00  Design review · conflicts with Vendor call\n"
                + "▸ 10:30–10:45  Vendor call · conflicts with Design review")
    }

    /// Each line names the first item of the list it overlaps, however many it overlaps; one that only touches
    /// another (ends as the other begins) conflicts with none.
    @Test func theTooltipNamesTheFirstOfSeveralConflicts() throws {
        let folder = try Folder()
        try folder.write("offsite", ["SUMMARY:Offsite", "DTSTART:20270405T070000Z", "DTEND:20270405T110000Z"])
        try folder.write("a", ["SUMMARY:Interview", "DTSTART:20270405T080000Z", "DTEND:20270405T083000Z"])
        try folder.write("b", ["SUMMARY:Vendor call", "DTSTART:20270405T090000Z", "DTEND:20270405T093000Z"])
        try folder.write("c", ["SUMMARY:Lunch", "DTSTART:20270405T110000Z", "DTEND:20270405T120000Z"])
        let status = Self.status(folder, at: "2027-04-05T07:10:00Z")
        let tooltip = try #require(try Self.waybar(status)["tooltip"] as? String)
        #expect(
            tooltip
                == "▸ 09:00–13:00  Offsite · conflicts with Interview\n"
                + "  10:00–10:30  Interview · conflicts with Offsite\n"
                + "  11:00–11:30  Vendor call · conflicts with Offsite\n" + "  13:00–14:00  Lunch", "\(tooltip)")
    }

    @Test func onATripTheDayIsShownWhereTheUserIsWithTheTimeAtHomeBesideIt() throws {
        let folder = try Folder()
        try folder.write(
            "out",
            [
                "SUMMARY:Flight LH 716 Frankfurt (FRA) to Tokyo (HND)", "DTSTART:20270405T115500Z",
                "DTEND:20270406T030000Z",
            ])
        // Written for wherever the user will be: no zone.
        try folder.write(
            "breakfast", ["SUMMARY:Breakfast with Kenji", "DTSTART:20270407T090000", "DTEND:20270407T100000"])
        var options = NextUp.Options()
        options.day.travelZone = true
        // 05:00 in Tokyo.
        let status = Self.status(folder, at: "2027-04-06T20:00:00Z", options: options)
        #expect(Self.render(status, .text) == "Breakfast with Kenji in 4 h")
        let tooltip = try #require(try Self.waybar(status)["tooltip"] as? String)
        #expect(tooltip == "▸ 09:00–10:00 (home 02:00)  Breakfast with Kenji")
        // Without it, the breakfast is at 09:00 in Berlin.
        #expect(Self.render(Self.status(folder, at: "2027-04-06T20:00:00Z"), .text) == "Breakfast with Kenji in 11 h")
    }

    @Test func theTooltipMarksAnUnansweredInvitationAndLeavesFreeTimeOutOfConflicts() throws {
        let folder = try Folder()
        try folder.write(
            "budget",
            [
                "SUMMARY:Budget", "DTSTART:20270405T120000Z", "DTEND:20270405T130000Z",
                "ORGANIZER:mailto:cfo@example.org", "ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:me@example.org",
            ])
        try folder.write(
            "focus", ["SUMMARY:Focus", "DTSTART:20270405T120000Z", "DTEND:20270405T140000Z", "TRANSP:TRANSPARENT"])
        try folder.write("standup", ["SUMMARY:Standup", "DTSTART:20270405T080000Z", "DTEND:20270405T081500Z"])
        let status = Self.status(folder, at: "2027-04-05T07:00:00Z", me: ["me@example.org"])
        let tooltip = try #require(try Self.waybar(status)["tooltip"] as? String)
        #expect(
            tooltip
                == "▸ 10:00–10:15  Standup\n  14:00–15:00  Budget · not answered\n  14:00–16:00  Focus")
    }

    @Test func aFlightCountsDownToLeaveByThenToDeparture() throws {
        let folder = try Folder()
        try folder.write(
            "ba987",
            [
                "SUMMARY:Flight BA987 Berlin (BER) to London (LHR)", "DTSTART:20270405T061000Z",
                "DTEND:20270405T080500Z", "LOCATION:Berlin Brandenburg Airport (BER)",
            ])
        let status = Self.status(folder, at: "2027-04-05T01:20:00Z")
        let leaveBy = try #require(status.current?.facts.leaveBy)
        #expect(status.current?.target == .leaveBy && status.state == "flight")
        let minutes = (leaveBy.secondsSinceEpoch - utc("2027-04-05T01:20:00Z").secondsSinceEpoch) / 60
        #expect(
            Self.render(status, .text)
                == "Leave for BER in \(NextUpFormat.countdown(minutes * 60)) (BA987 08:10)")
        let after = Self.status(folder, at: Timestamp(leaveBy.adding(seconds: 600)).instant.description)
        #expect(Self.render(after, .text).hasPrefix("BA987 to LHR departs in"))
        #expect(try Self.waybar(after)["class"] as? String == "flight")
        let flying = Self.status(folder, at: "2027-04-05T07:05:00Z")
        #expect(Self.render(flying, .text) == "BA987 lands at LHR in 1 h")
        #expect(try Self.waybar(flying)["class"] as? String == "live")
    }

    @Test func theLeaveByLineReadsAsTheIssueShowsIt() {
        #expect(NextUpFormat.countdown(65 * 60) == "1 h 05")
        #expect(NextUpFormat.countdown(3 * 3600) == "3 h")
        #expect(NextUpFormat.countdown(26 * 3600 + 60) == "1 d 2 h")
        #expect(NextUpFormat.countdown(1) == "1 min")
    }

    @Test func aDeclinedAndACancelledMeetingAreSkipped() throws {
        let folder = try Folder()
        try folder.write(
            "declined",
            [
                "SUMMARY:All hands", "DTSTART:20270405T080000Z", "DTEND:20270405T090000Z",
                "ORGANIZER:mailto:boss@example.com", "ATTENDEE;PARTSTAT=DECLINED:mailto:me@example.com",
                "ATTENDEE;PARTSTAT=ACCEPTED:mailto:boss@example.com",
            ])
        try folder.write(
            "cancelled", ["SUMMARY:Offsite", "STATUS:CANCELLED", "DTSTART:20270405T083000Z", "DTEND:20270405T090000Z"])
        try folder.write("lunch", ["SUMMARY:Lunch", "DTSTART:20270405T100000Z", "DTEND:20270405T110000Z"])
        let status = Self.status(folder, at: "2027-04-05T07:50:00Z", me: ["me@example.com"])
        #expect(Self.render(status, .text) == "Lunch in 2 h 10")
        #expect(status.today.map(\.occurrence.uid) == ["lunch"])
        // Without `me` calwatch cannot know it was declined.
        #expect(Self.render(Self.status(folder, at: "2027-04-05T07:50:00Z"), .text) == "All hands in 10 min")
    }

    @Test func aSeriesShowsItsNextInstanceAfterOneMovedEarlier() throws {
        let folder = try Folder()
        try folder.write(
            "daily", ["SUMMARY:Standup", "DTSTART:20270401T080000Z", "DTEND:20270401T081500Z", "RRULE:FREQ=DAILY"],
            extra: [
                "BEGIN:VEVENT", "UID:daily", "DTSTAMP:20270101T000000Z", "RECURRENCE-ID:20270405T080000Z",
                "SUMMARY:Standup (early)", "DTSTART:20270405T060000Z", "DTEND:20270405T061500Z", "END:VEVENT",
            ])
        var twoDays = NextUp.Options()
        twoDays.horizon = 2 * 86_400
        let status = Self.status(folder, at: "2027-04-05T07:00:00Z", options: twoDays)
        #expect(status.current?.occurrence.start == utc("2027-04-06T08:00:00Z"))
        #expect(Self.render(status, .text) == "Standup in 1 d 1 h")
        let during = Self.status(folder, at: "2027-04-05T06:05:00Z")
        #expect(Self.render(during, .text) == "Standup (early): 10 min left")
    }

    @Test func theLineIsCutAtTheWidthWithoutBreakingACharacter() throws {
        let folder = try Folder()
        // A family emoji (one character of seven scalars), a flag, and CJK (two columns each).
        try folder.write(
            "wide", ["SUMMARY:👨‍👩‍👧‍👦 🇩🇪 会議の準備 and more", "DTSTART:20270405T080000Z", "DTEND:20270405T083000Z"])
        let status = Self.status(folder, at: "2027-04-05T07:20:00Z")
        let full = Self.render(status, .text)
        #expect(full == "👨‍👩‍👧‍👦 🇩🇪 会議の準備 and more in 40 min")
        for width in 1...NextUpFormat.columns(full) {
            let cut = Self.render(status, .text, maxWidth: width)
            #expect(NextUpFormat.columns(cut) <= width, "width \(width): \(cut)")
            if cut != full {
                #expect(cut.hasSuffix("…"))
                #expect(full.hasPrefix(String(cut.dropLast())), "a character was broken at width \(width)")
            }
        }
        #expect(Self.render(status, .text, maxWidth: 8) == "👨‍👩‍👧‍👦 🇩🇪 …")
        #expect(Self.render(status, .text, maxWidth: 12) == "👨‍👩‍👧‍👦 🇩🇪 会議…")
    }

    @Test func calendarTextCannotDriveTheBars() throws {
        let folder = try Folder()
        try folder.write(
            "hostile",
            [
                "SUMMARY:Pay %{A1:rm -rf ~:}now%{A} <b>&</b> \\n\u{1B}]52;c;x\u{07}", "DTSTART:20270405T080000Z",
                "DTEND:20270405T083000Z",
            ])
        let status = Self.status(folder, at: "2027-04-05T07:20:00Z")
        let polybar = Self.render(status, .polybar)
        #expect(!polybar.contains("%{A"))
        #expect(polybar.contains("%\u{200B}{A1:rm -rf ~:}"))
        let waybar = try Self.waybar(status)
        #expect((waybar["text"] as? String)?.contains("&lt;b&gt;&amp;&lt;/b&gt;") == true)
        for format in NextUpFormat.allCases where format != .i3blocks {
            #expect(!Self.render(status, format).contains("\n"), "\(format) is one line")
            #expect(!Self.render(status, format).contains("\u{1B}"), "\(format) carries no escape")
        }
        #expect(Self.render(status, .i3blocks).split(separator: "\n", omittingEmptySubsequences: false).count == 3)
    }

    /// A prepend mark before `%` (U+0600) or a combining mark after `<`/`>` makes one Swift character of them;
    /// the bars read bytes, so each `%`, `<`, `>` and `&` is neutralised as a Unicode scalar.
    @Test func markersJoinedToOtherScalarsAreNeutralisedToo() throws {
        let folder = try Folder()
        try folder.write(
            "joined",
            [
                "SUMMARY:\u{0600}%{A1:touch /tmp/x:}click\u{0600}%{A} \u{0600}<span foreground=\"red\">\u{0301}"
                    + "x</span>\u{0301} a&\u{0301}b",
                "DTSTART:20270405T080000Z", "DTEND:20270405T083000Z",
            ])
        let status = Self.status(folder, at: "2027-04-05T07:20:00Z")
        let polybar = Self.render(status, .polybar)
        let scalars = Array(polybar.unicodeScalars)
        for (index, scalar) in scalars.enumerated() where scalar == "%" && index > 0 && index < scalars.count - 5 {
            #expect(scalars[index + 1] == "\u{200B}", "a % at scalar \(index) can begin a tag: \(polybar)")
        }
        let text = try #require(try Self.waybar(status)["text"] as? String)
        #expect(!text.unicodeScalars.contains("<") && !text.unicodeScalars.contains(">"), "\(text)")
        #expect(text.contains("&lt;span"))
        let pango = NextUpFormat.i3blocks.render(status, style: .init(pango: true))
        #expect(!pango.unicodeScalars.contains("<") && pango.contains("a&amp;\u{0301}b"), "\(pango)")
        // Without --markup pango, i3blocks shows the text as it is.
        #expect(Self.render(status, .i3blocks).contains("<span"))
    }

    @Test func theJSONFollowsTheSchema() throws {
        let folder = try Folder()
        try folder.write("standup", Self.standup)
        let schema = EventSchemaTests.schema
        let validator = EventSchemaTests.Validator(root: schema)
        let definition = validator.resolve("#/$defs/nextStatus")
        for now in ["2027-04-05T07:20:00Z", "2027-04-05T08:10:00Z", "2027-04-05T09:00:00Z"] {
            let json = Self.render(Self.status(folder, at: now), .json)
            let errors = validator.validate(try EventSchemaTests.JSON.parse(json), definition)
            #expect(errors.isEmpty, "\(now): \(errors) in \(json)")
        }
    }

    @Test func kindsAndCalendarsFilterWithoutRegardToCase() throws {
        let folder = try Folder()
        try folder.write("standup", Self.standup)
        try folder.write("dentist", ["SUMMARY:Dentist", "DTSTART:20270405T073000Z", "DTEND:20270405T080000Z"])
        #expect(Self.render(Self.status(folder, at: "2027-04-05T07:00:00Z"), .text) == "Dentist in 30 min")
        let meetings = Self.status(folder, at: "2027-04-05T07:00:00Z", options: .init(kinds: [.meeting]))
        #expect(Self.render(meetings, .text) == "Standup in 1 h · zoom")
        let name = (folder.path as NSString).lastPathComponent.uppercased()
        #expect(Self.status(folder, at: "2027-04-05T07:00:00Z", options: .init(calendars: [name])).current != nil)
        #expect(Self.status(folder, at: "2027-04-05T07:00:00Z", options: .init(calendars: ["Other"])).current == nil)
    }
}

/// `calwatch next --follow` on a manual clock: a line every minute, and one at once when the status changes.
@Suite struct NextFollowTests {
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func append(_ line: String) { lines.withLock { $0.append(line) } }
    }

    @Test func oneLinePerMinuteWhenNothingChangesAndAtOnceOnAStart() async throws {
        let folder = try NextTests.Folder()
        // Starts at 08:05:30, between two minutes.
        try folder.write("call", ["SUMMARY:Call", "DTSTART:20270405T080530Z", "DTEND:20270405T083000Z"])
        let clock = ManualClock()
        let base = utc("2027-04-05T07:00:30Z")
        let wall: @Sendable () -> Timestamp = {
            Timestamp(
                millisecondsSinceEpoch: base.secondsSinceEpoch * 1000
                    + clock.now.offset.components.seconds * 1000
                    + clock.now.offset.components.attoseconds / 1_000_000_000_000_000)
        }
        let lines = Lines()
        var configuration = Configuration(home: NSHomeDirectory())
        configuration.calendars = [folder.path]
        let setup = NextFollower<ManualClock>.Setup(
            configuration: configuration, options: NextUp.Options(), format: .text, style: .init(), zone: .utc,
            followsSystemZone: false)
        let task = Task {
            let follower = NextFollower(
                setup: setup, clock: clock, wallClock: wall, systemZone: { nil }, problems: { _ in },
                output: { line in
                    lines.append(line)
                    return true
                })
            try await follower.run()
        }
        defer { task.cancel() }
        try await eventually("the first line") { lines.all.count == 1 && clock.sleeperCount > 0 }
        #expect(lines.all == ["Call in 1 h 05"])
        // Ten minutes of nothing: one line at each whole minute (the first half a minute away).
        for minute in 1...10 {
            clock.advance(by: minute == 1 ? .seconds(30) : .seconds(60))
            try await eventually("line \(minute + 1)") { lines.all.count == minute + 1 && clock.sleeperCount > 0 }
        }
        #expect(lines.all.last == "Call in 56 min")  // 55 min 30 s, rounded up
        // 07:10 → 07:50 is 40 minutes: 40 lines, the last at 07:50 when it turned soon (15 min ahead at 07:50:30).
        for minute in 11...50 {
            clock.advance(by: .seconds(60))
            try await eventually("line \(minute + 1)") { lines.all.count == minute + 1 && clock.sleeperCount > 0 }
        }
        #expect(lines.all.last == "Call in 16 min")
        // 07:50:30 is 15 min before the start: the line changes then, not at the next minute.
        clock.advance(by: .seconds(30))
        try await eventually("the soon line") { lines.all.count == 52 && clock.sleeperCount > 0 }
        #expect(lines.all.last == "Call in 15 min")
        clock.advance(by: .seconds(30))  // 07:51: the minute's line
        try await eventually("the minute line") { lines.all.count == 53 && clock.sleeperCount > 0 }
        // To 08:05:00, then the start at 08:05:30 at once.
        for _ in 0..<14 {
            clock.advance(by: .seconds(60))
            try await eventually("a minute line") { clock.sleeperCount > 0 }
        }
        let beforeStart = lines.all.count
        #expect(lines.all.last == "Call in 1 min")
        clock.advance(by: .seconds(30))
        try await eventually("the live line") { lines.all.count == beforeStart + 1 && clock.sleeperCount > 0 }
        #expect(lines.all.last == "Call: 25 min left")
    }
}
