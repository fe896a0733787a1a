import Foundation
import Yams

/// `reminders:`, `rules:`, `quietHours:`, `day:`, `liveActivity:`, `classify:` and `meetings:`: what the planner is given.
extension ConfigurationReader {
    func readReminders(_ node: Node, into planner: inout PlannerConfiguration) {
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
                guard let anchors = mapping(value, at: path, known: OccurrenceFacts.Kind.allCases.map(\.rawValue))
                else { break }
                for (kindName, (_, anchorNode)) in anchors {
                    guard let kind = OccurrenceFacts.Kind(rawValue: kindName),
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
    func readRules(_ node: Node) -> [ReminderRule] {
        var rules: [ReminderRule] = []
        var catchAll: Int?
        for (item, path) in list(node, at: "rules", single: false) {
            guard
                let keys = mapping(
                    item, at: path,
                    known: [
                        "calendars", "kinds", "services", "summary", "showAs", "offsets", "allDay", "liveActivity",
                        "attendance",
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
                        list(value, at: at).compactMap { choice($0.node, at: $0.key, of: OccurrenceFacts.Kind.self) })
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
                case "showAs":
                    rule.showAs = Set(
                        list(value, at: at).compactMap {
                            choice($0.node, at: $0.key, of: CalendarComponent.ShowAs.self)
                        })
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
    func readClockTimeReminder(_ node: Node, at path: String) -> ClockTimeReminder? {
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
    func readQuietHours(_ node: Node) -> QuietHours? {
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
    func readDay(_ node: Node) -> DaySettings? {
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
    func clockTime(_ node: Node, at path: String) -> Int? {
        guard let text = string(node, at: path) else { return nil }
        guard let minutes = Self.minutes(text) else {
            note(node, path, "'\(text)' is not a time of day; write it like 07:00 or 22:30")
            return nil
        }
        return minutes
    }

    func readLiveActivity(_ node: Node, into planner: inout PlannerConfiguration) {
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
    func summaryPattern(_ value: Node, at: String) -> SummaryPattern? {
        guard let text = string(value, at: at) else { return nil }
        guard let pattern = SummaryPattern(text) else {
            note(value, at, "'\(text)' is not a regular expression (ICU syntax, as in (?i)standup|sync)")
            return nil
        }
        return pattern
    }

    /// `classify:`, a list of entries each settling what the items it matches are: `kind` and at least one of
    /// `summary` (a regular expression), `calendars` and `uids`.
    func readKindRules(_ node: Node) -> [KindRule] {
        var rules: [KindRule] = []
        for (item, path) in list(node, at: "classify", single: false) {
            guard let keys = mapping(item, at: path, known: ["kind", "summary", "calendars", "uids"]) else { continue }
            guard let (_, kindNode) = keys["kind"],
                let kind = choice(kindNode, at: path + ".kind", of: OccurrenceFacts.Kind.self)
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
    func readMeetings(_ node: Node) -> [MeetingProvider] {
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
}
