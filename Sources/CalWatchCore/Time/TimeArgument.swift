/// Parses the time arguments of the command line (`--from`, `--to`): ISO 8601 or a few words.
///
/// `2027-03-01` and `2027-03-01T09:30` are wall time in the given zone; `2027-03-01T09:30:00Z` and
/// `2027-03-01T09:30:00+01:00` are absolute. Fractions of a second (`…T10:00:00.000Z`, as JavaScript and most
/// JSON write instants) are read and dropped: calwatch's instants are whole seconds. `now`, `today` and `tomorrow` are read against `now`.
public enum TimeArgument {
    /// Why an argument was refused, worded for `--help` readers.
    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public var text: String
        public var description: String {
            "'\(text)' is not a time; write 2027-03-01, 2027-03-01T09:30, 2027-03-01T09:30:00Z, "
                + "2027-03-01T09:30+01:00, now, today or tomorrow"
        }
    }

    /// The instant an argument names.
    public static func parse(_ text: String, zone: ZoneRules, now: Instant) throws -> Instant {
        switch text.lowercased() {
        case "now": return now
        case "today": return zone.instant(for: LocalDateTime(date: zone.wallClock(at: now).date))
        case "tomorrow": return zone.instant(for: LocalDateTime(date: zone.wallClock(at: now).date.adding(days: 1)))
        default: break
        }
        var body = Substring(text)
        var offset: Int?
        if body.hasSuffix("Z") || body.hasSuffix("z") {
            offset = 0
            body = body.dropLast()
        } else if body.count > 10, let signIndex = body.lastIndex(where: { $0 == "+" || $0 == "-" }),
            body.distance(from: body.startIndex, to: signIndex) > 10
        {
            let sign = body[signIndex] == "-" ? -1 : 1
            let digits = body[body.index(after: signIndex)...].filter { $0 != ":" }
            guard digits.count == 4 || digits.count == 2, let value = Int(digits) else { throw Invalid(text: text) }
            let hours = digits.count == 4 ? value / 100 : value
            let minutes = digits.count == 4 ? value % 100 : 0
            guard hours <= 14, minutes < 60 else { throw Invalid(text: text) }
            offset = sign * (hours * 3600 + minutes * 60)
            body = body[..<signIndex]
        }
        // Fractions of a second, after the seconds only (`09:30:00.250`, or with a comma as ISO 8601 allows).
        if let dot = body.lastIndex(where: { $0 == "." || $0 == "," }),
            body.distance(from: body.startIndex, to: dot) >= 19 || body.distance(from: body.startIndex, to: dot) == 15
        {
            let fraction = body[body.index(after: dot)...]
            guard !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw Invalid(text: text)
            }
            body = body[..<dot]
        }
        let compact = body.filter { $0 != "-" && $0 != ":" }
        var padded = compact
        if padded.count == 8 {
            guard offset == nil else { throw Invalid(text: text) }
        } else if padded.count == 13 {  // 20270301T0930
            padded += "00"
        } else if padded.count == 11 {  // 20270301T09
            padded += "0000"
        }
        guard let value = DateValue(icalText: Substring(padded), reference: .floating) else {
            throw Invalid(text: text)
        }
        if let offset { return Instant(secondsSinceEpoch: value.wallClock.secondsAsUTC - Int64(offset)) }
        return zone.instant(for: value.wallClock)
    }
}
