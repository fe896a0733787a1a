import Foundation

/// Resolves the TZIDs of one calendar to zone rules, in the order docs/design.md §3 gives.
///
/// 1. an IANA name the system knows (also inside vendor prefixes like `/mozilla.org/20070129_1/Europe/Berlin`);
/// 2. a Windows name, through CLDR's table (before the VTIMEZONE: Outlook's VTIMEZONEs only carry the rules of the
///    year they were written, the IANA zone knows every year);
/// 3. the calendar's own VTIMEZONE;
/// 4. an Outlook display name such as `(UTC+01:00) Amsterdam, Berlin`: the zone its words or first city name, else
///    the fixed offset it shows;
/// 5. otherwise the default zone, with a warning.
/// Not `Sendable`: one resolver serves one calendar on one task, and caches as it goes.
public final class ZoneResolver {
    /// How a TZID was resolved, for messages and `explain`.
    public enum Source: String, Sendable {
        case iana, windows, vtimezone, displayOffset, unknown
    }

    /// The zone for floating and all-day values (`--tz`, or `timezone` in the configuration).
    public let defaultZone: ZoneRules
    /// The zone `X-WR-TIMEZONE` names, when it resolves.
    public let calendarZone: ZoneRules?
    private let definitions: [String: TimeZoneDefinition]
    private var cache: [String: (rules: ZoneRules, source: Source)] = [:]
    /// Problems met while resolving, worded for the user (each TZID once).
    public private(set) var problems: [String] = []

    /// Creates a resolver for a calendar with its VTIMEZONEs and `X-WR-TIMEZONE`.
    public init(
        defaultZone: ZoneRules, definitions: [String: TimeZoneDefinition] = [:], calendarZoneName: String? = nil
    ) {
        self.defaultZone = defaultZone
        self.definitions = definitions
        self.calendarZone = calendarZoneName.flatMap { name in
            TimeZoneDatabase.rules(named: name) ?? WindowsZones.ianaName(for: name).flatMap(TimeZoneDatabase.rules)
        }
        if let name = calendarZoneName, calendarZone == nil {
            problems.append("X-WR-TIMEZONE '\(name)' is not a known zone; it is ignored.")
        }
    }

    /// The rules for a TZID.
    public func rules(for tzid: String) -> ZoneRules { resolve(tzid).rules }

    /// The rules for a TZID and how they were found.
    public func resolve(_ tzid: String) -> (rules: ZoneRules, source: Source) {
        if let hit = cache[tzid] { return hit }
        let found = lookUp(tzid)
        cache[tzid] = found
        return found
    }

    private func lookUp(_ tzid: String) -> (rules: ZoneRules, source: Source) {
        let name = tzid.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["\""])
        if let rules = TimeZoneDatabase.rules(named: name) { return (rules, .iana) }
        if let iana = WindowsZones.ianaName(for: name), let rules = TimeZoneDatabase.rules(named: iana) {
            return (rules, .windows)
        }
        if let rules = Self.ianaSuffix(of: name) { return (rules, .iana) }
        if let definition = definitions[tzid], let rules = VTimeZoneRules.build(definition) {
            return (rules, .vtimezone)
        }
        if let offset = Self.displayOffset(name) {
            if let rules = Self.displayNameZone(name, offset: offset) { return (rules, .windows) }
            return (ZoneRules(identifier: name, fixedOffset: offset), .displayOffset)
        }
        problems.append(
            "TZID '\(tzid)' is neither a known zone nor defined by a VTIMEZONE in the calendar; its times are read "
                + "in \(defaultZone.identifier). Add the VTIMEZONE or use an IANA name such as Europe/Berlin.")
        return (defaultZone, .unknown)
    }

    /// `/mozilla.org/20070129_1/Europe/Berlin` and similar vendor prefixes end in an IANA name, which has at most
    /// three parts: only those suffixes are tried, longest first (every suffix of a TZID of thousands of parts was
    /// quadratic: 13 s for 56 KB).
    private static func ianaSuffix(of name: String) -> ZoneRules? {
        let parts = name.split(separator: "/")
        guard parts.count > 2 else { return nil }
        for first in max(1, parts.count - 3)..<(parts.count - 1) {
            if let rules = TimeZoneDatabase.rules(named: parts[first...].joined(separator: "/")) { return rules }
        }
        return nil
    }

    /// The zone an Outlook display name stands for (`(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna` is
    /// Windows' `W. Europe Standard Time`): the Windows zone its words name (`Eastern Time (US & Canada)` →
    /// `Eastern Standard Time`), else the IANA zone of the first city listed, each only when its standard offset is
    /// the one shown. The times then keep daylight saving time, and `timeZone` shows the IANA name.
    private static func displayNameZone(_ name: String, offset: Int) -> ZoneRules? {
        guard let close = name.firstIndex(of: ")") else { return nil }
        let words = name[name.index(after: close)...].trimmingCharacters(in: .whitespaces)
        guard !words.isEmpty, words.utf8.count <= 200 else { return nil }
        func standardOffset(_ rules: ZoneRules) -> Int {
            // The smaller of January's and July's offsets, so either hemisphere's summer time is passed over.
            min(
                rules.offset(at: Instant(secondsSinceEpoch: 1_736_899_200)),
                rules.offset(at: Instant(secondsSinceEpoch: 1_752_537_600)))
        }
        var service = words
        if let paren = service.firstIndex(of: "(") { service = service[..<paren].trimmingCharacters(in: .whitespaces) }
        if service.hasSuffix(" Time"), let iana = WindowsZones.ianaName(for: service.dropLast(5) + " Standard Time"),
            let rules = TimeZoneDatabase.rules(named: iana), standardOffset(rules) == offset
        {
            return rules
        }
        // The cities' IANA zones; the one CLDR maps the Windows zone to first (Berlin, not Amsterdam).
        let regions = ["Europe", "America", "Asia", "Australia", "Africa", "Pacific", "Atlantic", "Indian"]
        var candidates: [String] = []
        for city in words.split(separator: ",").prefix(8) {
            let place = city.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "_")
            guard !place.isEmpty, place.allSatisfy({ $0.isLetter || $0 == "_" }) else { continue }
            candidates += regions.map { $0 + "/" + place }
        }
        let ordered =
            candidates.filter(WindowsZones.ianaZones.contains)
            + candidates.filter { !WindowsZones.ianaZones.contains($0) }
        return ordered.lazy.compactMap { TimeZoneDatabase.rules(named: $0) }.first { standardOffset($0) == offset }
    }

    /// `(UTC+01:00) Amsterdam, Berlin`, `(GMT-05:00) Eastern Time`, `UTC+5:30`.
    ///
    /// Only offsets a real zone has: hours up to 14 and minutes up to 59, each one or two ASCII digits. Anything
    /// else (`UTC+01:35791395`, `UTC+01:75`) is not a display name, and the zone is reported as unknown rather
    /// than moving the event by decades or overflowing.
    private static func displayOffset(_ name: String) -> Int? {
        var text = Substring(name)
        if text.hasPrefix("(") { text = text.dropFirst() }
        guard text.hasPrefix("UTC") || text.hasPrefix("GMT") else { return nil }
        text = text.dropFirst(3)
        guard let sign = text.first, sign == "+" || sign == "-" else {
            return text.isEmpty || text.first == ")" ? 0 : nil
        }
        text = text.dropFirst()
        let digits = text.prefix { $0.isASCII && ($0.isNumber || $0 == ":") }
        let fields = digits.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(fields.count), fields.allSatisfy({ (1...2).contains($0.count) }),
            let hours = Int(fields[0]), hours <= 14
        else { return nil }
        let minutes = fields.count > 1 ? Int(fields[1]) ?? 60 : 0
        guard minutes < 60 else { return nil }
        return (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
    }
}
