/// Builds zone rules from a calendar's own VTIMEZONE, expanding each observance's onsets.
enum VTimeZoneRules {
    /// Onsets are generated up to this year; VTIMEZONE rules are only ever projections of current law.
    static let lastYear = 2200

    static func build(_ definition: TimeZoneDefinition) -> ZoneRules? {
        var transitions: [(at: Int64, offsetAfter: Int)] = []
        let limit = LocalDateTime(lastYear, 1, 1)
        for observance in definition.observances {
            var onsets = [observance.start] + observance.recurrenceDates
            // Only yearly rules: every zone's law is, and libical steps an HOURLY observance rule from 1601 an hour
            // at a time through ICU (17 s for one found by the fuzzer). Another rule leaves DTSTART and RDATE.
            if let text = observance.recurrenceRule, let rule = RecurrenceRuleText(text), rule.frequency == "YEARLY",
                let iterator = RecurrenceIterator(rule: rule.iterable, start: observance.start, isDate: false)
            {
                var produced = 0
                while let onset = iterator.next(), onset < limit, produced < 1000 {
                    // UNTIL in a VTIMEZONE is UTC (RFC 5545 §3.6.5); the onset is wall time in TZOFFSETFROM.
                    if let until = rule.until, case .dateTime(let wall, let reference) = until {
                        let onsetUTC = onset.secondsAsUTC - Int64(observance.offsetFrom)
                        let untilSeconds =
                            reference == .utc ? wall.secondsAsUTC : wall.secondsAsUTC - Int64(observance.offsetFrom)
                        if onsetUTC > untilSeconds { break }
                    } else if let until = rule.until, onset.date > until.date {
                        break
                    }
                    if let count = rule.count, produced >= count { break }
                    onsets.append(onset)
                    produced += 1
                }
            }
            for onset in onsets {
                transitions.append((onset.secondsAsUTC - Int64(observance.offsetFrom), observance.offsetTo))
            }
        }
        guard !transitions.isEmpty else { return nil }
        transitions.sort { $0.at < $1.at }
        let first = definition.observances.min { $0.start < $1.start }!
        return ZoneRules(identifier: definition.tzid, initialOffset: first.offsetFrom, transitions: transitions)
    }
}
