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
    private var configuredProviders: [MeetingProvider] = []
    /// The kinds of sink the program offers; `nil`: `sinks:` is not read (a command that delivers nothing).
    let sinkKinds: SinkKinds?
    /// Earlier spellings of `serve: listen:` met in the file, reconciled with `serve:` once it is read.
    var earlierServeListens: [(Node, String, ServeSettings.Address)] = []

    init(paths: PathExpander, sinks: SinkKinds?) {
        self.paths = paths
        self.sinkKinds = sinks
    }

    func read(_ root: Node, into configuration: inout Configuration) {
        if case .scalar(let scalar) = root, scalar.string.isEmpty || root.null != nil { return }  // an empty file
        guard
            let keys = mapping(
                root, at: nil,
                known: [
                    "calendars", "timezone", "me", "horizon", "reminders", "liveActivity", "flights", "state", "sinks",
                    "rules", "quietHours", "meetings", "instance", "metrics", "places", "travel", "todos", "day",
                    "fleet", "classify", "serve",
                ])
        else { return }
        var sinks: [(SinkSettings, ConfigurationSection)] = []
        // Before `rules:`, whose `services:` may name them.
        if let (_, value) = keys["meetings"] { configuration.meetingProviders = readMeetings(value) }
        for (key, (keyNode, value)) in keys {
            switch key {
            case "meetings": break
            case "calendars":
                configuration.calendars = []
                for item in list(value, at: key) {
                    if case .mapping = item.node {
                        if let feed = readFeed(item.node, at: item.key) { configuration.feeds.append(feed) }
                    } else if let path = path(item.node, at: item.key) {
                        configuration.calendars.append(path)
                    }
                }
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

    // MARK: Sections

    private func readReminders(_ node: Node, into planner: inout PlannerConfiguration) {
        let section = "reminders"
        guard
            let keys = mapping(
                node, at: section, known: ["offsets", "anchor", "allDay", "cancelled", "declined", "calendarAlarms"])
        else { return }
        for (key, (_, value)) in keys {
            let path = section + "." + key
            switch key {
            case "offsets":
                planner.reminderOffsets = list(value, at: path).compactMap {
                    duration($0.node, at: $0.key, atMost: Limits.reminderOffset)
                }
            case "anchor":
                guard let anchors = mapping(value, at: path, known: PlanningFacts.Kind.allCases.map(\.rawValue))
                else { break }
                for (kindName, (_, anchorNode)) in anchors {
                    guard let kind = PlanningFacts.Kind(rawValue: kindName),
                        let anchor = choice(anchorNode, at: path + "." + kindName, of: ReminderDetail.Anchor.self)
                    else { continue }
                    planner.anchors[kind] = anchor
                }
            case "allDay": if let flag = bool(value, at: path) { planner.includeAllDay = flag }
            case "cancelled": if let flag = bool(value, at: path) { planner.includeCancelled = flag }
            case "declined": if let flag = bool(value, at: path) { planner.includeDeclined = flag }
            case "calendarAlarms": if let flag = bool(value, at: path) { planner.calendarAlarms = flag }
            default: break
            }
        }
    }

    /// `rules:`, a list of sections, first match wins. A rule after one without conditions, or one whose service is
    /// not a known one, can never apply and is reported.
    private func readRules(_ node: Node) -> [ReminderRule] {
        var rules: [ReminderRule] = []
        var catchAll: Int?
        for (item, path) in list(node, at: "rules", single: false) {
            guard
                let keys = mapping(
                    item, at: path,
                    known: [
                        "calendars", "kinds", "services", "summary", "offsets", "allDay", "liveActivity", "attendance",
                        "quietHours", "anchor", "travelMode", "travelTime", "prep", "agendaAt", "travelZone",
                        "conflicts",
                    ])
            else { continue }
            var rule = ReminderRule()
            rule.line = item.mark?.line
            for (key, (_, value)) in keys {
                let at = path + "." + key
                switch key {
                case "calendars": rule.calendars = list(value, at: at).compactMap { string($0.node, at: $0.key) }
                case "kinds":
                    rule.kinds = Set(
                        list(value, at: at).compactMap { choice($0.node, at: $0.key, of: PlanningFacts.Kind.self) })
                case "services":
                    let known = Array(Set(configuredProviders.map(\.id) + MeetingProvider.all.map(\.id))).sorted()
                    rule.services = Set(
                        list(value, at: at).compactMap { entry -> String? in
                            guard let name = string(entry.node, at: entry.key) else { return nil }
                            if !known.contains(name) {
                                note(
                                    entry.node, entry.key,
                                    "'\(name)' is not a meeting service calwatch knows, so this "
                                        + "rule can never match; the services are " + known.joined(separator: ", "))
                            }
                            return name
                        })
                case "summary": rule.summary = summaryPattern(value, at: at)
                case "offsets":
                    rule.offsets = list(value, at: at).compactMap {
                        duration($0.node, at: $0.key, atMost: Limits.reminderOffset)
                    }
                case "allDay": rule.allDay = readClockTimeReminder(value, at: at)
                case "liveActivity": rule.liveActivity = bool(value, at: at)
                case "attendance":
                    let answers = ["accepted", "tentative", "needs-action", "declined"]
                    rule.attendance = Set(
                        list(value, at: at).compactMap { entry -> String? in
                            guard let name = string(entry.node, at: entry.key) else { return nil }
                            guard answers.contains(name) else {
                                note(
                                    entry.node, entry.key, "'\(name)' is not one of " + answers.joined(separator: ", "))
                                return nil
                            }
                            return name.uppercased()
                        })
                case "quietHours": rule.quietHours = bool(value, at: at)
                case "anchor": rule.anchor = choice(value, at: at, of: ReminderDetail.Anchor.self)
                case "travelMode": rule.travelMode = choice(value, at: at, of: TravelSettings.Mode.self)
                case "travelTime": rule.travelTime = duration(value, at: at, positive: true, atMost: Limits.flightLead)
                case "prep": rule.prep = duration(value, at: at, atMost: Limits.prep)
                case "agendaAt": rule.agendaAt = clockTime(value, at: at)
                case "travelZone": rule.travelZone = bool(value, at: at)
                case "conflicts": rule.conflicts = bool(value, at: at)
                default: break
                }
            }
            if let catchAll {
                note(
                    item, path, "can never apply: rules[\(catchAll)] before it has no condition and matches everything")
            } else if rule.matchesEverything {
                catchAll = rules.count
            }
            rules.append(rule)
        }
        return rules
    }

    /// `{ at: 18:00, daysBefore: 1 }`.
    private func readClockTimeReminder(_ node: Node, at path: String) -> ClockTimeReminder? {
        guard let keys = mapping(node, at: path, known: ["at", "daysBefore"]) else { return nil }
        var reminder = ClockTimeReminder(hour: 9, minute: 0, daysBefore: 0)
        for (key, (_, value)) in keys {
            switch key {
            case "at":
                guard let minutes = clockTime(value, at: path + ".at") else { return nil }
                reminder.hour = minutes / 60
                reminder.minute = minutes % 60
            case "daysBefore":
                guard let days = integer(value, at: path + ".daysBefore") else { return nil }
                guard (0...31).contains(days) else {
                    note(value, path + ".daysBefore", "should be from 0 to 31")
                    return nil
                }
                reminder.daysBefore = days
            default: break
            }
        }
        return reminder
    }

    /// `{ from: 22:00, to: 07:00, then: defer|drop }`.
    private func readQuietHours(_ node: Node) -> QuietHours? {
        guard let keys = mapping(node, at: "quietHours", known: ["from", "to", "then"]) else { return nil }
        var from: Int?
        var to: Int?
        var deferToEnd = true
        for (key, (_, value)) in keys {
            switch key {
            case "from": from = clockTime(value, at: "quietHours.from")
            case "to": to = clockTime(value, at: "quietHours.to")
            case "then":
                guard let text = string(value, at: "quietHours.then") else { break }
                guard text == "defer" || text == "drop" else {
                    note(value, "quietHours.then", "'\(text)' is not one of defer, drop")
                    break
                }
                deferToEnd = text == "defer"
            default: break
            }
        }
        guard let from, let to else {
            note(node, "quietHours", "needs both from: and to: (like from: 22:00, to: 07:00)")
            return nil
        }
        if from == to { note(node, "quietHours", "from: and to: are the same time, so it is never quiet") }
        return QuietHours(from: from, to: to, deferToEnd: deferToEnd)
    }

    /// `{ agendaAt: 08:00, endingSoon: 5m, conflicts: { minOverlap: 5m, include: [accepted], ahead: 1d },
    /// overruns: true, pendingInvitations: [1d, 2h], travelZone: true }`; `conflicts: false` turns them off.
    private func readDay(_ node: Node) -> DaySettings? {
        var day = DaySettings()
        if node.null != nil { return day }
        guard
            let keys = mapping(
                node, at: "day",
                known: ["agendaAt", "endingSoon", "conflicts", "overruns", "pendingInvitations", "travelZone"])
        else { return nil }
        for (key, (_, value)) in keys {
            let path = "day." + key
            switch key {
            case "agendaAt": day.agendaAt = clockTime(value, at: path)
            case "endingSoon":
                if let seconds = duration(value, at: path, atMost: Limits.liveActivityLead) { day.endingSoon = seconds }
            case "overruns": if let on = bool(value, at: path) { day.overruns = on }
            case "travelZone": if let on = bool(value, at: path) { day.travelZone = on }
            case "pendingInvitations":
                day.pendingInvitations = list(value, at: path).compactMap {
                    duration($0.node, at: $0.key, positive: true, atMost: Limits.reminderOffset)
                }
            case "conflicts":
                if case .scalar = value {
                    if bool(value, at: path) == false { day.conflicts = nil }
                    continue
                }
                guard let settings = mapping(value, at: path, known: ["minOverlap", "include", "ahead"]) else { break }
                var conflicts = DaySettings.Conflicts()
                for (key, (_, value)) in settings {
                    let at = path + "." + key
                    switch key {
                    case "minOverlap":
                        if let seconds = duration(value, at: at, atMost: Limits.day) { conflicts.minOverlap = seconds }
                    case "ahead":
                        if let seconds = duration(value, at: at, atMost: Limits.reminderOffset) {
                            conflicts.ahead = seconds
                        }
                    case "include":
                        conflicts.include = Set(
                            list(value, at: at).compactMap { choice($0.node, at: $0.key, of: DaySettings.Answer.self) })
                    default: break
                    }
                }
                day.conflicts = conflicts
            default: break
            }
        }
        return day
    }

    /// `HH:MM` as minutes after midnight.
    private func clockTime(_ node: Node, at path: String) -> Int? {
        guard let text = string(node, at: path) else { return nil }
        guard let minutes = Self.minutes(text) else {
            note(node, path, "'\(text)' is not a time of day; write it like 07:00 or 22:30")
            return nil
        }
        return minutes
    }

    private func readLiveActivity(_ node: Node, into planner: inout PlannerConfiguration) {
        guard let keys = mapping(node, at: "liveActivity", known: ["lead", "updateEvery", "maxDuration"]) else {
            return
        }
        for (key, (_, value)) in keys {
            let path = "liveActivity." + key
            switch key {
            case "lead":
                if let seconds = duration(value, at: path, atMost: Limits.liveActivityLead) {
                    planner.liveActivityLead = seconds
                }
            case "updateEvery":
                if let seconds = duration(value, at: path, positive: true, atMost: Limits.liveActivityUpdate) {
                    planner.liveActivityUpdateInterval = seconds
                }
            case "maxDuration":
                if let seconds = duration(value, at: path, positive: true, atMost: Limits.liveActivityDuration) {
                    planner.liveActivityMaxDuration = seconds
                }
            default: break
            }
        }
    }

    /// A `summary:` condition: a regular expression, else a problem naming it.
    private func summaryPattern(_ value: Node, at: String) -> SummaryPattern? {
        guard let text = string(value, at: at) else { return nil }
        guard let pattern = SummaryPattern(text) else {
            note(value, at, "'\(text)' is not a regular expression (ICU syntax, as in (?i)standup|sync)")
            return nil
        }
        return pattern
    }

    /// `classify:`, a list of entries each settling what the items it matches are: `kind` and at least one of
    /// `summary` (a regular expression), `calendars` and `uids`.
    private func readKindRules(_ node: Node) -> [KindRule] {
        var rules: [KindRule] = []
        for (item, path) in list(node, at: "classify", single: false) {
            guard let keys = mapping(item, at: path, known: ["kind", "summary", "calendars", "uids"]) else { continue }
            guard let (_, kindNode) = keys["kind"],
                let kind = choice(kindNode, at: path + ".kind", of: PlanningFacts.Kind.self)
            else {
                if keys["kind"] == nil { note(item, path, "needs a kind: flight, meeting or event") }
                continue
            }
            var rule = KindRule(kind: kind)
            rule.line = item.mark?.line
            for (key, (_, value)) in keys {
                let at = path + "." + key
                switch key {
                case "calendars": rule.calendars = list(value, at: at).compactMap { string($0.node, at: $0.key) }
                case "uids": rule.uids = Set(list(value, at: at).compactMap { string($0.node, at: $0.key) })
                case "summary": rule.summary = summaryPattern(value, at: at)
                default: break
                }
            }
            guard !rule.matchesEverything else {
                note(item, path, "would settle every item; give it a summary, calendars or uids to match")
                continue
            }
            rules.append(rule)
        }
        return rules
    }

    /// `meetings: { providers: [...] }`: services of the user's own, each a name, its hosts (each with its
    /// subdomains) and optionally the path prefixes that join and the words LOCATION uses for it.
    private func readMeetings(_ node: Node) -> [MeetingProvider] {
        guard let keys = mapping(node, at: "meetings", known: ["providers"]), let (_, list) = keys["providers"] else {
            return []
        }
        var providers: [MeetingProvider] = []
        for (index, entry) in self.list(list, at: "meetings.providers", single: false).enumerated() {
            let at = "meetings.providers[\(index)]"
            guard let fields = mapping(entry.node, at: at, known: ["name", "hosts", "join", "names"]) else { continue }
            guard let (_, nameNode) = fields["name"], let name = string(nameNode, at: at + ".name") else {
                note(entry.node, at, "needs a name: the service name events and hooks show, such as acme-video")
                continue
            }
            guard !name.isEmpty, name.count <= 40,
                name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") })
            else {
                note(nameNode, at + ".name", "'\(name)' should be lower-case letters, digits and dashes (acme-video)")
                continue
            }
            var provider = MeetingProvider(id: name, hosts: [])
            for (key, (_, value)) in fields {
                let path = at + "." + key
                let values = self.list(value, at: path).compactMap { string($0.node, at: $0.key).map { ($0, value) } }
                switch key {
                case "hosts":
                    for (host, _) in values {
                        let lower = host.lowercased()
                        if lower.contains("."),
                            lower.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }),
                            !lower.hasPrefix("."), !lower.hasSuffix(".")
                        {
                            provider.hosts.append(lower)
                        } else {
                            note(
                                value, path,
                                "'\(host)' is not a host name; write it as video.example.org, without https:// or a path"
                            )
                        }
                    }
                case "join":
                    for (prefix, _) in values {
                        if prefix.hasPrefix("/") {
                            provider.join.append(prefix.lowercased())
                        } else {
                            note(value, path, "'\(prefix)' should be a path prefix starting with /, such as /room/")
                        }
                    }
                case "names": provider.names = values.map { $0.0.lowercased() }.filter { !$0.isEmpty }
                default: break
                }
            }
            if provider.hosts.isEmpty {
                note(entry.node, at, "needs hosts: the host names its join links use, such as [video.example.org]")
                continue
            }
            if provider.names.isEmpty { provider.names = [name] }
            providers.append(provider)
        }
        configuredProviders = providers
        return providers
    }

    /// `places:`: each a name, and any of its point (`at: { lat, lon }`), LOCATION patterns (`match`), a fixed
    /// travel time and the hours the user is there.
    private func readPlaces(_ node: Node) -> [PlaceSettings] {
        var places: [PlaceSettings] = []
        for (index, entry) in list(node, at: "places", single: false).enumerated() {
            let at = "places[\(index)]"
            guard
                let fields = mapping(entry.node, at: at, known: ["name", "at", "match", "travelTime", "hours", "prep"])
            else { continue }
            guard let (_, nameNode) = fields["name"], let name = string(nameNode, at: at + ".name"),
                !name.trimmingCharacters(in: .whitespaces).isEmpty, name.count <= 200
            else {
                note(entry.node, at, "needs a name of 1 to 200 characters, such as Home or Office")
                continue
            }
            var place = PlaceSettings(name: name)
            for (key, (_, value)) in fields {
                let path = at + "." + key
                switch key {
                case "at":
                    guard let point = mapping(value, at: path, known: ["lat", "lon"]) else { break }
                    let degrees = ["lat", "lon"].map { key in
                        point[key].flatMap { string($0.1, at: path + "." + key) }.flatMap(Double.init)
                    }
                    if let latitude = degrees[0], let longitude = degrees[1],
                        let geo = GeoPoint(latitude: latitude, longitude: longitude)
                    {
                        place.at = geo
                    } else {
                        note(
                            value, path,
                            "should be { lat: 52.5208, lon: 13.4094 }: degrees, lat -90 to 90, lon -180 to 180")
                    }
                case "match":
                    place.match = list(value, at: path).compactMap { string($0.node, at: $0.key) }.filter {
                        !$0.isEmpty
                    }
                case "travelTime": place.travelTime = duration(value, at: path, atMost: Limits.flightLead)
                case "prep": place.prep = duration(value, at: path, atMost: Limits.prep)
                case "hours":
                    guard let text = string(value, at: path) else { break }
                    let ends = text.split(separator: "-").map { String($0).trimmingCharacters(in: .whitespaces) }
                    // `24:00` ends a span at midnight (ISO 8601 and OpenStreetMap's opening hours allow it), so
                    // `00:00-24:00` is always.
                    if ends.count == 2, let from = Self.minutes(ends[0]),
                        let to = ends[1] == "24:00" ? 24 * 60 : Self.minutes(ends[1]), from != to
                    {
                        place.hours = .init(from: from, to: to)
                    } else {
                        note(
                            value, path,
                            "'\(text)' is not a span of clock hours; write it like 18:00-08:00, or 00:00-24:00 for "
                                + "always")
                    }
                default: break
                }
            }
            places.append(place)
        }
        return places
    }

    /// `10%` or a duration, added to a travel time.
    private func buffer(_ node: Node, at path: String) -> TravelSettings.Buffer? {
        guard let text = string(node, at: path) else { return nil }
        if text.hasSuffix("%"), let percent = Int(text.dropLast()), (0...200).contains(percent) {
            return .percent(percent)
        }
        return duration(node, at: path, atMost: Limits.flightLead).map { .seconds($0) }
    }

    /// `travel:`: the mode, a buffer (`10%` or a duration) on a routing engine's answers, and the engine.
    private func readTravel(_ node: Node, into travel: inout TravelSettings) {
        guard
            let keys = mapping(
                node, at: "travel",
                known: [
                    "mode", "buffer", "fromPreviousWithin", "replanAfter", "routing", "geocoder", "prep", "estimate",
                    "weather",
                ])
        else { return }
        for (key, (_, value)) in keys {
            let path = "travel." + key
            switch key {
            case "mode": if let mode = choice(value, at: path, of: TravelSettings.Mode.self) { travel.mode = mode }
            case "buffer": if let buffer = buffer(value, at: path) { travel.buffer = buffer }
            case "geocoder":
                guard let fields = mapping(value, at: path, known: ["url", "userAgent", "cache"]) else { break }
                guard let (_, urlNode) = fields["url"], let url = string(urlNode, at: path + ".url") else {
                    note(
                        value, path,
                        "needs the url of a Nominatim instance, such as https://nominatim.openstreetmap.org")
                    break
                }
                guard isWebAddress(url, node: urlNode, at: path + ".url") else { break }
                guard let (_, agentNode) = fields["userAgent"], let agent = string(agentNode, at: path + ".userAgent"),
                    agent.contains(where: \.isLetter), agent.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 32 })
                else {
                    note(
                        value, path + ".userAgent",
                        "is needed: a geocoder is asked with a User-Agent naming you, as Nominatim's usage policy asks, "
                            + "such as userAgent: \"calwatch (you@example.com)\"")
                    break
                }
                var geocoder = TravelSettings.Geocoder(url: url, userAgent: agent)
                if let (_, cacheNode) = fields["cache"] {
                    geocoder.cachePath = self.path(cacheNode, at: path + ".cache")
                }
                travel.geocoder = geocoder
            case "fromPreviousWithin":
                if let seconds = duration(value, at: path, atMost: 86_400) { travel.fromPreviousWithin = seconds }
            case "prep": travel.prep = duration(value, at: path, atMost: Limits.prep)
            case "weather":
                guard let fields = mapping(value, at: path, known: ["provider", "url", "requestsPerHour"]) else {
                    break
                }
                var weather = TravelSettings.Weather()
                if let (_, node) = fields["provider"],
                    let provider = choice(node, at: path + ".provider", of: TravelSettings.Weather.Provider.self)
                {
                    weather.provider = provider
                }
                if let (_, node) = fields["url"], let url = string(node, at: path + ".url") {
                    guard isWebAddress(url, node: node, at: path + ".url") else { break }
                    weather.url = url
                }
                if let (_, node) = fields["requestsPerHour"] {
                    guard let count = integer(node, at: path + ".requestsPerHour", in: 1...3600) else { break }
                    weather.requestsPerHour = count
                }
                travel.weather = weather
            case "estimate":
                guard let fields = mapping(value, at: path, known: ["margin"]) else { break }
                if let (_, node) = fields["margin"], let margin = buffer(node, at: path + ".margin") {
                    travel.estimateMargin = margin
                }
            case "replanAfter":
                if let seconds = duration(value, at: path, atMost: 86_400) { travel.replanAfter = seconds }
            case "routing":
                guard
                    let fields = mapping(
                        value, at: path, known: ["engine", "url", "requestsPerHour", "askAgainBefore"])
                else { break }
                guard let (_, engineNode) = fields["engine"],
                    let engine = choice(engineNode, at: path + ".engine", of: TravelSettings.Routing.Engine.self),
                    let (_, urlNode) = fields["url"], let url = string(urlNode, at: path + ".url")
                else {
                    note(value, path, "needs an engine (osrm or valhalla) and its url, such as http://127.0.0.1:5000")
                    break
                }
                guard isWebAddress(url, node: urlNode, at: path + ".url") else { break }
                var routing = TravelSettings.Routing(engine: engine, url: url)
                if let (_, budget) = fields["requestsPerHour"],
                    let count = integer(budget, at: path + ".requestsPerHour")
                {
                    if (1...3600).contains(count) {
                        routing.requestsPerHour = count
                    } else {
                        note(budget, path + ".requestsPerHour", "should be 1 to 3600")
                    }
                }
                if let (_, again) = fields["askAgainBefore"],
                    let seconds = duration(again, at: path + ".askAgainBefore", atMost: 86_400)
                {
                    routing.askAgainBefore = seconds
                }
                travel.routing = routing
            default: break
            }
        }
    }

    /// Whether `url` is an http or https address with a host; noted at `path` when it is not.
    func isWebAddress(_ url: String, node: Node, at path: String) -> Bool {
        if let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
            parsed.host != nil
        {
            return true
        }
        note(node, path, "'\(url)' is not an http or https address")
        return false
    }

    /// `HH:MM` as minutes after midnight, `nil` when it is not a time of day.
    private static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, parts[1].count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]),
            (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        return hour * 60 + minute
    }

    private func readFlights(_ node: Node, into flights: inout FlightLeads) {
        guard let keys = mapping(node, at: "flights", known: ["airportLead", "travelTime", "prep"]) else { return }
        for (key, (_, value)) in keys {
            switch key {
            case "airportLead":
                guard let leads = mapping(value, at: "flights.airportLead", known: ["domestic", "international"])
                else { break }
                for (scope, (_, leadNode)) in leads {
                    guard
                        let seconds = duration(leadNode, at: "flights.airportLead." + scope, atMost: Limits.flightLead)
                    else { continue }
                    if scope == "domestic" { flights.domestic = seconds } else { flights.international = seconds }
                }
            case "travelTime":
                if let seconds = duration(value, at: "flights.travelTime", atMost: Limits.flightLead) {
                    flights.travelTime = seconds
                }
            case "prep": flights.prep = duration(value, at: "flights.prep", atMost: Limits.prep)
            default: break
            }
        }
    }

    /// The sinks, each with its entry, and the line each one's entry starts on, by name.
    private func readSinks(_ node: Node) -> ([(SinkSettings, ConfigurationSection)], [String: Int]) {
        var sinks: [(SinkSettings, ConfigurationSection)] = []
        var names: [String: Int] = [:]
        let items = list(node, at: "sinks", single: false)
        if items.count > Limits.sinks {
            note(node, "sinks", "lists \(items.count) sinks; calwatch runs at most \(Limits.sinks)")
            return ([], [:])
        }
        var read = items.compactMap { item in readSink(item.node, at: item.key) }
        // Unnamed sinks whose default names would be the same (two webhooks on one host): each named with a short
        // hash of what tells them apart as well, which never shows a path that may be a secret.
        let defaults = Dictionary(grouping: read.indices) { read[$0].0.name }
        for (_, indices) in defaults where indices.count > 1 {
            for index in indices where read[index].1["name"] == nil {
                guard let distinction = read[index].0.kind.distinction else { continue }
                read[index].0.name += " #" + String(SHA256.hex(Array(distinction.utf8)).prefix(6))
            }
        }
        for (sink, entry) in read {
            if let line = names[sink.name] {
                entry.note("has the same name as the sink on line \(line) ('\(sink.name)'); give one of them a `name:`")
                continue
            }
            names[sink.name] = entry.node.mark?.line ?? 0
            sinks.append((sink, entry))
        }
        return (sinks, names)
    }

    private func readSink(_ node: Node, at path: String) -> (SinkSettings, ConfigurationSection)? {
        guard let sinkKinds else {
            return nil  // a command that delivers nothing does not read them
        }
        guard let keys = mapping(node, at: path, known: nil) else { return nil }
        let types = sinkKinds.kinds.map { $0.type }.joined(separator: ", ")
        guard let typeNode = keys["type"]?.value else {
            note(node, path, "has no `type:`; write one of \(types)")
            return nil
        }
        guard let type = string(typeNode, at: path + ".type") else { return nil }
        guard let kind = sinkKinds.kind(type) else {
            note(typeNode, path + ".type", "'\(type)' is not a sink type; write one of \(types)")
            return nil
        }
        let entry = ConfigurationSection(
            node: node, keys: rejectUnknown(keys, known: ["type", "name"] + kind.keys, at: path), path: path,
            reader: self)
        let name = entry["name"].flatMap { $0.string() }
        guard let settings = kind.init(entry) else { return nil }
        return (SinkSettings(name: name ?? settings.defaultName, kind: settings), entry)
    }

    /// A `calendars:` entry on a server: a feed `{url: https://…, name: Work, every: 10m}`, or a CalDAV account
    /// `{caldav: https://…, username: me, passwordCommand: [pass, show, dav], every: 5m}`.
    private func readFeed(_ node: Node, at path: String) -> FeedSettings? {
        guard
            let keys = mapping(
                node, at: path, known: ["url", "caldav", "name", "every", "username", "passwordCommand"])
        else { return nil }
        let addressNode: Node
        var kind = FeedSettings.Kind.ics
        switch (keys["url"]?.value, keys["caldav"]?.value) {
        case (let url?, nil):
            addressNode = url
            for key in ["username", "passwordCommand"] where keys[key] != nil {
                note(
                    keys[key]!.key, path + "." + key,
                    "is for CalDAV (`caldav:`); a feed address carries its own secret, or https://user:password@…")
            }
        case (nil, let caldav?):
            addressNode = caldav
            var username: String?
            var command: [String]?
            if let (_, value) = keys["username"] { username = string(value, at: path + ".username") }
            if let (_, value) = keys["passwordCommand"] {
                command = readArgv(
                    value, at: path + ".passwordCommand", example: "[pass, show, nextcloud]",
                    empty: "name the program that prints the password, such as [pass, show, nextcloud]")
            }
            kind = .caldav(username: username, passwordCommand: command)
        case (_?, _?):
            note(node, path, "has both `url:` and `caldav:`; a feed is one .ics address, CalDAV a server: keep one")
            return nil
        case (nil, nil):
            note(
                node, path,
                "has no `url:` or `caldav:`; write the calendar's address, such as webcal://example.org/calendar.ics, "
                    + "or a CalDAV server's, such as caldav: https://cloud.example.org/remote.php/dav/")
            return nil
        }
        let key = path + (kind == .ics ? ".url" : ".caldav")
        guard let address = string(addressNode, at: key) else { return nil }
        let lowered = address.lowercased()
        let schemes = kind == .ics ? ["https://", "http://", "webcal://"] : ["https://", "http://"]
        guard schemes.contains(where: { lowered.hasPrefix($0) }) else {
            note(
                addressNode, key,
                "'\(address)' is not an \(kind == .ics ? "http, https or webcal" : "http or https") address")
            return nil
        }
        var feed = FeedSettings(address: address, kind: kind)
        if let (_, nameNode) = keys["name"] { feed.name = string(nameNode, at: path + ".name") }
        if let (_, everyNode) = keys["every"],
            let seconds = duration(everyNode, at: path + ".every", positive: true, atMost: Limits.day)
        {
            if seconds < 60 && !feed.isLoopback {
                note(
                    everyNode, path + ".every",
                    "polls a server more than once a minute; use 1m or more (only a server on this machine, "
                        + "localhost, may be polled more often)")
            } else {
                feed.every = seconds
            }
        }
        return feed
    }

    private func readMetrics(_ node: Node, into metrics: inout MetricsSettings) {
        guard let keys = mapping(node, at: "metrics", known: ["textfile", "every"]) else { return }
        if let (_, value) = keys["textfile"], let file = path(value, at: "metrics.textfile") {
            if file.hasSuffix(".prom") {
                metrics.textfile = file
            } else {
                note(
                    value, "metrics.textfile",
                    "node_exporter reads only files ending in .prom; name it like "
                        + "/var/lib/prometheus/node-exporter/calwatch.prom")
            }
        }
        if let (_, value) = keys["every"],
            let seconds = duration(value, at: "metrics.every", positive: true, atMost: Limits.day)
        {
            metrics.every = seconds
        }
    }

    /// `on`, `kinds`, `offsets` and `calendars` of a hook, webhook or MQTT sink.
    func readFilters(
        _ keys: [String: (key: Node, value: Node)], at path: String, into filters: inout some EventFilters
    ) {
        if let node = keys["on"]?.value {
            filters.events = Set(
                list(node, at: path + ".on").compactMap { item -> EventType? in
                    guard let text = string(item.node, at: item.key) else { return nil }
                    let bare = text.hasPrefix("calwatch.") ? String(text.dropFirst(9)) : text
                    guard let type = EventType(rawValue: bare) else {
                        note(
                            item.node, item.key,
                            "'\(text)' is not an event type; write one of "
                                + EventType.allCases.map(\.rawValue).joined(separator: ", "))
                        return nil
                    }
                    return type
                })
        }
        if let node = keys["kinds"]?.value {
            filters.kinds = Set(
                list(node, at: path + ".kinds").compactMap { choice($0.node, at: $0.key, of: PlanningFacts.Kind.self) })
        }
        if let node = keys["offsets"]?.value {
            filters.offsets = Set(
                list(node, at: path + ".offsets").compactMap {
                    duration($0.node, at: $0.key, atMost: Limits.reminderOffset)
                })
        }
        if let node = keys["calendars"]?.value {
            filters.calendars = Set(list(node, at: path + ".calendars").compactMap { string($0.node, at: $0.key) })
        }
    }

    /// `serve: {listen: 127.0.0.1:8787}`, `serve: {listen: 0.0.0.0:8787, allowRemote: true, tls: {certificate: …,
    /// key: …}}`, or `serve: off`.
    private func readServe(_ node: Node, into serve: inout ServeSettings) {
        if case .scalar = node {
            if let on = bool(node, at: "serve") { serve.enabled = on }
            return
        }
        guard let keys = mapping(node, at: "serve", known: ["listen", "allowRemote", "tls"]) else { return }
        if let allowNode = keys["allowRemote"]?.value, let allow = bool(allowNode, at: "serve.allowRemote") {
            serve.allowRemote = allow
        }
        if let tlsNode = keys["tls"]?.value,
            let tls = mapping(tlsNode, at: "serve.tls", known: ["certificate", "key"])
        {
            let certificate = tls["certificate"].flatMap { path($0.value, at: "serve.tls.certificate") }
            let key = tls["key"].flatMap { path($0.value, at: "serve.tls.key") }
            if let certificate, let key {
                serve.tls = ServeSettings.TLS(certificate: certificate, key: key)
            } else {
                note(tlsNode, "serve.tls", "names both files, PEM: { certificate: …/cert.pem, key: …/key.pem }")
            }
        }
        guard let listenNode = keys["listen"]?.value, let listen = string(listenNode, at: "serve.listen") else {
            if serve.allowRemote || serve.tls != nil {
                note(node, "serve", "has no listen: for allowRemote: and tls: to apply to")
            }
            return
        }
        if let address = ServeSettings.loopback(listen) {
            serve.listen = address
        } else if let address = ServeSettings.ipv4(listen), serve.allowRemote, serve.tls != nil {
            serve.listen = address
        } else if ServeSettings.ipv4(listen) != nil, serve.allowRemote {
            note(
                listenNode, "serve.listen",
                "'\(listen)' is reached by other machines, and the token would cross the network in the clear: add "
                    + "tls: { certificate: …, key: … }")
        } else if ServeSettings.ipv4(listen) != nil {
            note(
                listenNode, "serve.listen",
                "'\(listen)' is not loopback: to serve other machines add allowRemote: true and tls: { certificate: "
                    + "…, key: … }, or let a reverse proxy with TLS (Caddy, nginx) reach 127.0.0.1")
        } else {
            note(listenNode, "serve.listen", Self.notLoopback(listen))
        }
    }

    static func notLoopback(_ text: String) -> String {
        "'\(text)' is not an IPv4 address and port written plainly, such as 127.0.0.1:8787 (loopback; other "
            + "machines reach it through a reverse proxy with TLS, Caddy or nginx, or serve: allowRemote: with tls:)"
    }

    /// An earlier spelling of `serve: listen:` (a webhook's `answers: listen:`) gives the local server its address
    /// when `serve:` does not, and must agree with it when it does.
    private func reconcileServe(_ configuration: inout Configuration) {
        for (node, path, address) in earlierServeListens {
            if configuration.serve.listen == nil { configuration.serve.listen = address }
            if configuration.serve.listen != address {
                note(
                    node, path,
                    "is \(address), but serve: listens on \(configuration.serve.listen!); the one server takes the "
                        + "answers: remove this listen:")
            }
        }
    }

    /// A program and its arguments as a list (never one text for a shell), its program given as a relative path
    /// found next to the configuration, like every other path in it.
    func readArgv(_ node: Node, at key: String, example: String, empty: String) -> [String]? {
        if case .scalar = node, let text = node.string, text.contains(" ") {
            note(
                node, key,
                "is one text with spaces; programs never run through a shell, so write the program and each "
                    + "argument as a list item, such as \(example)")
            return nil
        }
        var argv = list(node, at: key).compactMap { string($0.node, at: $0.key) }
        guard let program = argv.first, !program.isEmpty else {
            note(node, key, "is empty; " + empty)
            return nil
        }
        if program.contains("/"), let resolved = path(node, at: key + "[0]", text: program) { argv[0] = resolved }
        return argv
    }

    /// `fleet:`: the folders a fleet's `path` rows may name, and the credentials its CalDAV rows may name.
    private func readFleetAccess(_ node: Node) -> FleetAccess {
        var access = FleetAccess()
        guard let keys = mapping(node, at: "fleet", known: ["roots", "credentials"]) else { return access }
        if let (_, value) = keys["roots"] {
            access.roots = list(value, at: "fleet.roots").compactMap { path($0.node, at: $0.key) }
        }
        if let (_, value) = keys["credentials"], let entries = mapping(value, at: "fleet.credentials", known: nil) {
            for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
                let key = "fleet.credentials." + name
                if let problem = FleetAccess.problem(withCredentialName: name) {
                    note(entry.key, key, problem)
                } else if let argv = readArgv(
                    entry.value, at: key, example: "[pass, show, dav/carol]",
                    empty:
                        "write the program that prints the password and its arguments, such as [pass, show, dav/carol]"
                ) {
                    access.credentials[name] = argv
                }
            }
        }
        return access
    }

    // MARK: Values

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
    private static func suggestion(for name: String, among known: [String]) -> String {
        if let close = known.first(where: { editDistance($0.lowercased(), name.lowercased()) <= 2 }) {
            return "; did you mean `\(close)`?"
        }
        return "; the keys here are " + known.joined(separator: ", ")
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
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
