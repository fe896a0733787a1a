import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// Zones, DST, durations, all-day and floating values (docs/design.md §3).
@Suite struct TimeSemanticsTests {
    @Test func wallTimeInTheSpringGapUsesTheOffsetFromBeforeTheGap() {
        let result = scan([fixture("dst-and-durations.ics")], from: "2025-03-29", to: "2025-04-02")
        // 02:30 does not exist in Berlin on 30 March; RFC 5545 reads it as 03:30 CEST (01:30Z). PT1H is exact.
        #expect(
            triples(result, uid: "in-the-spring-gap") == ["in-the-spring-gap 2025-03-30T01:30:00Z 2025-03-30T02:30:00Z"]
        )
    }

    @Test func wallTimeInTheAutumnFoldIsTheFirstOfTheTwo() {
        let result = scan([fixture("dst-and-durations.ics")], from: "2025-10-25", to: "2025-10-28")
        #expect(
            triples(result, uid: "in-the-autumn-fold") == [
                "in-the-autumn-fold 2025-10-26T00:30:00Z 2025-10-26T01:30:00Z"
            ])
    }

    @Test func nominalDayIsAWallClockDayExactHoursAreExact() {
        let result = scan([fixture("dst-and-durations.ics")], from: "2025-03-29", to: "2025-04-02")
        #expect(triples(result, uid: "nominal-day") == ["nominal-day 2025-03-29T11:00:00Z 2025-03-30T10:00:00Z"])
        #expect(triples(result, uid: "exact-day") == ["exact-day 2025-03-29T11:00:00Z 2025-03-30T11:00:00Z"])
    }

    @Test func weeklySeriesKeepsItsWallTimeAcrossTheChange() {
        let result = scan([fixture("dst-and-durations.ics")], from: "2025-03-20", to: "2025-04-10")
        #expect(starts(result, uid: "weekly-over-dst") == ["2025-03-24T08:00:00Z", "2025-03-31T07:00:00Z"])
    }

    @Test func floatingTimesFollowTheConfiguredZone() {
        let berlin = scan([fixture("dst-and-durations.ics")], from: "2025-03-31", to: "2025-04-01")
        let tokyo = scan([fixture("dst-and-durations.ics")], from: "2025-03-31", to: "2025-04-01", zone: "Asia/Tokyo")
        #expect(starts(berlin, uid: "floating-lunch") == ["2025-03-31T10:30:00Z"])
        #expect(starts(tokyo, uid: "floating-lunch") == ["2025-03-31T03:30:00Z"])
    }

    @Test func zeroLengthEventAtTheWindowStartIsIncludedAtTheEndExcluded() {
        let atStart = scan([fixture("dst-and-durations.ics")], from: "2025-04-01T00:00Z", to: "2025-04-01T01:00Z")
        let atEnd = scan([fixture("dst-and-durations.ics")], from: "2025-03-31T23:00Z", to: "2025-04-01T00:00Z")
        #expect(starts(atStart, uid: "zero-length-reminder") == ["2025-04-01T00:00:00Z"])
        #expect(starts(atEnd, uid: "zero-length-reminder").isEmpty)
    }

    @Test func allDaySpansAreResolvedInTheConfiguredZoneAndLastExactlyTheirDays() {
        let result = scan([fixture("apple-all-day.ics")], from: "2025-03-10", to: "2025-04-01")
        // No DTEND: one day. 29-31 March spans the change to summer time: 47 hours, still two days.
        #expect(
            triples(result, uid: "C0FFEE00-1111-2222-3333-444455556666") == [
                "C0FFEE00-1111-2222-3333-444455556666 2025-03-16T23:00:00Z 2025-03-17T23:00:00Z"
            ])
        #expect(
            triples(result, uid: "9E8D7C6B-5A49-3827-1605-F4E3D2C1B0A9") == [
                "9E8D7C6B-5A49-3827-1605-F4E3D2C1B0A9 2025-03-28T23:00:00Z 2025-03-30T22:00:00Z"
            ])
        #expect(result.occurrences.first { $0.uid.hasPrefix("5C3A") }?.allDay == true)
        let newYork = scan(
            [fixture("apple-all-day.ics")], from: "2025-03-10", to: "2025-04-01", zone: "America/New_York")
        #expect(starts(newYork, uid: "C0FFEE00-1111-2222-3333-444455556666") == ["2025-03-17T04:00:00Z"])
    }

    @Test func adjacentAllDayEventDoesNotLeakIntoTheNextDay() {
        // Bin day is 17 March; a window that starts at midnight on the 18th must not contain it.
        let result = scan([fixture("apple-all-day.ics")], from: "2025-03-18", to: "2025-03-19")
        #expect(starts(result, uid: "C0FFEE00-1111-2222-3333-444455556666").isEmpty)
    }

    @Test func windowsZoneNamesMapThroughCLDRAndCustomZonesUseTheirVTIMEZONE() {
        let result = scan([fixture("outlook-windows-zones.ics")], from: "2025-03-01", to: "2025-04-01")
        let planning = result.occurrences.first { $0.summary == "Quarterly planning" }!
        #expect(planning.start == utc("2025-03-10T09:00:00Z"))
        #expect(planning.timeZone?.identifier == "Europe/Berlin")
        // "Customized Time Zone": only the VTIMEZONE knows it (US rules: summer time from 9 March 2025).
        #expect(
            result.occurrences.first { $0.summary == "Call with New York office" }?.start == utc("2025-03-12T13:00:00Z")
        )
        // An Outlook display name without a VTIMEZONE: the zone it names, shown by its IANA name.
        let vendor = result.occurrences.first { $0.summary == "Vendor sync" }
        #expect(vendor?.start == utc("2025-03-11T14:00:00Z"))
        #expect(vendor?.timeZone?.identifier == "Europe/Berlin")
        #expect(WindowsZones.ianaName(for: "Eastern Standard Time") == "America/New_York")
        #expect(WindowsZones.ianaName(for: "Tokyo Standard Time") == "Asia/Tokyo")
        #expect(WindowsZones.ianaName(for: "tzone://Microsoft/Utc") == "Etc/UTC")
        #expect(TimeZoneDatabase.rules(named: "EST5EDT")?.offset(at: utc("2025-07-01T00:00:00Z")) == -4 * 3600)
        #expect(TimeZoneDatabase.rules(named: "PST") == nil)
        #expect(TimeZoneDatabase.rules(named: "../../etc/passwd") == nil)
    }

    /// Outlook display names name their zone: in summer their times keep daylight saving time (a fixed offset
    /// read from the name put them an hour off), and `timeZone` is the IANA name. One whose words name no zone of
    /// that offset keeps the offset shown.
    @Test(arguments: [
        ("(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna", "2025-07-10T08:00:00Z", "Europe/Berlin"),
        ("(UTC-05:00) Eastern Time (US & Canada)", "2025-07-10T14:00:00Z", "America/New_York"),
        ("(UTC+10:00) Canberra, Melbourne, Sydney", "2025-07-10T00:00:00Z", "Australia/Sydney"),
        ("(UTC+05:30) Chennai, Kolkata, Mumbai, New Delhi", "2025-07-10T04:30:00Z", "Asia/Kolkata"),
        ("(UTC+03:00) Nowhere, Atlantis", "2025-07-10T07:00:00Z", "(UTC+03:00) Nowhere, Atlantis"),
        ("(UTC+01:00) London", "2025-07-10T09:00:00Z", "(UTC+01:00) London"),
    ])
    func outlookDisplayNamesResolveToTheZoneTheyName(tzid: String, start: String, zone: String) throws {
        let text =
            [
                "BEGIN:VCALENDAR", "VERSION:2.0", "BEGIN:VEVENT", "UID:display", "DTSTAMP:20250101T000000Z",
                "DTSTART;TZID=\"\(tzid)\":20250710T100000", "DURATION:PT1H", "SUMMARY:Sync", "END:VEVENT",
                "END:VCALENDAR",
            ].joined(separator: "\r\n") + "\r\n"
        let result = scan(["-"], from: "2025-07-01", to: "2025-08-01", standardInput: Array(text.utf8))
        #expect(result.occurrences.first?.start == utc(start))
        #expect(result.occurrences.first?.timeZone?.identifier == zone)
    }

    @Test func xWRTimezoneTurnsUTCSeriesIntoWallTimeSeries() {
        let result = scan([fixture("x-wr-timezone.ics")], from: "2025-03-01", to: "2025-04-10", zone: "UTC")
        #expect(
            starts(result, uid: "utc-weekly-xwr@google.com") == [
                "2025-03-17T08:00:00Z", "2025-03-24T08:00:00Z", "2025-03-31T07:00:00Z",
            ])
        // Floating values are read in X-WR-TIMEZONE rather than in --tz.
        #expect(starts(result, uid: "floating-xwr@google.com") == ["2025-03-18T11:00:00Z"])
    }

    @Test func ianaNameWinsOverAWrongEmbeddedDefinition() {
        let text = """
            BEGIN:VCALENDAR\r
            BEGIN:VTIMEZONE\r
            TZID:Europe/Berlin\r
            BEGIN:STANDARD\r
            DTSTART:19700101T000000\r
            TZOFFSETFROM:+0500\r
            TZOFFSETTO:+0500\r
            END:STANDARD\r
            END:VTIMEZONE\r
            BEGIN:VEVENT\r
            UID:x\r
            DTSTART;TZID=Europe/Berlin:20250310T100000\r
            END:VEVENT\r
            END:VCALENDAR\r

            """
        let result = scan(["-"], from: "2025-03-01", to: "2025-04-01", standardInput: Array(text.utf8))
        #expect(starts(result, uid: "x") == ["2025-03-10T09:00:00Z"])
    }

    @Test func zoneRulesFollowRFC5545ForGapsAndFolds() {
        let newYork = TimeZoneDatabase.rules(named: "America/New_York")!
        // 2025-03-09 02:30 does not exist: EST (-5) applies, 07:30Z. 2025-11-02 01:30 happens twice: EDT first.
        #expect(newYork.instant(for: LocalDateTime(2025, 3, 9, 2, 30)) == utc("2025-03-09T07:30:00Z"))
        #expect(newYork.instant(for: LocalDateTime(2025, 11, 2, 1, 30)) == utc("2025-11-02T05:30:00Z"))
        #expect(newYork.offset(at: utc("2025-07-01T00:00:00Z")) == -4 * 3600)
    }

    @Test func timeArgumentsAcceptTheDocumentedForms() throws {
        let berlin = TimeZoneDatabase.rules(named: "Europe/Berlin")!
        let now = utc("2027-03-01T12:00:00Z")
        #expect(try TimeArgument.parse("2027-03-01", zone: berlin, now: now) == utc("2027-02-28T23:00:00Z"))
        #expect(try TimeArgument.parse("2027-03-01T09:30", zone: berlin, now: now) == utc("2027-03-01T08:30:00Z"))
        #expect(try TimeArgument.parse("2027-03-01T09:30:00Z", zone: berlin, now: now) == utc("2027-03-01T09:30:00Z"))
        #expect(
            try TimeArgument.parse("2027-03-01T09:30:00-05:00", zone: berlin, now: now) == utc("2027-03-01T14:30:00Z"))
        #expect(try TimeArgument.parse("today", zone: berlin, now: now) == utc("2027-02-28T23:00:00Z"))
        #expect(throws: TimeArgument.Invalid.self) { try TimeArgument.parse("next tuesday", zone: berlin, now: now) }
    }
}
