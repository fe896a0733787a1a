import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The Swift fast path for DAILY and WEEKLY rules: libical's instances where libical is right, RFC 5545's where not.
@Suite struct SimpleRecurrenceTests {
    /// A small seeded generator, so a failure names a reproducible rule.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func fastPathMatchesLibicalOnGeneratedRulesWithoutWeekAlignment() {
        var random = SplitMix(state: 20_261_122)
        let codes = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
        var compared = 0
        for _ in 0..<400 {
            var parts = [Bool.random(using: &random) ? "FREQ=DAILY" : "FREQ=WEEKLY"]
            let weekly = parts[0] == "FREQ=WEEKLY"
            let byDay = weekly && Bool.random(using: &random)
            // INTERVAL>1 with BYDAY is where libical 3.0.16 aligns weeks wrongly: see the RFC test below.
            if !byDay && Bool.random(using: &random) {
                parts.append("INTERVAL=\(Int.random(in: 1...5, using: &random))")
            }
            if byDay {
                let days = codes.filter { _ in Int.random(in: 0..<3, using: &random) == 0 }
                if !days.isEmpty { parts.append("BYDAY=" + days.joined(separator: ",")) }
            }
            if Bool.random(using: &random) { parts.append("WKST=" + codes.randomElement(using: &random)!) }
            let text = parts.joined(separator: ";")
            let start = LocalDateTime(
                Int.random(in: 1995...2030, using: &random), Int.random(in: 1...12, using: &random),
                Int.random(in: 1...28, using: &random), Int.random(in: 0...23, using: &random), 30)
            let isDate = Int.random(in: 0..<4, using: &random) == 0
            let wall = isDate ? LocalDateTime(date: start.date) : start
            guard let rule = RecurrenceRuleText(text), var fast = SimpleRecurrence(rule, start: wall),
                let libical = RecurrenceIterator(rule: text, start: wall, isDate: isDate)
            else {
                Issue.record("\(text) should take the fast path")
                continue
            }
            // libical skips a DTSTART that the rule does not produce; the expander adds DTSTART itself.
            let expected = (0..<60).compactMap { _ in libical.next() }
            let actual = (0..<60).compactMap { _ in fast.next() }
            #expect(actual == expected, "\(text) from \(wall)")
            compared += 1
        }
        #expect(compared == 400)
    }

    /// RFC 5545 §3.3.10's WKST example and cases confirmed with python-dateutil; libical 3.0.16 gets these wrong.
    @Test(arguments: [
        (
            "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,SU;WKST=MO", LocalDateTime(1997, 8, 5, 9),
            ["1997-08-05", "1997-08-10", "1997-08-19", "1997-08-24"]
        ),
        (
            "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,SU;WKST=SU", LocalDateTime(1997, 8, 5, 9),
            ["1997-08-05", "1997-08-17", "1997-08-19", "1997-08-31"]
        ),
        (
            "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;WKST=SU", LocalDateTime(1997, 9, 2, 9),
            ["1997-09-02", "1997-09-04", "1997-09-16", "1997-09-18"]
        ),
        (
            "FREQ=WEEKLY;INTERVAL=4;BYDAY=SU", LocalDateTime(2001, 3, 6),
            ["2001-03-11", "2001-04-08", "2001-05-06", "2001-06-03"]
        ),
        (
            "FREQ=WEEKLY;INTERVAL=4;BYDAY=MO,WE,TH;WKST=FR", LocalDateTime(2023, 8, 19, 14, 30),
            ["2023-08-21", "2023-08-23", "2023-08-24", "2023-09-18"]
        ),
    ])
    func weeklyIntervalWeeksFollowWKST(rule: String, start: LocalDateTime, dates: [String]) {
        var fast = SimpleRecurrence(RecurrenceRuleText(rule)!, start: start)!
        #expect((0..<dates.count).map { _ in fast.next()!.date.description } == dates)
    }

    @Test func rulesWithOtherPartsStayWithLibical() {
        let start = LocalDateTime(2025, 3, 3, 9)
        for text in [
            "FREQ=WEEKLY;BYDAY=1MO", "FREQ=MONTHLY", "FREQ=DAILY;BYHOUR=9,17", "FREQ=WEEKLY;BYSETPOS=1;BYDAY=MO,TU",
        ] {
            #expect(SimpleRecurrence(RecurrenceRuleText(text)!, start: start) == nil, "\(text)")
        }
    }
}
