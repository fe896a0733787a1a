/// An RRULE split into the parts calwatch handles itself (`UNTIL`, `COUNT`) and the rest, which libical iterates.
public struct RecurrenceRuleText: Hashable, Sendable {
    /// The rule without `UNTIL`, as libical will iterate it.
    public var iterable: String
    /// `UNTIL`, applied by the expander (see `RecurrenceIterator`).
    public var until: DateValue?
    /// `COUNT`, counted by the expander so that DTSTART counts as the first instance (RFC 5545 §3.3.10).
    public var count: Int?
    /// `FREQ`, upper-case.
    public var frequency: String

    /// Splits a rule as libical (or a repair) wrote it; `nil` when it has no FREQ.
    public init?(_ text: String) {
        var kept: [Substring] = []
        var until: DateValue?
        var count: Int?
        var frequency = ""
        for part in text.split(separator: ";") {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard pieces.count == 2 else { continue }
            switch pieces[0] {
            case "UNTIL": until = DateValue(icalText: pieces[1], reference: .floating)
            case "COUNT": count = Int(pieces[1])
            case "FREQ":
                frequency = String(pieces[1])
                kept.append(part)
            default: kept.append(part)
            }
        }
        guard !frequency.isEmpty else { return nil }
        self.iterable = kept.joined(separator: ";")
        self.until = until
        self.count = count
        self.frequency = frequency
    }

    /// The RRULE values of one component as written, unfolded, in order (nested components have none).
    static func written(in bytes: ArraySlice<UInt8>) -> [String] {
        WrittenProperties.named("RRULE", in: bytes).map(\.value)
    }

    /// libical's reading of a rule with what it lost put back from the rule as written: an UNTIL libical cannot
    /// hold (year 0: dropped, and the series would never end) and a BYDAY ordinal past its range (500MO is read
    /// as -12MO), so that the expander judges what the calendar says. Only those two parts are taken from the
    /// written text; the rest is libical's (case and order normalised, repairs applied).
    static func restoring(_ parsed: String, from written: String) -> String {
        func parts(_ text: String) -> [(name: String, value: Substring)] {
            text.split(separator: ";").compactMap { part in
                let pieces = part.split(separator: "=", maxSplits: 1)
                guard pieces.count == 2 else { return nil }
                return (pieces[0].uppercased().filter { !$0.isWhitespace }, pieces[1])
            }
        }
        let original = parts(written)
        var result = parts(parsed)
        var changed = false
        if let until = original.first(where: { $0.name == "UNTIL" }), !result.contains(where: { $0.name == "UNTIL" }) {
            result.append(("UNTIL", until.value))
            changed = true
        }
        if let byDay = original.first(where: { $0.name == "BYDAY" }),
            let index = result.firstIndex(where: { $0.name == "BYDAY" }),
            result[index].value.uppercased() != byDay.value.uppercased().filter({ !$0.isWhitespace })
        {
            result[index].value = Substring(byDay.value.uppercased())
            changed = true
        }
        return changed ? result.map { "\($0.name)=\($0.value)" }.joined(separator: ";") : parsed
    }

    /// The first part whose value is outside what RFC 5545 allows (`BYDAY 500MO: ordinals run from -53 to 53`), or
    /// `nil`: libical wraps such values into other, valid ones.
    var outOfRange: String? {
        for part in iterable.split(separator: ";") {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard pieces.count == 2, pieces[0] == "BYDAY" else { continue }
            for day in pieces[1].split(separator: ",") {
                let ordinal = day.dropLast(2)
                guard !ordinal.isEmpty else { continue }
                guard let number = Int(ordinal), (1...53).contains(abs(number)) else {
                    return "BYDAY \(day): an ordinal runs from -53 to 53, without 0"
                }
            }
        }
        return nil
    }

    /// Whether instances can come faster than daily, the rules that need a skip ahead and a cap.
    public var isSubDaily: Bool { ["SECONDLY", "MINUTELY", "HOURLY"].contains(frequency) }
}

/// Mends the RRULE mistakes producers make, when only one reading is possible.
///
/// libical drops an RRULE it cannot parse and leaves an `X-LIC-ERROR` behind; turning the series into a single
/// event without a word would lose every later meeting. What one reading can fix is fixed (case, spaces, empty
/// parts, trailing commas, `INTERVAL=0`, ISO 8601 punctuation in `UNTIL`, a `COUNT` of zero or less beside an
/// `UNTIL`); anything else is reported. A repair may only keep or narrow what the producer meant, never widen it:
/// an unknown part (`UNTL=20191023`, a typo of UNTIL) is not dropped, since dropping it would turn a series that
/// ended into one that never does.
public enum RecurrenceRuleRepair {
    static let knownParts: Set<String> = [
        "FREQ", "UNTIL", "COUNT", "INTERVAL", "BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY",
        "BYYEARDAY", "BYWEEKNO", "BYMONTH", "BYSETPOS", "WKST", "RSCALE", "SKIP",
    ]

    /// The outcome of a repair attempt.
    public enum Outcome: Equatable, Sendable {
        case repaired(String, changes: [String])
        case unrepairable(reason: String)
    }

    /// Whether two part names are one typo apart (a letter missing, added, changed or two swapped).
    static func closeTo(_ known: String, _ name: String) -> Bool {
        let a = Array(known)
        let b = Array(name)
        if a.count == b.count {
            let differing = zip(a, b).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
            return differing.count == 1
                || (differing.count == 2 && differing[1] == differing[0] + 1 && a[differing[0]] == b[differing[1]]
                    && a[differing[1]] == b[differing[0]])
        }
        let (long, short) = a.count > b.count ? (a, b) : (b, a)
        guard long.count == short.count + 1 else { return false }
        return (0..<long.count).contains { index in Array(long[..<index] + long[(index + 1)...]) == short }
    }

    /// Tries to turn `text` into a rule libical accepts; `accepts` is libical's judgement.
    public static func repair(_ text: String, accepts: (String) -> Bool) -> Outcome {
        var changes: [String] = []
        var source = text.filter { !$0.isWhitespace }
        if source.uppercased().hasPrefix("RRULE:") {
            source = String(source.dropFirst(6))
            changes.append("removed a repeated 'RRULE:'")
        }
        if source != source.uppercased() {
            source = source.uppercased()
            changes.append("upper-cased")
        }
        var parts: [(name: String, value: String)] = []
        for rawPart in source.split(separator: ";", omittingEmptySubsequences: false) {
            if rawPart.isEmpty {
                changes.append("dropped an empty part")
                continue
            }
            let pieces = rawPart.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pieces.count == 2 else { return .unrepairable(reason: "'\(rawPart)' is not NAME=VALUE") }
            let name = String(pieces[0])
            var value = String(pieces[1])
            guard knownParts.contains(name) else {
                let close = knownParts.first { Self.closeTo($0, name) }
                return .unrepairable(
                    reason: "\(name) is not an RRULE part" + (close.map { " (did you mean \($0)?)" } ?? "")
                        + ", and without it the series could go on for ever")
            }
            let items = value.split(separator: ",", omittingEmptySubsequences: true)
            if items.isEmpty {
                changes.append("dropped empty \(name)")
                continue
            }
            if items.joined(separator: ",") != value {
                value = items.joined(separator: ",")
                changes.append("removed stray commas in \(name)")
            }
            if let existing = parts.first(where: { $0.name == name }) {
                if existing.value == value {
                    changes.append("dropped a repeated \(name)")
                    continue
                }
                return .unrepairable(reason: "\(name) is given twice with different values")
            }
            switch name {
            case "INTERVAL" where value == "0":
                value = "1"
                changes.append("INTERVAL=0 read as 1")
            case "COUNT" where (Int(value) ?? 0) <= 0:
                // Team-calendar plugins write COUNT=-1 beside an UNTIL: the UNTIL alone is what they mean.
                guard source.contains("UNTIL=") else {
                    return .unrepairable(reason: "COUNT=\(value) allows no instance")
                }
                changes.append("COUNT=\(value) beside an UNTIL dropped")
                continue
            case "UNTIL" where value.contains("-") || value.contains(":"):
                value = value.filter { $0 != "-" && $0 != ":" }
                changes.append("UNTIL written without ISO 8601 punctuation")
            default: break
            }
            parts.append((name, value))
        }
        guard parts.contains(where: { $0.name == "FREQ" }) else {
            return .unrepairable(reason: "there is no FREQ, so the repetition is unknown")
        }
        if parts.contains(where: { $0.name == "UNTIL" }) && parts.contains(where: { $0.name == "COUNT" }) {
            return .unrepairable(reason: "UNTIL and COUNT are both given")
        }
        // FREQ first, as libical expects it.
        parts.sort { ($0.name == "FREQ" ? 0 : 1) < ($1.name == "FREQ" ? 0 : 1) }
        let rule = parts.map { "\($0.name)=\($0.value)" }.joined(separator: ";")
        guard accepts(rule) else { return .unrepairable(reason: "libical still cannot read '\(rule)'") }
        return .repaired(rule, changes: changes)
    }
}
