import CalWatchCore
import Foundation

/// One event of Microsoft Graph's `calendarView/delta` (an occurrence, an exception or a single event: the view
/// expands series itself), or the note that one was removed. Made into one iCalendar item of its own, with what
/// Graph knows put where calwatch's reader already looks: the join link as `CONFERENCE` (not found by a search of
/// the text), the user's own answer as their `ATTENDEE`'s `PARTSTAT`, their reminder as a `VALARM`, `showAs` as
/// `X-MICROSOFT-CDO-BUSYSTATUS` (with `TRANSP` for free), a cancelled occurrence as `STATUS:CANCELLED`.
struct GraphEvent: Decodable {
    struct Removed: Decodable { var reason: String? }
    struct When: Decodable {
        var dateTime: String
        var timeZone: String?
    }
    struct Address: Decodable {
        var name: String?
        var address: String?
    }
    struct Recipient: Decodable { var emailAddress: Address? }
    struct Response: Decodable { var response: String? }
    struct Attendee: Decodable {
        var type: String?
        var status: Response?
        var emailAddress: Address?
    }
    struct Body: Decodable {
        var contentType: String?
        var content: String?
    }
    struct Location: Decodable { var displayName: String? }
    struct OnlineMeeting: Decodable { var joinUrl: String? }

    var id: String
    var removed: Removed?
    var iCalUId: String?
    var subject: String?
    var bodyPreview: String?
    var body: Body?
    var start: When?
    var end: When?
    var originalStartTimeZone: String?
    var isAllDay: Bool?
    var isCancelled: Bool?
    var showAs: String?
    var type: String?
    var location: Location?
    var onlineMeeting: OnlineMeeting?
    var onlineMeetingUrl: String?
    var onlineMeetingProvider: String?
    var responseStatus: Response?
    var isReminderOn: Bool?
    var reminderMinutesBeforeStart: Int?
    var organizer: Recipient?
    var attendees: [Attendee]?
    var categories: [String]?
    var sensitivity: String?
    var lastModifiedDateTime: String?

    enum CodingKeys: String, CodingKey {
        case id, iCalUId, subject, bodyPreview, body, start, end, originalStartTimeZone, isAllDay, isCancelled, showAs
        case type, location, onlineMeeting, onlineMeetingUrl, onlineMeetingProvider, responseStatus, isReminderOn
        case reminderMinutesBeforeStart, organizer, attendees, categories, sensitivity, lastModifiedDateTime
        case removed = "@removed"
    }

    /// The item as iCalendar text, `nil` when it has no start or end to read. `user` is the signed-in address, whose
    /// answer Graph gives as `responseStatus`.
    func calendar(user: String?) -> String? {
        guard let start, let end, let dtstart = Self.value(start, allDay: isAllDay == true),
            let dtend = Self.value(end, allDay: isAllDay == true)
        else { return nil }
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch//Microsoft Graph//EN", "BEGIN:VEVENT"]
        lines.append("UID:" + ICalendarLines.text(iCalUId ?? id))
        lines.append("DTSTAMP:" + (lastModifiedDateTime.flatMap { ICalendarLines.utc($0) } ?? "19700101T000000Z"))
        lines.append("DTSTART" + dtstart)
        lines.append("DTEND" + dtend)
        if let subject, !subject.isEmpty { lines.append("SUMMARY:" + ICalendarLines.text(subject)) }
        if let place = location?.displayName, !place.isEmpty { lines.append("LOCATION:" + ICalendarLines.text(place)) }
        let description = body?.contentType?.lowercased() == "text" ? body?.content : bodyPreview
        if let description, !description.isEmpty {
            lines.append("DESCRIPTION:" + ICalendarLines.text(String(description.prefix(ICalendarLines.textLimit))))
        }
        if let join = onlineMeeting?.joinUrl ?? onlineMeetingUrl, ICalendarLines.isWebAddress(join) {
            let label = onlineMeetingProvider == "teamsForBusiness" ? ";LABEL=Microsoft Teams" : ""
            lines.append("CONFERENCE;VALUE=URI;FEATURE=VIDEO\(label):" + ICalendarLines.text(join))
        }
        if isCancelled == true { lines.append("STATUS:CANCELLED") }
        if let showAs, let status = Self.busyStatus[showAs] {
            lines.append("X-MICROSOFT-CDO-BUSYSTATUS:" + status)
            if status == "FREE" { lines.append("TRANSP:TRANSPARENT") }
        }
        if sensitivity == "private" || sensitivity == "confidential" { lines.append("CLASS:PRIVATE") }
        if let categories, !categories.isEmpty {
            lines.append("CATEGORIES:" + categories.map(ICalendarLines.text).joined(separator: ","))
        }
        let me = user?.lowercased()
        if let address = organizer?.emailAddress?.address, !address.isEmpty {
            lines.append(
                "ORGANIZER" + ICalendarLines.name(organizer?.emailAddress?.name) + ":mailto:"
                    + ICalendarLines.text(address))
        }
        var answered = false
        for attendee in attendees ?? [] {
            guard let address = attendee.emailAddress?.address, !address.isEmpty else { continue }
            var answer = attendee.status?.response
            if address.lowercased() == me, let own = responseStatus?.response {
                answer = own
                answered = true
            }
            let role =
                attendee.type == "optional"
                ? "OPT-PARTICIPANT" : attendee.type == "resource" ? "NON-PARTICIPANT" : "REQ-PARTICIPANT"
            lines.append(
                "ATTENDEE" + ICalendarLines.name(attendee.emailAddress?.name) + ";ROLE=\(role);PARTSTAT="
                    + Self.partstat(answer) + ":mailto:" + ICalendarLines.text(address))
        }
        // The user's answer where the attendee list leaves them out (an invitation forwarded to them).
        if !answered, let me, let own = responseStatus?.response, own != "none", own != "organizer",
            organizer?.emailAddress?.address?.lowercased() != me
        {
            lines.append(
                "ATTENDEE;ROLE=REQ-PARTICIPANT;PARTSTAT=" + Self.partstat(own) + ":mailto:" + ICalendarLines.text(me))
        }
        if isReminderOn == true, let minutes = reminderMinutesBeforeStart, (0...40_320).contains(minutes) {
            lines += [
                "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Reminder", "TRIGGER:-PT\(minutes)M", "END:VALARM",
            ]
        }
        lines += ["END:VEVENT", "END:VCALENDAR", ""]
        return lines.map(ICalendarLines.folded).joined(separator: "\r\n")
    }

    /// `showAs` as Outlook writes it in iCalendar.
    static let busyStatus = [
        "free": "FREE", "tentative": "TENTATIVE", "busy": "BUSY", "oof": "OOF", "workingElsewhere": "WORKINGELSEWHERE",
    ]

    /// `responseStatus.response` as a `PARTSTAT`.
    static func partstat(_ response: String?) -> String {
        switch response {
        case "accepted", "organizer": "ACCEPTED"
        case "tentativelyAccepted": "TENTATIVE"
        case "declined": "DECLINED"
        default: "NEEDS-ACTION"
        }
    }

    /// `:20261201T090000Z` for a time (asked for in UTC), `;VALUE=DATE:20261201` for an all-day event's date.
    static func value(_ when: When, allDay: Bool) -> String? {
        let digits = Array(when.dateTime.utf8.prefix(19))
        // 2026-12-01T09:00:00
        guard digits.count == 19, digits[4] == 0x2D, digits[7] == 0x2D, digits[10] == 0x54,
            digits.enumerated().allSatisfy({
                [4, 7, 10, 13, 16].contains($0.offset) || (0x30...0x39).contains($0.element)
            })
        else { return nil }
        let text = String(decoding: digits, as: UTF8.self)
        let date = text.prefix(10).filter { $0 != "-" }
        if allDay { return ";VALUE=DATE:" + date }
        let zone = when.timeZone ?? "UTC"
        let time = text.suffix(8).filter { $0 != ":" }
        if zone == "UTC" || zone == "Etc/UTC" { return ":\(date)T\(time)Z" }
        // A zone other than the UTC asked for: its IANA name (Windows names through CLDR's table).
        let iana = TimeZoneDatabase.rules(named: zone) != nil ? zone : WindowsZones.ianaName(for: zone)
        guard let iana else { return ":\(date)T\(time)Z" }
        return ";TZID=\(iana):\(date)T\(time)"
    }
}
