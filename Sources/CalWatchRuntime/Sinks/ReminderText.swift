public import CalWatchCore
import Foundation

/// A reminder as a person reads it at a glance, for the sinks that show one (desktop cards, pushes to a phone): a
/// title line ("Standup in 5 min", "Leave in 15 min for Dentist") and a detail line (when; which service or
/// where; for a flight its route, terminal, gate and seat; the time to leave). Plain text, made safe per Unicode scalar
/// and cut to one line of at most 120 columns each part: each sink escapes it for its own reader.
public enum ReminderText {
    /// The occurrence's summary (or its flight code).
    public static func title(_ entry: JournalStore.Entry) -> String {
        let text = entry.facts.flight?.code.map { "\($0)" } ?? entry.occurrence?.summary ?? "(no title)"
        return NextUpFormat.cut(TerminalText.safe(NextUpFormat.oneLine(text), keepingLines: false), to: 120)
    }

    /// The title line, and how many seconds were left until the moment it counts to (the start, or the time to
    /// leave); `again` words it for that instant (a reminder shown again later), not for the reminder's own time.
    public static func headline(_ entry: JournalStore.Entry, at again: Instant? = nil) -> (
        text: String, secondsLeft: Int64
    ) {
        let title = title(entry)
        let detail = entry.event.reminder
        let leaving = isLeaving(entry)
        var seconds = detail?.secondsBefore ?? 0
        if let again, let anchor = leaving ? entry.facts.leave?.by : entry.occurrence?.start {
            seconds = anchor.secondsSinceEpoch - again.secondsSinceEpoch
        }
        let minutes = (abs(seconds) + 59) / 60
        var text: String
        switch (leaving, seconds) {
        case (true, 1...): text = "Leave in \(minutes) min for \(title)"
        case (true, ...(-60)): text = "Leave now for \(title) (\(minutes) min late)"
        case (true, _): text = "Leave now for \(title)"
        case (false, 1...): text = "\(title) in \(minutes) min"
        case (false, ...(-60)): text = "\(title) started \(minutes) min ago"
        case (false, _): text = "\(title) now"
        }
        if detail?.late == true && again == nil { text += " (late)" }
        return (text, seconds)
    }

    /// The time to get ready (`prepareDue`): "Get ready for Dentist: leave in 45 min", the detail line as a
    /// reminder's.
    public static func prepare(_ entry: JournalStore.Entry) -> String {
        "Get ready for \(title(entry)): leave in \(NextUpFormat.countdown(entry.facts.leave?.prep?.seconds ?? 0))"
    }

    /// Whether the reminder counts to the time to leave.
    public static func isLeaving(_ entry: JournalStore.Entry) -> Bool { entry.event.reminder?.anchor == .leaveBy }

    /// The last call (5 minutes or less) and every time to leave: what a reader must not miss.
    public static func isUrgent(_ entry: JournalStore.Entry, secondsLeft: Int64) -> Bool {
        isLeaving(entry) || secondsLeft <= 300
    }

    /// The detail line's parts: when, then where or which service; for a flight its route, terminal, gate and seat;
    /// the time to leave.
    public static func details(_ entry: JournalStore.Entry) -> [String] {
        var parts: [String] = []
        if let occurrence = entry.occurrence {
            let start = occurrence.startLocal
            let end = occurrence.displayZone.wallClock(at: occurrence.end)
            parts.append(String(format: "%02d:%02d–%02d:%02d", start.hour, start.minute, end.hour, end.minute))
        }
        if let flight = entry.facts.flight {
            let route = [flight.origin?.code, flight.destination?.code].compactMap { $0 }.joined(separator: " → ")
            if !route.isEmpty { parts.append(route) }
            if let occurrence = entry.occurrence {
                parts += flight.glance(departure: occurrence.start, zone: occurrence.displayZone)
            }
        } else if let service = entry.facts.meeting?.service {
            parts.append(MeetingProvider.title(of: service))
        } else if let place = entry.facts.leave?.destination?.name ?? entry.occurrence?.location {
            parts.append(place)
        }
        if let leave = entry.facts.leave, let occurrence = entry.occurrence {
            let by = occurrence.displayZone.wallClock(at: leave.by)
            var text =
                String(format: "leave by %02d:%02d", by.hour, by.minute) + (leave.estimated ? " (estimated)" : "")
            if let prepareBy = leave.prepareBy {
                let ready = occurrence.displayZone.wallClock(at: prepareBy)
                text = String(format: "get ready %02d:%02d, ", ready.hour, ready.minute) + text
            }
            parts.append(text)
        }
        // Each part one line of at most 120 columns: a 100 KB LOCATION is a stranger's, not a card's.
        return parts.map { TerminalText.safe(NextUpFormat.cut(NextUpFormat.oneLine($0), to: 120), keepingLines: false) }
    }

    /// A `flightChanged` at a glance: "BA286: cancelled", "BA286: departs 19:55 (+35 min), gate A7 (was B12)".
    public static func flightChanged(_ entry: JournalStore.Entry) -> String? {
        guard case .flightChanged(let change) = entry.event.payload else { return nil }
        let parts = change.changes.map { difference -> String in
            switch difference.field {
            case "status": return difference.to ?? "status changed"
            case "departure":
                guard let occurrence = entry.occurrence else { return "departure moved" }
                return entry.facts.flight?.live?.headline(calendar: occurrence.start, zone: occurrence.displayZone)?
                    .lowercased() ?? "departure moved"
            case "divertedTo": return "diverted to \(difference.to ?? "another airport")"
            default:
                return "\(difference.field) \(difference.to ?? "none")" + (difference.from.map { " (was \($0))" } ?? "")
            }
        }
        return TerminalText.safe(
            NextUpFormat.cut(NextUpFormat.oneLine("\(title(entry)): " + parts.joined(separator: ", ")), to: 120),
            keepingLines: false)
    }

    /// The link a click opens: the meeting's join link, else directions to the place.
    public static func link(_ entry: JournalStore.Entry) -> String? {
        entry.facts.meeting?.joinURL ?? entry.facts.leave?.destination?.at.map(LeaveJSON.directions(to:))
    }
}

extension ReminderText {
    /// A day's event (`day:`) as a person reads it: a title, the detail line's parts and the link a click opens
    /// (for an overrun, the join link of the meeting that has started); `nil` for every other event.
    public static func day(_ entry: JournalStore.Entry) -> (title: String, details: [String], link: String?)? {
        var zone = entry.occurrence?.displayZone ?? .utc
        func safe(_ text: String?) -> String {
            TerminalText.safe(
                NextUpFormat.cut(NextUpFormat.oneLine(text ?? "(no title)"), to: 120), keepingLines: false)
        }
        func clock(_ instant: Instant) -> String {
            let local = zone.wallClock(at: instant)
            return String(format: "%02d:%02d", local.hour, local.minute)
        }
        switch entry.event.payload {
        case .conflictDetected(let conflict):
            let minutes = conflict.overlapSeconds / 60
            let more = conflict.alsoWith.isEmpty ? "" : " and \(conflict.alsoWith.count) more"
            return (
                "Conflict: \(title(entry)) and \(safe(conflict.with.summary))\(more)",
                [
                    "\(clock(entry.event.occurrenceStart))–\(clock(entry.event.occurrenceEnd)) overlaps "
                        + "\(clock(conflict.with.start))–\(clock(conflict.with.end)) by \(minutes) min"
                ],
                conflict.with.joinUrl
            )
        case .overrunDetected(let overrun):
            let more = overrun.alsoRunning.isEmpty ? "" : " and \(overrun.alsoRunning.count) more"
            return (
                "\(safe(overrun.next.summary)) has started",
                ["\(title(entry))\(more) runs until \(clock(entry.event.occurrenceEnd))"],
                overrun.next.joinUrl
            )
        case .invitationPending(let invitation):
            var details = details(entry)
            if let organizer = invitation.organizer { details.append("from " + safe(organizer)) }
            return ("Not answered yet: \(title(entry))", details, link(entry))
        case .agendaDue(let agenda):
            zone = TimeZoneDatabase.rules(named: agenda.zone) ?? .utc
            let items = agenda.items.prefix(8).map { item in
                (item.allDay ? "all day" : clock(item.occurrence.start)) + " " + safe(item.occurrence.summary)
                    + (item.conflicts.isEmpty ? "" : " (conflict)")
            }
            let more = agenda.items.count > items.count ? ["and \(agenda.items.count - items.count) more"] : []
            let count =
                switch agenda.items.count {
                case 0: "nothing planned"
                case 1: "1 item"
                default: "\(agenda.items.count) items"
                }
            return ("Your day, \(agenda.date): \(count)", items + more, nil)
        default:
            return nil
        }
    }
}

extension ReminderText {
    /// An account's notice as a person reads it, wherever they are: a title, what happened, and how to sign in
    /// again (the device code and its address, the link a click opens, when there is one; the daemon's sign-in page
    /// on its machine; what to run where).
    /// `nil` for every other event.
    public static func account(_ entry: JournalStore.Entry) -> (title: String, details: [String], link: String?)? {
        guard let notice = entry.event.account else { return nil }
        func safe(_ text: String, _ length: Int = 120) -> String {
            TerminalText.safe(NextUpFormat.cut(NextUpFormat.oneLine(text), to: length), keepingLines: false)
        }
        let service = notice.provider == "google" ? "Google Calendar" : "Microsoft 365"
        let who = notice.user.map { " as " + safe($0) } ?? ""
        var details = ["calwatch cannot read \(service)\(who): \(safe(notice.reason, 300))"]
        let device = notice.deviceCode.flatMap { device in
            URL(string: device.address).flatMap { ["https", "http"].contains($0.scheme) ? device : nil }
        }
        if let device {
            let until = String(format: "%02d:%02d UTC", device.until.utc.hour, device.until.utc.minute)
            details.append("sign in at \(safe(device.address)) with the code \(safe(device.code)) (until \(until)), or")
        }
        let page = notice.signInPage.flatMap { URL(string: $0)?.scheme == "http" ? $0 : nil }
        if let page { details.append("open \(safe(page)) on \(safe(notice.host)), or") }
        details.append("run \(safe(notice.signIn)) on \(safe(notice.host))")
        return ("Sign in to \(safe(notice.account)) again", details, device?.address)
    }
}
