/// One concrete occurrence of a calendar item: absolute start and end, and what it is.
public struct Occurrence: Sendable {
    /// The collection or file the item came from (its display name).
    public var calendar: String
    public var uid: String
    /// The original start of this instance when it belongs to a series (RECURRENCE-ID), else `nil`.
    public var recurrenceID: DateValueText?
    public var summary: String?
    public var location: String?
    public var description: String?
    public var start: Instant
    public var end: Instant
    public var allDay: Bool
    /// The zone the item was written in, or `nil` for UTC, floating and all-day values.
    public var timeZone: ZoneRules?
    /// The zone local times are shown in: `timeZone`, else the configured zone.
    public var displayZone: ZoneRules
    public var status: CalendarComponent.Status?
    /// VEVENT or VTODO (todos only with `--todos`; their occurrence is the instant they are due).
    public var componentKind: CalendarComponent.Kind
    /// The VALARMs of the component this occurrence came from.
    public var alarms: [Alarm]

    /// The local wall-clock start in `displayZone`.
    public var startLocal: LocalDateTime { displayZone.wallClock(at: start) }
}

/// A RECURRENCE-ID as calwatch prints it: a UTC instant, or a date for all-day series.
public enum DateValueText: Hashable, Sendable, CustomStringConvertible {
    case instant(Instant)
    case date(CalendarDate)

    public var description: String {
        switch self {
        case .instant(let instant): instant.description
        case .date(let date): date.description
        }
    }
}

/// A problem found in a calendar, worded for the user; the scan adds the file and line.
public struct CalendarProblem: Sendable, Hashable, CustomStringConvertible {
    /// How bad it is: a warning keeps the data, an error loses some of it.
    public enum Severity: String, Sendable { case warning, error }

    public var severity: Severity
    public var path: String
    public var line: Int?
    public var uid: String?
    public var message: String

    /// Creates a problem.
    public init(severity: Severity, path: String = "", line: Int? = nil, uid: String? = nil, message: String) {
        self.severity = severity
        self.path = path
        self.line = line
        self.uid = uid
        self.message = message
    }

    /// `path:line: warning: message (UID uid)`, the shape compilers use so editors can jump to it.
    public var description: String {
        var text = path
        if let line { text += ":\(line)" }
        text += ": \(severity.rawValue): \(message)"
        if let uid, !uid.isEmpty { text += " (UID \(uid))" }
        return text
    }
}
