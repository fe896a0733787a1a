import Testing

@testable import CalWatchCore

/// HOURLY, MINUTELY and SECONDLY rules stepped in Swift: libical's instances on rules libical steps quickly, and
/// an answer within the budget on the ones it does not.
@Suite struct SubDailyRecurrenceTests {
    /// Rules with day-level limits only, where libical 3.0.16 is right (it is not with BYHOUR, BYMINUTE,
    /// BYSECOND or BYSETPOS on these frequencies: see the cases below).
    @Test func matchesLibicalOnGeneratedRulesWithDayLimits() {
        var random = SimpleRecurrenceTests.SplitMix(state: 20_261_123)
        let codes = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
        func some(_ range: ClosedRange<Int>, most: Int) -> String {
            let count = Int.random(in: 1...most, using: &random)
            return Set((0..<count).map { _ in Int.random(in: range, using: &random) }).sorted().map(String.init)
                .joined(separator: ",")
        }
        var compared = 0
        for _ in 0..<300 {
            let frequency = ["HOURLY", "MINUTELY", "SECONDLY"].randomElement(using: &random)!
            var parts = ["FREQ=" + frequency]
            if Bool.random(using: &random) { parts.append("INTERVAL=\(Int.random(in: 1...7, using: &random))") }
            // libical steps every excluded second or minute at about 0.1 ms: the sparse combinations only on HOURLY.
            if frequency != "SECONDLY" && Int.random(in: 0..<3, using: &random) == 0 {
                let days = codes.filter { _ in Int.random(in: 0..<4, using: &random) > 0 }
                if !days.isEmpty { parts.append("BYDAY=" + days.joined(separator: ",")) }
            }
            if frequency == "HOURLY" && Int.random(in: 0..<3, using: &random) == 0 {
                parts.append("BYMONTH=" + some(1...12, most: 6))
            }
            if frequency == "HOURLY" && Int.random(in: 0..<3, using: &random) == 0 {
                parts.append("BYMONTHDAY=" + some(1...28, most: 8))
            }
            let text = parts.joined(separator: ";")
            let start = LocalDateTime(
                Int.random(in: 2020...2030, using: &random), Int.random(in: 1...12, using: &random),
                Int.random(in: 1...28, using: &random), Int.random(in: 0...23, using: &random),
                Int.random(in: 0...59, using: &random), Int.random(in: 0...59, using: &random))
            guard let rule = RecurrenceRuleText(text),
                var swift = SubDailyRecurrence(rule, start: start, budget: 5_000_000),
                let libical = RecurrenceIterator(rule: text, start: start, isDate: false)
            else {
                Issue.record("\(text) should be read by both")
                continue
            }
            let expected = (0..<40).compactMap { _ in libical.next() }
            let actual = (0..<40).compactMap { _ in swift.next() }
            #expect(actual == expected, "\(text) from \(start)")
            compared += 1
        }
        #expect(compared == 300)
    }

    /// RFC 5545's reading, confirmed with python-dateutil 2.9 (`scripts/compare-sub-daily.py` runs 300 generated
    /// rules against it); libical 3.0.16 gives other instances for each.
    @Test(arguments: [
        // BYMINUTE limits MINUTELY: 11:46 is an instance (libical starts at 12:46).
        ("FREQ=MINUTELY;BYMINUTE=46", LocalDateTime(2024, 1, 1, 11, 8, 6), ["11:46:06", "12:46:06", "13:46:06"]),
        // BYSETPOS picks within each hour's expansion (libical ignores it on HOURLY).
        (
            "FREQ=HOURLY;BYMINUTE=17,25,27;BYSETPOS=1", LocalDateTime(2020, 9, 20, 12, 5, 11),
            ["12:17:11", "13:17:11", "14:17:11"]
        ),
        // A limit keeps INTERVAL's lattice: every 6 minutes from :31 only ever reaches :25 of the listed minutes
        // (libical treats BYMINUTE as an expansion and gives :04, :12, :22, :25, :28).
        (
            "FREQ=MINUTELY;INTERVAL=6;BYMINUTE=4,12,22,25,28", LocalDateTime(2023, 11, 12, 19, 31, 15),
            ["20:25:15", "21:25:15", "22:25:15"]
        ),
    ])
    func followsRFC5545WhereLibicalDoesNot(rule text: String, start: LocalDateTime, expected: [String]) {
        var steps = SubDailyRecurrence(RecurrenceRuleText(text)!, start: start, budget: 5_000_000)!
        let times = (0..<3).compactMap { _ in steps.next() }.map { String($0.iso8601.suffix(8)) }
        #expect(times == expected)
    }

    /// Every INTERVAL from DTSTART misses the limits (dateutil: "generates an empty set"): said at once, not after
    /// the whole budget.
    @Test func aLatticeThatNeverReachesItsHoursEndsAfterOneDay() {
        let rule = RecurrenceRuleText("FREQ=HOURLY;INTERVAL=6;BYHOUR=5,22")!
        var steps = SubDailyRecurrence(rule, start: LocalDateTime(2026, 4, 16, 13, 19, 18), budget: 5_000_000)!
        #expect(steps.next() == nil)
        #expect(steps.stop == .noTime)
    }

    /// Rules that froze `scan` and `watch` for minutes to hours: each answers at once, and says why it is empty.
    @Test(arguments: ["SECONDLY", "MINUTELY", "HOURLY"])
    func aRuleNoDaySatisfiesEndsWithoutStepping(frequency: String) {
        let rule = RecurrenceRuleText("FREQ=\(frequency);BYMONTH=2;BYMONTHDAY=30")!
        var steps = SubDailyRecurrence(rule, start: LocalDateTime(2027, 3, 1, 9), budget: 5_000_000)!
        #expect(steps.next() == nil)
        #expect(steps.stop == .noDay)
    }

    @Test func aLeapDayRuleFindsItsDaysYearsApart() {
        let rule = RecurrenceRuleText("FREQ=MINUTELY;INTERVAL=30;BYMONTH=2;BYMONTHDAY=29")!
        var steps = SubDailyRecurrence(rule, start: LocalDateTime(2027, 3, 1, 9), budget: 5_000_000)!
        let first = (0..<49).compactMap { _ in steps.next() }
        #expect(first.first == LocalDateTime(2028, 2, 29, 0, 0))
        #expect(first[47] == LocalDateTime(2028, 2, 29, 23, 30))
        #expect(first[48] == LocalDateTime(2032, 2, 29, 0, 0))
        #expect(steps.stop == nil)
    }

    @Test func aSecondThatNeverComesEndsAfterOneDay() {
        // Second 60 never comes on a wall clock stepped without leap seconds.
        let rule = RecurrenceRuleText("FREQ=SECONDLY;BYSECOND=60")!
        var steps = SubDailyRecurrence(rule, start: LocalDateTime(2027, 3, 1, 9), budget: 1_000_000)!
        #expect(steps.next() == nil)
        #expect(steps.stop == .noTime)
    }

    @Test func stepsPastTheBudgetStopAndSaySo() {
        // Midnight of a leap day, every 7 seconds: the lattice meets 00:00:00 only every 7 days, on a leap day
        // rarely; 1,000 steps do not reach it.
        let rule = RecurrenceRuleText(
            "FREQ=SECONDLY;INTERVAL=7;BYMONTH=2;BYMONTHDAY=29;BYHOUR=0;BYMINUTE=0;BYSECOND=0")!
        var steps = SubDailyRecurrence(rule, start: LocalDateTime(2027, 3, 1, 9), budget: 1_000)!
        #expect(steps.next() == nil)
        #expect(steps.stop == .budget)
    }

    @Test func theScanWarnsWithTheRuleAndKeepsDTSTART() {
        let text = strangersCalendar(["DTSTART:20270301T090000Z", "RRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=30"])
        let result = scan(["-"], from: "2027-02-25", to: "2027-03-05", zone: "UTC", standardInput: text)
        #expect(starts(result, uid: "stranger") == ["2027-03-01T09:00:00Z"])
        #expect(
            result.problems.map(\.message) == [
                "RRULE 'FREQ=MINUTELY;BYMONTHDAY=30;BYMONTH=2' matches no day in 400 years (its BYMONTH, BYMONTHDAY, "
                    + "BYYEARDAY and BYDAY exclude each other); it adds no instances. Correct the RRULE."
            ])
    }
}

/// A sub-daily rule the Swift stepper does not read is reported, never handed to libical to step without end.
@Suite struct SubDailyRefusalTests {
    @Test(arguments: [
        "FREQ=MINUTELY;BYDAY=1MO;BYMONTH=2;BYMONTHDAY=30", "FREQ=SECONDLY;BYHOUR=25;BYMONTH=2;BYMONTHDAY=30",
    ])
    func isAnErrorNotAFreeze(rule: String) {
        let text = strangersCalendar(["DTSTART:20270301T090000Z", "RRULE:" + rule])
        let result = scan(["-"], from: "2027-02-25", to: "2027-03-05", zone: "UTC", standardInput: text)
        #expect(starts(result, uid: "stranger") == ["2027-03-01T09:00:00Z"])
        #expect(result.problems.contains { $0.message.contains("cannot be") }, "\(result.problems)")
    }
}
