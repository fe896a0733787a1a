import CalWatchCore
import Foundation

/// One event of Google Calendar's `events.list` with `singleEvents=false`: a series' master with its `recurrence`
/// lines (RRULE, EXDATE, RDATE, expanded by calwatch as any calendar's), one of its changed instances
/// (`recurringEventId`, `originalStartTime`: a `RECURRENCE-ID`), or a single event; `status: cancelled` for one
/// deleted. Asked for with times in UTC (`timeZone=UTC`) and written in the event's own zone, so a weekly series
/// keeps its wall-clock time across a change of daylight saving time. What Google knows goes where calwatch's
/// reader looks: `conferenceData` as `CONFERENCE`, the user's own `responseStatus` as their `PARTSTAT`, their
/// reminders (or the calendar's defaults) as `VALARM`s, `transparency` as `TRANSP`.
struct GoogleEvent: Decodable {
    struct When: Decodable {
        var date: String?
        var dateTime: String?
        var timeZone: String?
    }
    struct Person: Decodable {
        var email: String?
        var displayName: String?
        var responseStatus: String?
        var optional: Bool?
        var resource: Bool?
        var organizer: Bool?
        var `self`: Bool?
    }
    struct EntryPoint: Decodable {
        var entryPointType: String?
        var uri: String?
    }
    struct Solution: Decodable { var name: String? }
    struct Conference: Decodable {
        var entryPoints: [EntryPoint]?
        var conferenceSolution: Solution?
    }
    struct Reminder: Decodable {
        var method: String?
        var minutes: Int?
    }
    struct Reminders: Decodable {
        var useDefault: Bool?
        var overrides: [Reminder]?
    }

    var id: String
    var status: String?
    var iCalUID: String?
    var summary: String?
    var description: String?
    var location: String?
    var start: When?
    var end: When?
    var recurrence: [String]?
    var recurringEventId: String?
    var originalStartTime: When?
    var attendees: [Person]?
    var organizer: Person?
    var conferenceData: Conference?
    var hangoutLink: String?
    var reminders: Reminders?
    var eventType: String?
    var transparency: String?
    var visibility: String?
    var updated: String?

    var isCancelled: Bool { status == "cancelled" }

    /// The item's UID: the series' for a changed instance (Google gives it the master's `iCalUID`).
    var uid: String { iCalUID ?? recurringEventId ?? id }

    /// The event as one VEVENT's lines under `uid` (its series' for an instance); `nil` when it has neither start nor (for a cancelled instance) original
    /// start. `defaults` are the calendar's `defaultReminders`, used where the event says `useDefault`.
    func component(uid: String, user: String?, defaults: [Reminder]) -> [String]? {
        var lines = ["BEGIN:VEVENT", "UID:" + ICalendarLines.text(uid)]
        lines.append("DTSTAMP:" + (updated.flatMap { ICalendarLines.utc($0) } ?? "19700101T000000Z"))
        if let original = originalStartTime, let value = Self.value(original) {
            lines.append("RECURRENCE-ID" + value)
        }
        if isCancelled {
            // A deleted instance of a series: its original start, cancelled.
            guard recurringEventId != nil, let original = originalStartTime, let value = Self.value(original) else {
                return nil
            }
            lines += ["DTSTART" + value, "STATUS:CANCELLED", "END:VEVENT"]
            return lines
        }
        guard let start, let end, let dtstart = Self.value(start), let dtend = Self.value(end) else { return nil }
        lines += ["DTSTART" + dtstart, "DTEND" + dtend]
        for line in recurrence ?? [] where Self.recurrenceNames.contains(where: { line.uppercased().hasPrefix($0) }) {
            lines.append(line.filter { $0 != "\r" && $0 != "\n" })
        }
        if let summary, !summary.isEmpty { lines.append("SUMMARY:" + ICalendarLines.text(summary)) }
        if let location, !location.isEmpty { lines.append("LOCATION:" + ICalendarLines.text(location)) }
        if let description, !description.isEmpty {
            lines.append("DESCRIPTION:" + ICalendarLines.text(String(description.prefix(ICalendarLines.textLimit))))
        }
        let video =
            conferenceData?.entryPoints?.first { $0.entryPointType == "video" }?.uri ?? hangoutLink
        if let video, ICalendarLines.isWebAddress(video) {
            let label = conferenceData?.conferenceSolution?.name.map { ";LABEL=\"\(Self.parameter($0))\"" } ?? ""
            lines.append("CONFERENCE;VALUE=URI;FEATURE=VIDEO\(label):" + ICalendarLines.text(video))
        }
        if status == "tentative" { lines.append("STATUS:TENTATIVE") }
        if transparency == "transparent" { lines.append("TRANSP:TRANSPARENT") }
        if visibility == "private" || visibility == "confidential" { lines.append("CLASS:PRIVATE") }
        if let eventType, eventType != "default" {
            lines.append("X-GOOGLE-EVENT-TYPE:" + ICalendarLines.text(eventType))
        }
        if let email = organizer?.email, !email.isEmpty {
            lines.append(
                "ORGANIZER" + ICalendarLines.name(organizer?.displayName) + ":mailto:" + ICalendarLines.text(email))
        }
        for person in attendees ?? [] {
            guard let email = person.email, !email.isEmpty else { continue }
            let role =
                person.resource == true
                ? "NON-PARTICIPANT" : person.optional == true ? "OPT-PARTICIPANT" : "REQ-PARTICIPANT"
            lines.append(
                "ATTENDEE" + ICalendarLines.name(person.displayName) + ";ROLE=\(role);PARTSTAT="
                    + Self.partstat(person.responseStatus) + ":mailto:" + ICalendarLines.text(email))
        }
        let own = reminders?.useDefault == false ? reminders?.overrides ?? [] : defaults
        for reminder in own.prefix(5) {
            guard let minutes = reminder.minutes, (0...40_320).contains(minutes) else { continue }
            lines += ["BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Reminder", "TRIGGER:-PT\(minutes)M", "END:VALARM"]
        }
        lines.append("END:VEVENT")
        return lines
    }

    /// The recurrence lines Google gives that calwatch reads.
    static let recurrenceNames = ["RRULE:", "EXRULE:", "EXDATE", "RDATE"]

    static func partstat(_ response: String?) -> String {
        switch response {
        case "accepted": "ACCEPTED"
        case "tentative": "TENTATIVE"
        case "declined": "DECLINED"
        default: "NEEDS-ACTION"
        }
    }

    static func parameter(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\"" && $0.value >= 0x20 }).prefix(100))
    }

    /// `;VALUE=DATE:20261201` for a date, `;TZID=Europe/Berlin:20261201T100000` for a time in its zone (asked for in
    /// UTC: `2026-12-01T09:00:00Z`), `:20261201T090000Z` when the zone is not known.
    static func value(_ when: When) -> String? {
        if let date = when.date {
            let digits = date.filter(\.isNumber)
            return digits.count == 8 && date.count == 10 ? ";VALUE=DATE:" + digits : nil
        }
        guard let text = when.dateTime, let utc = ICalendarLines.utc(text), text.hasSuffix("Z") else {
            // An offset other than Z (a server that ignored timeZone=UTC): its wall clock as UTC would be wrong.
            return when.dateTime.flatMap(offsetValue)
        }
        guard let zone = when.timeZone, let rules = TimeZoneDatabase.rules(named: zone),
            let instant = instant(utc)
        else { return ":" + utc }
        let wall = rules.wallClock(at: instant)
        let date = wall.date
        return ";TZID=\(zone):"
            + String(
                format: "%04d%02d%02dT%02d%02d%02d", date.year, date.month, date.day, wall.hour, wall.minute,
                wall.second)
    }

    /// `20261201T090000Z` as an instant.
    static func instant(_ utc: String) -> Instant? {
        let digits = Array(utc.utf8)
        guard digits.count == 16 else { return nil }
        func number(_ range: Range<Int>) -> Int { Int(String(decoding: digits[range], as: UTF8.self)) ?? 0 }
        let date = CalendarDate(year: number(0..<4), month: number(4..<6), day: number(6..<8))
        let seconds = Int64(number(9..<11) * 3600 + number(11..<13) * 60 + number(13..<15))
        return Instant(secondsSinceEpoch: date.daysSinceEpoch * 86_400 + seconds)
    }

    /// `2026-12-01T10:00:00+01:00` as `:20261201T090000Z`.
    static func offsetValue(_ text: String) -> String? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: String(text.prefix(19)) + String(text.suffix(6))) else { return nil }
        formatter.timeZone = TimeZone(identifier: "UTC")
        return ICalendarLines.utc(formatter.string(from: date)).map { ":" + $0 }
    }
}
