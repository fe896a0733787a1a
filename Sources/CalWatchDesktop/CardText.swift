import CalWatchCore
import CalWatchRuntime
import Foundation

/// What a card says: a title and body a person reads at a glance, the buttons the server can show, urgency by how
/// near the moment is. Calendar text goes through `TerminalText` (controls and bidirectional overrides made
/// visible) and, where the server reads markup, is escaped: a summary never becomes a link or an image.
struct CardText {
    let server: NotificationBus.Server
    let snooze: [Int64]

    /// A button's key, as the card sends it back in `ActionInvoked`.
    enum Action: Equatable {
        case open
        case snooze(Int64)
        case dismiss
        case acknowledge

        init?(key: String) {
            switch key {
            case "default", "join": self = .open
            case "dismiss": self = .dismiss
            case "ack": self = .acknowledge
            default:
                guard key.hasPrefix("snooze-"), let seconds = Int64(key.dropFirst(7)), seconds > 0 else { return nil }
                self = .snooze(seconds)
            }
        }
    }

    var actions: Bool { server.capabilities.contains("actions") }
    private var markup: Bool { server.capabilities.contains("body-markup") }

    /// The link a click opens: the meeting's join link, else directions to the place.
    static func link(_ entry: JournalStore.Entry) -> String? {
        entry.facts.meeting?.joinURL ?? entry.facts.leave?.destination?.at.map(LeaveJSON.directions(to:))
    }

    /// A reminder's card; `again` when it is shown again unanswered, then worded for that instant.
    func reminder(_ entry: JournalStore.Entry, at again: Instant? = nil) -> NotificationBus.Card {
        let title = Self.title(entry)
        let detail = entry.event.reminder
        let leaving = detail?.anchor == .leaveBy
        var seconds = detail?.secondsBefore ?? 0
        if let again, let anchor = leaving ? entry.facts.leave?.by : entry.occurrence?.start {
            seconds = anchor.secondsSinceEpoch - again.secondsSinceEpoch
        }
        let minutes = (abs(seconds) + 59) / 60
        var summary: String
        switch (leaving, seconds) {
        case (true, 1...): summary = "Leave in \(minutes) min for \(title)"
        case (true, ...(-60)): summary = "Leave now for \(title) (\(minutes) min late)"
        case (true, _): summary = "Leave now for \(title)"
        case (false, 1...): summary = "\(title) in \(minutes) min"
        case (false, ...(-60)): summary = "\(title) started \(minutes) min ago"
        case (false, _): summary = "\(title) now"
        }
        if detail?.late == true && again == nil { summary += " (late)" }
        var card = NotificationBus.Card(summary: summary, body: body(entry))
        // The last call, and the moment to leave, are critical: servers show those over full-screen windows.
        card.urgency = leaving || seconds <= 300 ? 2 : 1
        card.category = entry.facts.kind == .flight ? "x-calwatch.flight" : "x-calwatch.reminder"
        card.icon = Self.icon(entry.facts.kind)
        card.stack = entry.event.subject
        if actions {
            if Self.link(entry) != nil {
                card.actions.append(("default", entry.facts.meeting != nil ? "Join" : "Directions"))
            }
            for seconds in snooze { card.actions.append(("snooze-\(seconds)", "Snooze \(DurationText.text(seconds))")) }
            card.actions += [("dismiss", "Dismiss"), ("ack", "Acknowledge")]
        } else {
            // Without buttons, the commands that do what they would.
            let snoozeFor = snooze.first.map(DurationText.text) ?? "10m"
            card.body += escaped(
                "\ncalwatch snooze \(entry.event.id) \(snoozeFor)   calwatch dismiss \(entry.event.id)")
        }
        return card
    }

    func activity(_ entry: JournalStore.Entry) -> NotificationBus.Card {
        let title = Self.title(entry)
        let detail = entry.event.liveActivity
        var card: NotificationBus.Card
        if detail?.phase == .inProgress {
            let left = NextUpFormat.countdown(max(detail?.secondsToEnd ?? 0, 0))
            card = NotificationBus.Card(summary: "\(title): \(left) left", body: body(entry))
            card.value = Int32((max(0, min(1, detail?.progress ?? 0)) * 100).rounded())
        } else {
            let until = NextUpFormat.countdown(max(detail?.secondsToStart ?? 0, 0))
            card = NotificationBus.Card(summary: "\(title) in \(until)", body: body(entry))
        }
        card.urgency = 1
        card.category = "x-calwatch.live"
        card.icon = Self.icon(entry.facts.kind)
        card.stack = "live " + entry.event.subject
        card.resident = true
        card.timeout = 0
        if actions {
            if Self.link(entry) != nil {
                card.actions.append(("default", entry.facts.meeting != nil ? "Join" : "Directions"))
            }
            card.actions.append(("dismiss", "Dismiss"))
        }
        return card
    }

    func flight(_ entry: JournalStore.Entry) -> NotificationBus.Card {
        var card = NotificationBus.Card(summary: "Flight: \(Self.title(entry))", body: body(entry))
        card.urgency = 0
        card.category = "x-calwatch.flight"
        card.icon = Self.icon(.flight)
        return card
    }

    /// One card for the reminders past `maxCards`: how many, and the first few titles.
    func more(_ entries: [JournalStore.Entry]) -> NotificationBus.Card {
        let titles = entries.prefix(5).map { Self.title($0) }
        var body = titles.joined(separator: "\n")
        if entries.count > titles.count { body += "\n…" }
        var card = NotificationBus.Card(summary: "and \(entries.count) more reminders", body: escaped(body))
        card.category = "x-calwatch.reminder"
        card.icon = Self.icon(.event)
        return card
    }

    /// The second line: when, then where or which service; for a flight its route, leave-by, terminal and gate.
    private func body(_ entry: JournalStore.Entry) -> String {
        var parts: [String] = []
        if let occurrence = entry.occurrence {
            let start = occurrence.startLocal
            let end = occurrence.displayZone.wallClock(at: occurrence.end)
            parts.append(String(format: "%02d:%02d–%02d:%02d", start.hour, start.minute, end.hour, end.minute))
        }
        if let flight = entry.facts.flight {
            let route = [flight.origin?.code, flight.destination?.code].compactMap { $0 }.joined(separator: " → ")
            if !route.isEmpty { parts.append(route) }
            if let terminal = flight.terminal { parts.append("Terminal \(terminal)") }
            if let gate = flight.gate { parts.append("Gate \(gate)") }
        } else if let service = entry.facts.meeting?.service {
            parts.append(MeetingProvider.title(of: service))
        } else if let place = entry.facts.leave?.destination?.name ?? entry.occurrence?.location {
            parts.append(place)
        }
        if let leave = entry.facts.leave, let occurrence = entry.occurrence {
            let by = occurrence.displayZone.wallClock(at: leave.by)
            parts.append(String(format: "leave by %02d:%02d", by.hour, by.minute))
        }
        // Each part one line of at most 120 columns: a 100 KB LOCATION is a stranger's, not a card's.
        return escaped(parts.map { NextUpFormat.cut(NextUpFormat.oneLine($0), to: 120) }.joined(separator: " · "))
    }

    /// `text` as the server shows it literally.
    private func escaped(_ text: String) -> String {
        let safe = TerminalText.safe(text)
        return markup ? TerminalText.inert(safe, for: .pango) : safe
    }

    /// The occurrence's summary (or its flight code), on one line, at most 120 columns; the summary line is never
    /// markup in the specification, but it is made safe all the same.
    static func title(_ entry: JournalStore.Entry) -> String {
        let text = entry.facts.flight?.code.map { "\($0)" } ?? entry.occurrence?.summary ?? "(no title)"
        return NextUpFormat.cut(TerminalText.safe(NextUpFormat.oneLine(text), keepingLines: false), to: 120)
    }

    /// Icon names of the freedesktop icon naming specification.
    static func icon(_ kind: PlanningFacts.Kind) -> String {
        switch kind {
        case .flight: "airplane-mode-symbolic"
        case .meeting: "call-start"
        case .event: "appointment-soon"
        }
    }
}
