/// How a DATE-TIME value is tied to a zone (RFC 5545 §3.3.5's three forms).
public enum TimeReference: Hashable, Sendable {
    /// `...Z`: an absolute UTC time.
    case utc
    /// No `Z` and no `TZID`: the same wall time wherever the user is.
    case floating
    /// `TZID=...`: wall time in the named zone, resolved later.
    case zone(String)
}

/// A DATE or DATE-TIME property value as written, before any zone is resolved.
public enum DateValue: Hashable, Sendable, CustomStringConvertible {
    case date(CalendarDate)
    case dateTime(LocalDateTime, TimeReference)

    /// Whether the value is an all-day DATE.
    public var isDate: Bool {
        if case .date = self { return true }
        return false
    }

    /// The wall-clock reading as written (midnight for a DATE).
    public var wallClock: LocalDateTime {
        switch self {
        case .date(let date): LocalDateTime(date: date)
        case .dateTime(let wall, _): wall
        }
    }

    /// The calendar date as written.
    public var date: CalendarDate { wallClock.date }

    /// Parses `20250101`, `20250101T090000` or `20250101T090000Z` (`reference` applies to the no-`Z` form).
    public init?(icalText text: Substring, reference: TimeReference) {
        let bytes = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[from..<(from + count)] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(4, 2), let day = number(6, 2) else { return nil }
        let date = CalendarDate(year: year, month: month, day: day)
        guard date.isValid else { return nil }
        if bytes.count == 8 {
            self = .date(date)
            return
        }
        guard bytes.count >= 15, bytes[8] == UInt8(ascii: "T"), let hour = number(9, 2), let minute = number(11, 2),
            let second = number(13, 2), hour < 24, minute < 60, second <= 60
        else { return nil }
        // A leap second (":60") is read as the next second, as RFC 5545 §3.3.5 allows.
        let wall = LocalDateTime(date: date, hour: hour, minute: minute, second: min(second, 59)).adding(
            seconds: second == 60 ? 1 : 0)
        if bytes.count == 16 && bytes[15] == UInt8(ascii: "Z") {
            self = .dateTime(wall, .utc)
        } else if bytes.count == 15 {
            self = .dateTime(wall, reference)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .date(let date): return date.description
        case .dateTime(let wall, .utc): return wall.iso8601 + "Z"
        case .dateTime(let wall, .floating): return wall.iso8601
        case .dateTime(let wall, .zone(let tzid)): return wall.iso8601 + "[" + tzid + "]"
        }
    }
}

/// An RFC 5545 DURATION, kept as its nominal (days, weeks) and exact (hours, minutes, seconds) parts.
///
/// `P1D` is a wall-clock day (23 or 25 hours across DST), `PT24H` is exactly 86,400 seconds (RFC 5545 §3.3.6).
public struct ICalDuration: Hashable, Sendable, CustomStringConvertible {
    /// Whole days, counting a week as seven days; negative for a negative duration.
    public var nominalDays: Int
    /// Exact seconds; negative for a negative duration.
    public var exactSeconds: Int64

    /// Creates a duration from its parts.
    public init(nominalDays: Int = 0, exactSeconds: Int64 = 0) {
        self.nominalDays = nominalDays
        self.exactSeconds = exactSeconds
    }

    /// The zero duration.
    public static let zero = ICalDuration()

    /// Whether the duration is negative overall.
    public var isNegative: Bool { nominalDays < 0 || exactSeconds < 0 }

    /// Parses `P1D`, `-PT15M`, `P1W`, `P1DT2H30M` (case-insensitive, as producers write it).
    public init?(icalText text: Substring) {
        var sign = 1
        var rest = Substring(text.uppercased())
        if rest.first == "-" || rest.first == "+" {
            sign = rest.first == "-" ? -1 : 1
            rest = rest.dropFirst()
        }
        guard rest.first == "P" else { return nil }
        rest = rest.dropFirst()
        var days = 0
        var seconds: Int64 = 0
        var inTime = false
        var digits = ""
        var sawComponent = false
        for character in rest {
            if character.isASCII && character.isNumber {
                digits.append(character)
                continue
            }
            if character == "T" {
                guard digits.isEmpty, !inTime else { return nil }
                inTime = true
                continue
            }
            guard let value = Int(digits), value <= 100_000_000 else { return nil }
            digits = ""
            sawComponent = true
            switch (character, inTime) {
            case ("W", false): days += value * 7
            case ("D", false): days += value
            case ("H", true): seconds += Int64(value) * 3600
            case ("M", true): seconds += Int64(value) * 60
            case ("S", true): seconds += Int64(value)
            default: return nil
            }
        }
        guard digits.isEmpty, sawComponent else { return nil }
        self.init(nominalDays: sign * days, exactSeconds: Int64(sign) * seconds)
    }

    public var description: String {
        "\(isNegative ? "-" : "")P\(abs(nominalDays))DT\(abs(exactSeconds))S"
    }
}
