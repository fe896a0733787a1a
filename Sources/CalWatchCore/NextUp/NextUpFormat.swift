/// How `calwatch next` prints a `NextUp`: one short line for people and prompts, JSON for scripts, and the
/// conventions of waybar, polybar and i3blocks.
///
/// Every field is calendar text from a stranger: each format removes what its reader would act on (terminal
/// escapes, newlines that end a status-bar update, Pango markup for waybar, `%{…}` action tags for polybar).
public enum NextUpFormat: String, Sendable, CaseIterable {
    case text, json, waybar, polybar, i3blocks

    /// What the text formats show when nothing is coming; `nil` for "Nothing in the next <horizon>".
    public struct Style: Sendable {
        /// The widest line, in terminal columns (`nil`: no limit).
        public var maxWidth: Int?
        /// The text shown when nothing is coming (`nil`: the default sentence for `text`, empty for the bars).
        public var none: String?
        /// i3blocks only: the block has `markup=pango`, so its text is escaped as waybar's is.
        public var pango: Bool

        public init(maxWidth: Int? = nil, none: String? = nil, pango: Bool = false) {
            self.maxWidth = maxWidth
            self.none = none
            self.pango = pango
        }
    }

    /// The output for one update, without the final newline (i3blocks' is three lines).
    public func render(_ status: NextUp, style: Style = Style()) -> String {
        switch self {
        case .text:
            return Self.cut(Self.line(status) ?? style.none ?? Self.nothing(status), to: style.maxWidth)
        case .json:
            return Self.json(status)
        case .waybar:
            var writer = JSONLineWriter(capacity: 512)
            writer.beginObject()
            writer.field(
                "text",
                TerminalText.inert(Self.cut(Self.line(status) ?? style.none ?? "", to: style.maxWidth), for: .pango))
            writer.field("alt", status.state)
            writer.field("tooltip", TerminalText.inert(Self.tooltip(status), for: .pango))
            writer.field("class", status.state)
            writer.field("percentage", status.current?.progress.map { Int(($0 * 100).rounded(.down)) } ?? 0)
            writer.endObject()
            return String(decoding: writer.bytes, as: UTF8.self)
        case .polybar:
            let line = TerminalText.inert(
                Self.cut(Self.line(status) ?? style.none ?? "", to: style.maxWidth), for: .polybar)
            guard let colour = Self.colour(status.state), !line.isEmpty else { return line }
            return "%{F\(colour)}\(line)%{F-}"
        case .i3blocks:
            let full = Self.cut(Self.line(status) ?? style.none ?? "", to: style.maxWidth)
            let short = Self.cut(Self.short(status) ?? "", to: style.maxWidth)
            let shown = style.pango ? [full, short].map { TerminalText.inert($0, for: .pango) } : [full, short]
            return (shown + [Self.colour(status.state) ?? ""]).joined(separator: "\n")
        }
    }

    // MARK: The line

    /// `Standup in 12 min · zoom`, `Leave for BER in 1 h 05 (BA987 07:10)`, `Review: 18 min left`; `nil` when
    /// nothing is coming.
    static func line(_ status: NextUp) -> String? {
        guard let item = status.current else { return nil }
        return describe(item, zone: status.zone)
    }

    static func describe(_ item: NextUp.Item, zone: ZoneRules) -> String {
        let title = oneLine(item.occurrence.summary ?? "(no summary)")
        let count = countdown(item.seconds)
        if item.facts.kind == .flight, let flight = item.facts.flight {
            let code = flight.code ?? title
            var departure = clockTime(flight.live?.departure ?? item.occurrence.start, zone: zone)
            // What the flight-status service says: the new time with its delay, the gate.
            if let live = flight.live {
                if live.cancelled { return "\(code) is cancelled (\(live.status.provider))" }
                if let moved = live.departure {
                    let minutes = (moved.secondsSinceEpoch - item.occurrence.start.secondsSinceEpoch) / 60
                    departure += minutes >= 0 ? ", +\(minutes) min" : ", −\(-minutes) min"
                }
                if let gate = live.status.gate { departure += ", gate \(oneLine(gate))" }
            }
            switch item.target {
            case .prepareBy:
                return "Get ready " + (item.seconds <= 0 ? "now" : "in \(count)") + " for \(code) (leave "
                    + clockTime(item.facts.leaveBy ?? item.occurrence.start, zone: zone) + ")"
            case .leaveBy:
                let airport = flight.origin?.code ?? "the airport"
                let estimated = item.facts.leave?.estimated == true ? ", estimated" : ""
                return item.seconds <= 0
                    ? "Leave for \(airport) now (\(code) \(departure)\(estimated))"
                    : "Leave for \(airport) in \(count) (\(code) \(departure)\(estimated))"
            case .start:
                let to = flight.destination.map { " to \($0.code)" } ?? ""
                return "\(code)\(to) departs " + (item.seconds <= 0 ? "now" : "in \(count)") + " (\(departure))"
            case .end:
                let at = flight.destination.map { " at \($0.code)" } ?? ""
                return "\(code) lands\(at) in \(count)"
            }
        }
        let service = item.facts.meeting?.service.map { " · \($0)" } ?? ""
        switch item.target {
        case .end: return "\(title): \(count) left\(service)"
        case .prepareBy:
            let leave = clockTime(item.facts.leaveBy ?? item.occurrence.start, zone: zone)
            return item.seconds <= 0
                ? "Get ready now for \(title) (leave \(leave))" : "Get ready in \(count) for \(title) (leave \(leave))"
        case .leaveBy:
            let way =
                item.facts.leave.map { leave in
                    let how = ["driving": "by car", "cycling": "by bike", "walking": "on foot"][
                        leave.mode?.rawValue ?? ""]
                    let estimated = leave.estimated ? ", estimated" : ""
                    return " (\(countdown(leave.travelSeconds)) \(how ?? "on the way")\(estimated))"
                } ?? ""
            return item.seconds <= 0 ? "Leave for \(title) now\(way)" : "Leave in \(count) for \(title)\(way)"
        case .start: return item.seconds <= 0 ? "\(title) now\(service)" : "\(title) in \(count)\(service)"
        }
    }

    /// i3blocks' short text: the countdown and the flight code or the first words of the title.
    static func short(_ status: NextUp) -> String? {
        guard let item = status.current else { return nil }
        let name = item.facts.flight?.code ?? cut(oneLine(item.occurrence.summary ?? ""), to: 16)
        let count = item.seconds <= 0 ? "now" : countdown(item.seconds)
        return item.target == .end ? "\(name) \(count) left" : "\(name) \(count)"
    }

    /// "Nothing in the next 24 h".
    static func nothing(_ status: NextUp) -> String {
        let horizon = status.options.horizon
        let span = horizon % 3600 == 0 && horizon <= 48 * 3600 ? "\(horizon / 3600) h" : countdown(horizon)
        return "Nothing in the next \(span)"
    }

    /// The rest of today, one line each (`▸` marks the current one), then the current one's join link.
    static func tooltip(_ status: NextUp) -> String {
        guard let current = status.current else { return nothing(status) }
        let conflicts = firstConflicts(status)
        var lines = zip(status.today, conflicts).map { item, conflict -> String in
            let marker = NextUp.same(item, current) ? "▸ " : "  "
            // On a trip, where the user will be then, with the time at home beside it.
            let shown = item.occurrence.source.homeZone == nil ? status.zone : item.occurrence.displayZone
            var times =
                clockTime(item.occurrence.start, zone: shown) + "–" + clockTime(item.occurrence.end, zone: shown)
            if let home = item.occurrence.source.homeZone {
                times += " (home " + clockTime(item.occurrence.start, zone: home) + ")"
            }
            let title = oneLine(item.occurrence.summary ?? "(no summary)")
            var text = marker + times + "  " + title
            if let code = item.facts.flight?.code, !title.contains(code) { text += " (\(code))" }
            if let service = item.facts.meeting?.service { text += " · \(service)" }
            if item.facts.participation == "NEEDS-ACTION" { text += " · not answered" }
            if let conflict {
                text += " · conflicts with " + oneLine(status.today[conflict].occurrence.summary ?? "(no summary)")
            }
            return text
        }
        if let link = current.facts.joinURL { lines.append(oneLine(link)) }
        return lines.joined(separator: "\n")
    }

    /// For each of today's items that takes part in the day, the first other (in today's order) it conflicts
    /// with. A sweep by start compares each item only with those that begin before it ends: comparing every pair
    /// took 20 ms of every `next` on a day of 700 meetings.
    static func firstConflicts(_ status: NextUp) -> [Int?] {
        let (today, day, rules) = (status.today, status.options.day, status.options.rules)
        var first = [Int?](repeating: nil, count: today.count)
        let byStart = today.indices.filter { day.takesPart(today[$0].occurrence, facts: today[$0].facts, rules: rules) }
            .sorted { (today[$0].occurrence.start, $0) < (today[$1].occurrence.start, $1) }
        for (position, one) in byStart.enumerated() {
            for other in byStart[(position + 1)...] {
                guard today[other].occurrence.start < today[one].occurrence.end else { break }
                guard !NextUp.same(today[one], today[other]),
                    day.conflict(today[one].occurrence, today[other].occurrence)
                else { continue }
                first[one] = min(first[one] ?? other, other)
                first[other] = min(first[other] ?? one, one)
            }
        }
        return first
    }

    /// `12 min`, `1 h 05`, `3 h`, `2 d 4 h`: minutes rounded up, so a meeting 11 min 30 s away is "in 12 min".
    public static func countdown(_ seconds: Int64) -> String {
        let minutes = max(0, (seconds + 59) / 60)
        if minutes < 60 { return "\(minutes) min" }
        if minutes < 1440 {
            let rest = minutes % 60
            return rest == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h " + (rest < 10 ? "0" : "") + "\(rest)"
        }
        let hours = minutes % 1440 / 60
        return "\(minutes / 1440) d" + (hours == 0 ? "" : " \(hours) h")
    }

    /// `07:10` in the zone shown.
    static func clockTime(_ instant: Instant, zone: ZoneRules) -> String {
        let local = zone.wallClock(at: instant)
        return (local.hour < 10 ? "0" : "") + "\(local.hour):" + (local.minute < 10 ? "0" : "") + "\(local.minute)"
    }

    /// Calendar text on one line: runs of white space (newlines, tabs) become one space, controls become visible.
    package static func oneLine(_ text: String) -> String {
        // Printable ASCII with single spaces between words (most summaries) is already one safe line: no walk
        // through its characters (a tooltip of 700 meetings spent 4 ms there).
        var afterSpace = true
        let plain = text.utf8.allSatisfy { byte in
            defer { afterSpace = byte == 0x20 }
            return (0x21...0x7E).contains(byte) || byte == 0x20 && !afterSpace
        }
        if plain && !afterSpace { return text }
        let words = text.split(whereSeparator: { $0.isWhitespace || $0.isNewline })
        return TerminalText.safe(words.joined(separator: " "), keepingLines: false)
    }

    // MARK: Width

    /// `text` cut to `width` terminal columns with `…`, never inside a character (a grapheme cluster: an emoji
    /// with its modifiers, a letter with its accents).
    public static func cut(_ text: String, to width: Int?) -> String {
        guard let width, columns(text) > width else { return text }
        guard width > 0 else { return "" }
        var result = ""
        var used = 0
        for character in text {
            let wide = columns(character)
            if used + wide + 1 > width { break }
            result.append(character)
            used += wide
        }
        return result + "…"
    }

    /// The columns a terminal gives a text.
    public static func columns(_ text: String) -> Int { text.reduce(0) { $0 + columns($1) } }

    /// 2 for East Asian wide and emoji-presentation characters, 0 for a lone combining mark, else 1.
    static func columns(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if character.unicodeScalars.contains("\u{FE0F}") || first.properties.isEmojiPresentation { return 2 }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            switch first.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format: return 0
            default: return 1
            }
        }
    }

    // MARK: The bars' own rules

    /// Colours by state (One Dark): live red, soon yellow, flight blue; upcoming and none in the bar's own colour.
    static func colour(_ state: String) -> String? {
        switch state {
        case "live": "#e06c75"
        case "soon": "#e5c07b"
        case "flight": "#61afef"
        default: nil
        }
    }

    // MARK: JSON

    /// `{"state":…,"now":…,"countdown":{…},"occurrence":{…},"today":[…]}`, keys as in the JSON Schema
    /// (`schemas/calwatch-next.schema.json`).
    static func json(_ status: NextUp) -> String {
        var writer = JSONLineWriter(capacity: 2048)
        writer.beginObject()
        writer.field("state", status.state)
        writer.field("now", status.now)
        writer.field("text", line(status))
        if let current = status.current {
            writer.beginObject(field: "countdown")
            writer.field("to", current.target.rawValue)
            writer.field("at", current.targetTime)
            writer.field("seconds", Int(current.seconds))
            writer.field("text", countdown(current.seconds))
            writer.field("progress", current.progress)
            writer.endObject()
            writer.key("occurrence")
            OccurrenceJSON.write(current.occurrence, facts: current.facts, to: &writer, newline: false)
        } else {
            writer.nullField("countdown")
            writer.nullField("occurrence")
        }
        writer.beginArray(field: "today")
        for (index, item) in status.today.enumerated() {
            if index > 0 { writer.append(raw: Array(",".utf8)) }
            OccurrenceJSON.write(item.occurrence, facts: item.facts, to: &writer, newline: false)
        }
        writer.endArray()
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
