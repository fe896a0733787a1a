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

    /// A reminder's card; `again` when it is shown again unanswered, then worded for that instant.
    func reminder(_ entry: JournalStore.Entry, at again: Instant? = nil) -> NotificationBus.Card {
        let (summary, seconds) = ReminderText.headline(entry, at: again)
        var card = NotificationBus.Card(summary: summary, body: body(entry))
        // The last call, and the moment to leave, are critical: servers show those over full-screen windows.
        card.urgency = ReminderText.isUrgent(entry, secondsLeft: seconds) ? 2 : 1
        card.category = entry.facts.kind == .flight ? "x-calwatch.flight" : "x-calwatch.reminder"
        card.icon = Self.icon(entry.facts.kind)
        card.stack = entry.event.subject
        if actions {
            if ReminderText.link(entry) != nil {
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
        let title = ReminderText.title(entry)
        let detail = entry.event.liveActivity
        var card: NotificationBus.Card
        if let phase = detail?.phase, phase != .upcoming {
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
            if ReminderText.link(entry) != nil {
                card.actions.append(("default", entry.facts.meeting != nil ? "Join" : "Directions"))
            }
            card.actions.append(("dismiss", "Dismiss"))
        }
        return card
    }

    /// The time to get ready: critical, as a wake-up is, with directions when there is a place.
    func prepare(_ entry: JournalStore.Entry) -> NotificationBus.Card {
        var card = NotificationBus.Card(summary: ReminderText.prepare(entry), body: body(entry))
        card.urgency = 2
        card.category = "x-calwatch.reminder"
        card.icon = "alarm-symbolic"
        card.stack = "prepare " + entry.event.subject
        if actions && ReminderText.link(entry) != nil { card.actions.append(("default", "Directions")) }
        return card
    }

    func flight(_ entry: JournalStore.Entry) -> NotificationBus.Card {
        var card = NotificationBus.Card(summary: "Flight: \(ReminderText.title(entry))", body: body(entry))
        card.urgency = 0
        card.category = "x-calwatch.flight"
        card.icon = Self.icon(.flight)
        return card
    }

    /// What the flight-status service changed: urgent, as a cancellation or a new gate is not to be missed.
    func flightChanged(_ entry: JournalStore.Entry) -> NotificationBus.Card {
        var card = NotificationBus.Card(
            summary: ReminderText.flightChanged(entry) ?? "Flight changed: \(ReminderText.title(entry))",
            body: body(entry))
        card.urgency = 2
        card.category = "x-calwatch.flight"
        card.icon = Self.icon(.flight)
        return card
    }

    /// A day's card (a conflict, an overrun with the join link of the meeting that started, an unanswered
    /// invitation, the agenda), the agenda's items one per line.
    func day(_ entry: JournalStore.Entry) -> NotificationBus.Card? {
        guard let (title, details, link) = ReminderText.day(entry) else { return nil }
        let agenda = entry.event.type == .agendaDue
        var card = NotificationBus.Card(
            summary: title, body: escaped(details.joined(separator: agenda ? "\n" : " · ")))
        // An overrun is now: the next meeting has started.
        card.urgency = entry.event.type == .overrunDetected ? 2 : 1
        card.category = "x-calwatch.day"
        card.icon =
            agenda
            ? "x-office-calendar"
            : entry.event.type == .conflictDetected ? "dialog-warning" : Self.icon(entry.facts.kind)
        card.stack = entry.event.subject
        if actions && link != nil { card.actions.append(("default", "Join")) }
        return card
    }

    /// An account whose sign-in lapsed: urgent, and kept until closed (nothing is read from it meanwhile).
    func account(_ entry: JournalStore.Entry) -> NotificationBus.Card? {
        guard let (title, details, _) = ReminderText.account(entry) else { return nil }
        var card = NotificationBus.Card(summary: title, body: escaped(details.joined(separator: "\n")))
        card.urgency = 2
        card.category = "x-calwatch.account"
        card.icon = "dialog-password"
        card.stack = entry.event.subject
        return card
    }

    /// One card for the reminders past `maxCards`: how many, and the first few titles.
    func more(_ entries: [JournalStore.Entry]) -> NotificationBus.Card {
        let titles = entries.prefix(5).map { ReminderText.title($0) }
        var body = titles.joined(separator: "\n")
        if entries.count > titles.count { body += "\n…" }
        var card = NotificationBus.Card(summary: "and \(entries.count) more reminders", body: escaped(body))
        card.category = "x-calwatch.reminder"
        card.icon = Self.icon(.event)
        return card
    }

    /// The second line, escaped for the server.
    private func body(_ entry: JournalStore.Entry) -> String {
        escaped(ReminderText.details(entry).joined(separator: " · "))
    }

    /// `text` as the server shows it literally.
    private func escaped(_ text: String) -> String {
        let safe = TerminalText.safe(text)
        return markup ? TerminalText.inert(safe, for: .pango) : safe
    }

    /// Icon names of the freedesktop icon naming specification.
    static func icon(_ kind: OccurrenceFacts.Kind) -> String {
        switch kind {
        case .flight: "airplane-mode-symbolic"
        case .meeting: "call-start"
        case .event: "appointment-soon"
        }
    }
}
