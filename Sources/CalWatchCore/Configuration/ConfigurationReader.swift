import Foundation
import Yams

/// The largest value each setting takes. Generous for any real use; what they stop is a value that overflows the
/// planner's arithmetic or a configuration that asks for unbounded work.
public enum ConfigurationLimits {
    public static let day: Int64 = 86_400
    static let horizon = 1830 * day
    /// A reminder's offset, a snooze, a filter's `offsets:`.
    public static let reminderOffset = 366 * day
    static let liveActivityLead = 7 * day
    static let liveActivityUpdate = day
    static let liveActivityDuration = 31 * day
    static let flightLead = 2 * day
    /// Time to get ready before leaving (`prep:`).
    static let prep: Int64 = 12 * 3600
    /// How long anything is kept.
    public static let keep = 36_500 * day
    static let sinks = 64
}

/// Walks the YAML nodes of a configuration file into a `Configuration`, noting every problem with its key and line
/// and going on, so one run of `calwatch check` lists them all.
final class ConfigurationReader {
    typealias Limits = ConfigurationLimits

    let paths: PathExpander
    private(set) var problems: [ConfigurationProblem] = []

    /// What `meetings.providers:` declared, for `rules:` to accept their names.
    var configuredProviders: [MeetingProvider] = []
    /// The kinds of sink the program offers; `nil`: `sinks:` is not read (a command that delivers nothing).
    let sinkKinds: SinkKinds?
    /// The kinds of calendar on a server the program offers.
    let sourceKinds: SourceKinds
    /// Earlier spellings of `serve: listen:` met in the file, reconciled with `serve:` once it is read.
    var earlierServeListens: [(Node, String, ServeSettings.Address)] = []

    init(paths: PathExpander, sinks: SinkKinds?, sources: SourceKinds) {
        self.paths = paths
        self.sinkKinds = sinks
        self.sourceKinds = sources
    }

    func read(_ root: Node, into configuration: inout Configuration) {
        if case .scalar(let scalar) = root, scalar.string.isEmpty || root.null != nil { return }  // an empty file
        guard
            let keys = mapping(
                root, at: nil,
                known: [
                    "calendars", "timezone", "me", "horizon", "reminders", "liveActivity", "flights", "state", "sinks",
                    "rules", "quietHours", "meetings", "instance", "metrics", "places", "travel", "todos", "day",
                    "fleet", "classify", "serve", "passes", "accounts",
                ])
        else { return }
        var sinks: [(SinkSettings, ConfigurationSection)] = []
        // Before `rules:`, whose `services:` may name them.
        if let (_, value) = keys["meetings"] { configuration.meetingProviders = readMeetings(value) }
        // A file with accounts and no `calendars:` reads the accounts' calendars, not also the default folder.
        if keys["accounts"] != nil && keys["calendars"] == nil { configuration.calendars = [] }
        for (key, (keyNode, value)) in keys {
            switch key {
            case "meetings": break
            case "calendars": readCalendars(value, into: &configuration)
            case "accounts": readAccounts(value, into: &configuration)
            case "timezone":
                guard let name = string(value, at: key) else { break }
                if TimeZoneDatabase.rules(named: name) == nil && WindowsZones.ianaName(for: name) == nil {
                    note(value, key, "'\(name)' is not a known zone; use an IANA name such as Europe/Berlin")
                } else {
                    configuration.timeZone = name
                }
            case "me":
                configuration.me = list(value, at: key).compactMap { item in
                    string(item.node, at: item.key).map { address in
                        var address = address.lowercased()
                        if address.hasPrefix("mailto:") { address.removeFirst(7) }
                        return address
                    }
                }
            case "horizon":
                if let seconds = duration(value, at: key, positive: true, atMost: Limits.horizon) {
                    configuration.planner.horizon = seconds
                }
            case "todos":
                if let on = bool(value, at: key) { configuration.planner.includeTodos = on }
            case "reminders": readReminders(value, into: &configuration.planner)
            case "liveActivity": readLiveActivity(value, into: &configuration.planner)
            case "flights": readFlights(value, into: &configuration.flights)
            case "passes":
                configuration.passes = list(value, at: key).compactMap { path($0.node, at: $0.key) }
            case "state":
                if let path = path(value, at: key) { configuration.statePath = path }
            case "sinks": (sinks, configuration.sinkLines) = readSinks(value)
            case "metrics": readMetrics(value, into: &configuration.metrics)
            case "serve": readServe(value, into: &configuration.serve)
            case "instance":
                guard let name = string(value, at: key) else { break }
                if name.isEmpty || name.count > 200 || name.contains(where: \.isNewline) {
                    note(value, key, "must be one line of 1 to 200 characters, such as laptop-anna or rooms@host1")
                } else {
                    configuration.instance = name
                }
            case "rules": configuration.planner.rules = readRules(value)
            case "classify": configuration.kindRules = readKindRules(value)
            case "quietHours": configuration.planner.quietHours = readQuietHours(value)
            case "places": configuration.places = readPlaces(value)
            case "travel": readTravel(value, into: &configuration.travel)
            case "day": configuration.planner.day = readDay(value)
            case "fleet": configuration.fleetAccess = readFleetAccess(value)
            default: note(keyNode, key, "is not a configuration key")
            }
        }
        reconcileServe(&configuration)
        // What each sink takes from the rest of the file (`instance:`, `serve:`), wherever it stands in it.
        if keys["sinks"] != nil {
            configuration.sinks = sinks.map { sink, entry in
                var settled = sink
                settled.kind.settle(in: configuration, entry: entry)
                return settled
            }
        }
    }

    func note(_ node: Node, _ key: String?, _ message: String) {
        problems.append(
            ConfigurationProblem(line: node.mark?.line, column: node.mark?.column, key: key, message: message))
    }

    static func describe(_ node: Node) -> String {
        switch node {
        case .mapping: "a section (key: value pairs)"
        case .sequence: "a list"
        case .scalar: node.null != nil ? "nothing" : "'\(node.string ?? "")'"
        case .alias: "an alias"
        }
    }

    /// The keys of a section, each with its key node (for its line); unknown keys are noted. `nil` when the
    /// node is not a section. `known: nil` accepts any key (the caller checks them later).
    func mapping(
        _ node: Node, at path: String?, known: [String]?
    ) -> [String: (key: Node, value: Node)]? {
        guard case .mapping(let mapping) = node else {
            note(node, path, "should be a section of key: value pairs, not \(Self.describe(node))")
            return nil
        }
        var keys: [String: (key: Node, value: Node)] = [:]
        for (key, value) in mapping {
            if let name = key.string, name != "<<" { keys[name] = (key, value) }
        }
        // YAML merge keys (`<<: *defaults`, or a list of them): their keys, where the section does not set its own.
        for (key, value) in mapping where key.string == "<<" {
            for case .mapping(let merged) in value.sequence.map(Array.init) ?? [value] {
                for (mergedKey, mergedValue) in merged {
                    if let name = mergedKey.string, keys[name] == nil { keys[name] = (mergedKey, mergedValue) }
                }
            }
        }
        if let known { keys = rejectUnknown(keys, known: known, at: path) }
        return keys
    }

    /// Notes every key not in `known`, and returns the others.
    @discardableResult
    func rejectUnknown(
        _ keys: [String: (key: Node, value: Node)], known: [String], at path: String?
    ) -> [String: (key: Node, value: Node)] {
        keys.filter { name, nodes in
            if known.contains(name) { return true }
            note(
                nodes.key, path.map { $0 + "." + name } ?? name,
                "is not a known key here" + Self.suggestion(for: name, among: known))
            return false
        }
    }

    /// "; did you mean X?" for a key one or two edits from a known one, or the list of known keys.
    static func suggestion(for name: String, among known: [String]) -> String {
        if let close = known.first(where: { editDistance($0.lowercased(), name.lowercased()) <= 2 }) {
            return "; did you mean `\(close)`?"
        }
        return "; the keys here are " + known.joined(separator: ", ")
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        // One row of the Levenshtein table at a time.
        var row = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var diagonal = row[0]
            row[0] = i + 1
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = min(above + 1, row[j] + 1, diagonal + (x == y ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }

    /// A list's items with their key paths; one value where a list is expected counts as a list of one unless
    /// `single` is false.
    func list(_ node: Node, at path: String, single: Bool = true) -> [(node: Node, key: String)] {
        switch node {
        case .sequence(let sequence):
            return sequence.enumerated().map { ($1, "\(path)[\($0)]") }
        case .scalar where single && node.null == nil:
            return [(node, path)]
        default:
            note(node, path, "should be a list, not \(Self.describe(node))")
            return []
        }
    }

    func string(_ node: Node, at path: String) -> String? {
        guard case .scalar(let scalar) = node, node.null == nil else {
            note(node, path, "should be a value, not \(Self.describe(node))")
            return nil
        }
        return scalar.string
    }

    func bool(_ node: Node, at path: String) -> Bool? {
        guard case .scalar = node, let value = node.bool else {
            note(node, path, "should be true or false, not \(Self.describe(node))")
            return nil
        }
        return value
    }

    /// A whole number within `range`; noted at `path` when outside it.
    func integer(_ node: Node, at path: String, in range: ClosedRange<Int>) -> Int? {
        guard let value = integer(node, at: path) else { return nil }
        guard range.contains(value) else {
            note(node, path, "must be from \(range.lowerBound) to \(range.upperBound)")
            return nil
        }
        return value
    }

    func integer(_ node: Node, at path: String) -> Int? {
        guard case .scalar = node, let value = node.int else {
            note(node, path, "should be a whole number, not \(Self.describe(node))")
            return nil
        }
        return value
    }

    /// A duration no longer than `atMost`: every duration in the configuration has a bound, so that no value
    /// (`9223372036854775807s`) passes `check` and then overflows when the planner adds it to an instant.
    func duration(_ node: Node, at path: String, positive: Bool = false, atMost: Int64) -> Int64? {
        guard let text = string(node, at: path) else { return nil }
        guard let seconds = DurationText.seconds(text) else {
            note(node, path, "'\(text)' is not a duration; write it like 45s, 30m, 2h, 60d or 1h30m")
            return nil
        }
        if positive && seconds == 0 {
            note(node, path, "must be longer than 0s")
            return nil
        }
        if seconds > atMost {
            note(node, path, "'\(text)' is longer than the most calwatch accepts here, \(DurationText.text(atMost))")
            return nil
        }
        return seconds
    }

    func choice<Choice: RawRepresentable & CaseIterable>(
        _ node: Node, at path: String, of: Choice.Type
    ) -> Choice? where Choice.RawValue == String {
        guard let text = string(node, at: path) else { return nil }
        guard let value = Choice(rawValue: text) else {
            note(
                node, path,
                "'\(text)' is not one of " + Choice.allCases.map(\.rawValue).joined(separator: ", "))
            return nil
        }
        return value
    }

    func path(_ node: Node, at key: String, text: String? = nil) -> String? {
        guard let raw = text ?? string(node, at: key) else { return nil }
        guard !raw.isEmpty else {
            note(node, key, "is an empty path")
            return nil
        }
        switch paths.expand(raw) {
        case .success(let path): return path
        case .failure(let problem):
            note(node, key, "'\(raw)' \(problem)")
            return nil
        }
    }
}
