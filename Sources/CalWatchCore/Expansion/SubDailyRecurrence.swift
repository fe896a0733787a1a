/// Steps `FREQ=HOURLY`, `MINUTELY` and `SECONDLY` rules in Swift, day by day, with a budget of steps.
///
/// libical 3.0 steps such a rule one period at a time through every hour, minute or second its limits exclude,
/// about 0.1 ms a step, inside one call that cannot be interrupted. A rule no day satisfies
/// (`FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=30`) ran for minutes (hours when SECONDLY) and froze the daemon. Here the
/// day-level limits (BYMONTH, BYMONTHDAY, BYYEARDAY, BYDAY) are tested once per day, so a year of excluded days
/// is 365 steps; only the periods of a day that passes are stepped. Every step counts against `budget`, and a day
/// that passes is looked for at most 400 years ahead (the Gregorian cycle: a day not found there never comes).
///
/// RFC 5545 §3.3.10 for these frequencies: the periods are every INTERVAL hours (minutes, seconds) from DTSTART
/// in wall time; BYMONTH, BYMONTHDAY, BYYEARDAY, BYDAY and BYHOUR limit, and so do BYMINUTE for MINUTELY and
/// SECONDLY and BYSECOND for SECONDLY; BYMINUTE and BYSECOND otherwise expand a period into its instances (DTSTART's
/// minute and second when absent), and BYSETPOS picks among one period's instances. `SubDailyRecurrenceTests`
/// compares it with libical instance by instance on rules libical steps quickly.
struct SubDailyRecurrence {
    /// Why stepping ended early, for the expander's warning.
    enum Stop: Equatable {
        /// No day in 400 years satisfies the day-level limits.
        case noDay
        /// The periods, every INTERVAL from DTSTART, never reach BYHOUR, BYMINUTE or BYSECOND (the lattice repeats
        /// daily and a whole day of it missed them).
        case noTime
        /// The budget of steps ran out.
        case budget
    }

    private let start: LocalDateTime
    /// The length of one period in seconds: INTERVAL hours, minutes or seconds.
    private let period: Int64
    private let unit: Int64
    private let months: Set<Int>?
    private let monthDays: [Int]?
    private let yearDays: [Int]?
    private let weekdays: Set<Int>?
    private let hours: Set<Int>?
    private let minuteLimit: Set<Int>?
    private let secondLimit: Set<Int>?
    /// The minutes and seconds a period expands into (HOURLY: both; MINUTELY: seconds), ascending.
    private let minuteExpansion: [Int]
    private let secondExpansion: [Int]
    private let positions: [Int]?

    /// The start of the next period to look at, in wall seconds.
    private var cursor: Int64
    /// Instances of the current period not yet returned.
    private var pending: [LocalDateTime] = []
    private var pendingIndex = 0
    private var budget: Int
    /// The steps taken so far, budget included in them.
    private(set) var stepsTaken = 0
    private(set) var stop: Stop?

    /// Creates the iterator, or `nil` for a rule it does not read (not sub-daily, or with parts RFC 5545 does
    /// not allow for these frequencies, such as BYWEEKNO or an ordinal BYDAY): libical keeps those.
    init?(_ rule: RecurrenceRuleText, start: LocalDateTime, budget: Int) {
        switch rule.frequency {
        case "HOURLY": unit = 3600
        case "MINUTELY": unit = 60
        case "SECONDLY": unit = 1
        default: return nil
        }
        var interval: Int64 = 1
        var months: Set<Int>?
        var monthDays: [Int]?
        var yearDays: [Int]?
        var weekdays: Set<Int>?
        var hours: Set<Int>?
        var minutes: [Int]?
        var seconds: [Int]?
        var positions: [Int]?
        func numbers(_ text: Substring, in range: ClosedRange<Int>, signed: Bool = false) -> [Int]? {
            var values: [Int] = []
            for item in text.split(separator: ",") {
                guard let value = Int(item), range.contains(abs(value)), signed || value >= 0,
                    value != 0 || range.lowerBound == 0
                else { return nil }
                values.append(value)
            }
            return values.isEmpty ? nil : values
        }
        for part in rule.iterable.split(separator: ";") {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard pieces.count == 2 else { return nil }
            let value = pieces[1]
            switch pieces[0] {
            case "FREQ": break
            case "INTERVAL":
                guard let number = Int64(value), number >= 1, number <= 1_000_000 else { return nil }
                interval = number
            case "BYMONTH":
                guard let list = numbers(value, in: 1...12) else { return nil }
                months = Set(list)
            case "BYMONTHDAY":
                guard let list = numbers(value, in: 1...31, signed: true) else { return nil }
                monthDays = list
            case "BYYEARDAY":
                guard let list = numbers(value, in: 1...366, signed: true) else { return nil }
                yearDays = list
            case "BYDAY":
                var days: Set<Int> = []
                for code in value.split(separator: ",") {
                    guard let day = Self.weekdayCodes[String(code)] else { return nil }  // an ordinal: libical's
                    days.insert(day)
                }
                weekdays = days
            case "BYHOUR":
                guard let list = numbers(value, in: 0...23) else { return nil }
                hours = Set(list)
            case "BYMINUTE":
                guard let list = numbers(value, in: 0...59) else { return nil }
                minutes = list
            case "BYSECOND":
                guard let list = numbers(value, in: 0...60) else { return nil }
                seconds = list
            case "BYSETPOS":
                guard let list = numbers(value, in: 1...366, signed: true) else { return nil }
                positions = list
            case "WKST": guard Self.weekdayCodes[String(value)] != nil else { return nil }
            default: return nil
            }
        }
        self.start = start
        self.period = interval * unit
        self.months = months
        self.monthDays = monthDays
        self.yearDays = yearDays
        self.weekdays = weekdays
        self.hours = hours
        // A second 60 never occurs in wall time that is stepped without leap seconds, as libical steps it.
        let validSeconds = seconds.map { $0.filter { $0 < 60 } }
        minuteLimit = unit <= 60 ? minutes.map(Set.init) : nil
        secondLimit = unit == 1 ? validSeconds.map(Set.init) : nil
        minuteExpansion = unit == 3600 ? Array(Set(minutes ?? [start.minute])).sorted() : [0]
        secondExpansion = unit >= 60 ? Array(Set(validSeconds ?? [start.second])).sorted() : [0]
        self.positions = positions
        self.cursor = start.secondsAsUTC
        self.budget = budget
    }

    /// The next instance as wall time, or `nil` when the rule has no more (or `stop` says why it gave up).
    mutating func next() -> LocalDateTime? {
        while true {
            if pendingIndex < pending.count {
                defer { pendingIndex += 1 }
                return pending[pendingIndex]
            }
            guard stop == nil, let periodStart = nextPassingPeriod() else { return nil }
            pending = instances(of: periodStart)
            pendingIndex = 0
        }
    }

    /// Moves to the first period whose start is at or after `wall`, keeping the lattice of DTSTART.
    mutating func skip(to wall: LocalDateTime) {
        let target = wall.secondsAsUTC
        let origin = start.secondsAsUTC
        guard target > cursor else { return }
        cursor = origin + (target - origin + period - 1) / period * period
        pending = []
        pendingIndex = 0
    }

    /// The start of the next period (from `cursor`) that passes every limit, advancing `cursor` past it.
    private mutating func nextPassingPeriod() -> Int64? {
        var daysWithoutMatch = 0
        var periodsWithoutMatch: Int64 = 0
        let repeatsDaily = 86_400 % period == 0
        while true {
            budget -= 1
            stepsTaken += 1
            guard budget > 0 else {
                stop = .budget
                return nil
            }
            let day = floorDivide(cursor, 86_400)
            let date = CalendarDate(daysSinceEpoch: day)
            if !dayPasses(date, day: day) {
                daysWithoutMatch += 1
                if daysWithoutMatch > 146_097 {
                    stop = .noDay
                    return nil
                }
                // The first period that starts on a later day.
                let nextDay = (day + 1) * 86_400
                cursor += (nextDay - cursor + period - 1) / period * period
                continue
            }
            let candidate = cursor
            cursor += period
            let wall = LocalDateTime(secondsSinceEpochAsUTC: candidate)
            if hours?.contains(wall.hour) == false || minuteLimit?.contains(wall.minute) == false
                || secondLimit?.contains(wall.second) == false
            {
                periodsWithoutMatch += 1
                if repeatsDaily && periodsWithoutMatch >= 86_400 / period {
                    stop = .noTime
                    return nil
                }
                continue
            }
            return candidate
        }
    }

    /// The instances of one period: its expansion by minute and second, then BYSETPOS, never before DTSTART.
    private func instances(of periodStart: Int64) -> [LocalDateTime] {
        let wall = LocalDateTime(secondsSinceEpochAsUTC: periodStart)
        var set: [LocalDateTime] = []
        for minute in minuteExpansion {
            for second in secondExpansion {
                var instance = wall
                if unit == 3600 { instance.minute = minute }
                if unit >= 60 { instance.second = second }
                set.append(instance)
            }
        }
        if let positions {
            let picked = Set(
                positions.compactMap { position -> Int? in
                    let index = position > 0 ? position - 1 : set.count + position
                    return set.indices.contains(index) ? index : nil
                })
            set = set.indices.filter(picked.contains).map { set[$0] }
        }
        return set.filter { $0 >= start }
    }

    private func dayPasses(_ date: CalendarDate, day: Int64) -> Bool {
        if let months, !months.contains(date.month) { return false }
        if let monthDays {
            let length = CalendarDate.daysIn(month: date.month, year: date.year)
            guard monthDays.contains(where: { ($0 > 0 ? $0 : length + 1 + $0) == date.day }) else { return false }
        }
        if let yearDays {
            let first = CalendarDate(year: date.year, month: 1, day: 1).daysSinceEpoch
            let length = CalendarDate.daysIn(month: 2, year: date.year) == 29 ? 366 : 365
            let ordinal = Int(day - first) + 1
            guard yearDays.contains(where: { ($0 > 0 ? $0 : length + 1 + $0) == ordinal }) else { return false }
        }
        if let weekdays, !weekdays.contains(Int(((day % 7) + 7 + 3) % 7)) { return false }
        return true
    }

    private func floorDivide(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    /// 0 = Monday … 6 = Sunday.
    private static let weekdayCodes = ["MO": 0, "TU": 1, "WE": 2, "TH": 3, "FR": 4, "SA": 5, "SU": 6]
}
