/// A calendar date without a time or zone (an RFC 5545 `DATE`).
///
/// Held in 8 bytes (a daemon keeps three dates in each of its items, 100,000 of them and more): a year beyond
/// ±2,147,483,647 or a month or day beyond ±32,767 is clamped to it.
public struct CalendarDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    @Clamped<Int32> public var year: Int
    @Clamped<Int16> public var month: Int
    @Clamped<Int16> public var day: Int

    /// Creates a date; the fields are not normalised.
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
    public var daysSinceEpoch: Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date `days` since 1970-01-01 (`civil_from_days`).
    public init(daysSinceEpoch days: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.init(year: Int(yoe + era * 400 + (m <= 2 ? 1 : 0)), month: Int(m), day: Int(d))
    }

    /// The date `days` later.
    public func adding(days: Int) -> CalendarDate { CalendarDate(daysSinceEpoch: daysSinceEpoch + Int64(days)) }

    /// Whether the fields name a real day.
    public var isValid: Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        return day <= CalendarDate.daysIn(month: month, year: year)
    }

    /// The number of days in a month.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public static func < (a: CalendarDate, b: CalendarDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        var out = ""
        ISO8601Text.appendDate(self, to: &out)
        return out
    }
}

/// A wall-clock reading: a date and a time of day, in no particular zone.
///
/// Held in 14 bytes (a time's fields beyond ±32,767 are clamped to it), as `CalendarDate` is.
public struct LocalDateTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var date: CalendarDate
    @Clamped<Int16> public var hour: Int
    @Clamped<Int16> public var minute: Int
    @Clamped<Int16> public var second: Int

    /// Creates a wall-clock reading; the fields are not normalised.
    public init(date: CalendarDate, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.date = date
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Creates a wall-clock reading from its six fields.
    public init(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) {
        self.init(date: CalendarDate(year: year, month: month, day: day), hour: hour, minute: minute, second: second)
    }

    /// The reading of a clock at UTC+0 that shows `seconds` since the epoch.
    public init(secondsSinceEpochAsUTC seconds: Int64) {
        var days = seconds / 86_400
        var rest = seconds % 86_400
        if rest < 0 {
            rest += 86_400
            days -= 1
        }
        self.init(
            date: CalendarDate(daysSinceEpoch: days), hour: Int(rest / 3600), minute: Int(rest % 3600 / 60),
            second: Int(rest % 60))
    }

    /// This reading as if it were UTC, in seconds since the epoch: the scale zone offsets are added on.
    public var secondsAsUTC: Int64 {
        date.daysSinceEpoch * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// The reading `seconds` later on the same wall clock (ignoring any zone).
    public func adding(seconds: Int64) -> LocalDateTime {
        LocalDateTime(secondsSinceEpochAsUTC: secondsAsUTC + seconds)
    }

    /// The reading `days` later at the same time of day (a nominal day, RFC 5545 §3.3.6).
    public func adding(days: Int) -> LocalDateTime {
        LocalDateTime(date: date.adding(days: days), hour: hour, minute: minute, second: second)
    }

    public static func < (a: LocalDateTime, b: LocalDateTime) -> Bool { a.secondsAsUTC < b.secondsAsUTC }

    /// `YYYY-MM-DDTHH:MM:SS`.
    public var iso8601: String {
        var out = ""
        ISO8601Text.appendDateTime(self, to: &out)
        return out
    }

    public var description: String { iso8601 }
}

/// Fast ISO 8601 text for the hot output path (no Foundation formatters).
enum ISO8601Text {
    static func appendPadded(_ value: Int, width: Int, to out: inout String) {
        var digits = String(value < 0 ? -value : value)
        if value < 0 { out.append("-") }
        while digits.count < width { digits = "0" + digits }
        out.append(digits)
    }

    static func appendDate(_ date: CalendarDate, to out: inout String) {
        appendPadded(date.year, width: 4, to: &out)
        out.append("-")
        appendPadded(date.month, width: 2, to: &out)
        out.append("-")
        appendPadded(date.day, width: 2, to: &out)
    }

    static func appendDateTime(_ value: LocalDateTime, to out: inout String) {
        appendDate(value.date, to: &out)
        out.append("T")
        appendPadded(value.hour, width: 2, to: &out)
        out.append(":")
        appendPadded(value.minute, width: 2, to: &out)
        out.append(":")
        appendPadded(value.second, width: 2, to: &out)
    }
}

/// An `Int` kept in the bytes of `Stored`, a value beyond its range clamped to it: the date and time fields above.
@propertyWrapper
public struct Clamped<Stored: FixedWidthInteger & Hashable & Sendable>: Hashable, Sendable {
    private var stored: Stored

    public init(wrappedValue: Int) { stored = Stored(clamping: wrappedValue) }

    public var wrappedValue: Int {
        get { Int(stored) }
        set { stored = Stored(clamping: newValue) }
    }
}
