/// Steps the most common rules in Swift: `FREQ=DAILY`, and `FREQ=WEEKLY` with an optional plain `BYDAY`.
///
/// These have a single obvious reading (every N days; the listed weekdays of every Nth week counted from the week
/// of DTSTART, weeks starting on WKST), and they are most of the series in real calendars. libical 3.0 as Debian
/// builds it does every step through an ICU calendar, which costs more than the rest of a scan; every other rule
/// still goes to libical. `SimpleRecurrenceTests` checks this against libical instance by instance.
struct SimpleRecurrence {
    private let start: LocalDateTime
    private let stepDays: Int
    /// Day offsets inside one period (from the period's first day), ascending; `[0]` for DAILY.
    private let offsets: [Int]
    /// The first day of the period that holds DTSTART.
    private let firstPeriodDay: Int64
    private var period = 0
    private var slot = 0

    /// Creates the iterator, or `nil` when the rule needs libical.
    init?(_ rule: RecurrenceRuleText, start: LocalDateTime) {
        var interval = 1
        var weekdays: [Int]?
        var weekStart = 0
        for part in rule.iterable.split(separator: ";") {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard pieces.count == 2 else { return nil }
            switch pieces[0] {
            case "FREQ": guard pieces[1] == "DAILY" || pieces[1] == "WEEKLY" else { return nil }
            case "INTERVAL":
                guard let value = Int(pieces[1]), value >= 1, value <= 10_000 else { return nil }
                interval = value
            case "BYDAY":
                guard rule.frequency == "WEEKLY" else { return nil }
                var days: [Int] = []
                for code in pieces[1].split(separator: ",") {
                    guard let day = Self.weekday(code) else { return nil }  // an ordinal such as 1MO needs libical
                    days.append(day)
                }
                weekdays = days
            case "WKST":
                guard let day = Self.weekday(pieces[1]) else { return nil }
                weekStart = day
            default: return nil
            }
        }
        self.start = start
        let startDay = start.date.daysSinceEpoch
        if rule.frequency == "DAILY" {
            stepDays = interval
            offsets = [0]
            firstPeriodDay = startDay
        } else {
            stepDays = 7 * interval
            let startWeekday = Self.weekday(ofDay: startDay)
            let weekBegin = startDay - Int64((startWeekday - weekStart + 7) % 7)
            firstPeriodDay = weekBegin
            let days = Set(weekdays ?? [startWeekday])
            offsets = (0..<7).filter { days.contains((weekStart + $0) % 7) }
        }
    }

    /// The next instance as wall time (never `nil`: the caller stops at UNTIL, COUNT or the window).
    mutating func next() -> LocalDateTime? {
        while true {
            if slot == offsets.count {
                slot = 0
                period += 1
            }
            let day = firstPeriodDay + Int64(period) * Int64(stepDays) + Int64(offsets[slot])
            slot += 1
            guard day >= start.date.daysSinceEpoch else { continue }
            return LocalDateTime(
                date: CalendarDate(daysSinceEpoch: day), hour: start.hour, minute: start.minute, second: start.second)
        }
    }

    /// Moves to the period holding `wall`'s day (never back): a daily series from twenty years ago reaches this week
    /// in one step, not seven thousand. Only for rules without COUNT, which must count every instance.
    mutating func skip(to wall: LocalDateTime) {
        let target = (wall.date.daysSinceEpoch - firstPeriodDay) / Int64(stepDays)
        guard target > Int64(period) else { return }
        period = Int(target)
        slot = 0
    }

    /// 0 = Monday … 6 = Sunday.
    private static func weekday(ofDay day: Int64) -> Int { Int(((day % 7) + 7 + 3) % 7) }

    private static func weekday(_ code: Substring) -> Int? {
        ["MO": 0, "TU": 1, "WE": 2, "TH": 3, "FR": 4, "SA": 5, "SU": 6][String(code)]
    }
}
