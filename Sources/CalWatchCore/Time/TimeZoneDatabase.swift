import Foundation

/// IANA zone rules from the system's zone data, built once per zone and shared by every calendar.
public enum TimeZoneDatabase {
    /// Transitions are tabulated over this span; outside it the nearest offset holds.
    static let tabulatedYears = 1900...2200
    private static let cache = Locked<[String: ZoneRules?]>([:])

    /// The rules for an IANA zone name, or `nil` when the system does not know it.
    public static func rules(named name: String) -> ZoneRules? {
        // The longest IANA name has 32 characters; a longer TZID from a calendar is neither looked up nor kept.
        guard name.utf8.count <= 64 else { return nil }
        if let cached = cache.withLock({ $0[name] }) { return cached }
        let built = build(name)
        // Only zones are kept: a calendar can name any number of zones that do not exist, and a daemon reading a
        // feed that invents new ones would keep every one of them.
        if built != nil { cache.withLock { $0[name] = built } }
        return built
    }

    /// The zone the system is set to (`TZ`, else `/etc/localtime`), as an IANA name.
    public static var systemZoneName: String {
        if let tz = ProcessInfo.processInfo.environment["TZ"], !tz.isEmpty {
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if rules(named: name) != nil { return name }
        }
        // Read afresh: Foundation keeps the zone it found first, and a daemon must see the system's zone change.
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/etc/localtime"),
            let range = target.range(of: "zoneinfo/")
        {
            let name = String(target[range.upperBound...])
            if rules(named: name) != nil { return name }
        }
        return TimeZone.current.identifier
    }

    private static func build(_ name: String) -> ZoneRules? {
        if ["UTC", "Z", "GMT", "Etc/UTC", "Etc/GMT", "UCT", "Zulu", "Etc/Zulu", "Universal"].contains(name) {
            return ZoneRules(identifier: name == "Z" ? "UTC" : name, fixedOffset: 0)
        }
        // Foundation also accepts "GMT+0100" and abbreviations such as "PST"; only real IANA names count here.
        guard isIANAName(name), let zone = TimeZone(identifier: name) else { return nil }
        let first = Date(timeIntervalSince1970: Double(yearStart(tabulatedYears.lowerBound)))
        let last = Date(timeIntervalSince1970: Double(yearStart(tabulatedYears.upperBound)))
        var transitions: [(at: Int64, offsetAfter: Int)] = []
        var cursor = first
        while let next = zone.nextDaylightSavingTimeTransition(after: cursor), next < last {
            transitions.append((Int64(next.timeIntervalSince1970), zone.secondsFromGMT(for: next)))
            cursor = next
        }
        return ZoneRules(
            identifier: zone.identifier, initialOffset: zone.secondsFromGMT(for: first), transitions: transitions)
    }

    /// Whether a name is an IANA zone: `Region/City`, or a name the system's zoneinfo holds (`EST5EDT`, `CET`).
    private static func isIANAName(_ name: String) -> Bool {
        guard !name.isEmpty, !name.contains(".."), !name.hasPrefix("/"), name.allSatisfy({ $0.isASCII }) else {
            return false
        }
        if name.contains("/") { return true }
        return FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/" + name)
    }

    private static func yearStart(_ year: Int) -> Int64 {
        CalendarDate(year: year, month: 1, day: 1).daysSinceEpoch * 86_400
    }
}
