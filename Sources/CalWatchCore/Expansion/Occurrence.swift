import Synchronization

/// What the occurrences of one component share, held once by reference.
///
/// A weekly series yields hundreds of occurrences; sharing the component and its resolved zone keeps each
/// occurrence five words long and its copies cheap (a scan sorts and prints hundreds of thousands of them).
public final class OccurrenceSource: Sendable {
    /// The collection or file the component came from (its display name).
    public let calendar: String
    /// The component as read (for an instance of a series: the master, or the override that replaced it).
    public let component: CalendarComponent
    /// Whether the occurrences are all-day (DATE values).
    public let allDay: Bool
    /// The zone the component's times were written in, or `nil` for UTC, floating and all-day values.
    public let timeZone: ZoneRules?
    /// The zone local times are shown in: `timeZone`, else the configured zone; on a trip, the zone there.
    public let displayZone: ZoneRules
    /// On a trip (`day.travelZone`), the user's home zone, shown beside the zone there; else `nil`.
    public let homeZone: ZoneRules?
    /// Whose calendar it is (`CalendarSource.scope`); empty unless a fleet's watcher holds several people's.
    public let scope: String
    /// What the classifier worked out about the component, on first use (`Classifier`).
    let classified = Mutex<Classifier.Known?>(nil)

    /// Creates the shared part of a component's occurrences.
    public init(
        calendar: String, component: CalendarComponent, allDay: Bool, timeZone: ZoneRules?, displayZone: ZoneRules,
        homeZone: ZoneRules? = nil, scope: String = ""
    ) {
        self.calendar = calendar
        self.scope = scope
        self.component = component
        self.allDay = allDay
        self.timeZone = timeZone
        self.displayZone = displayZone
        self.homeZone = homeZone
    }
}

/// One concrete occurrence of a calendar item: absolute start and end, and what it is.
public struct Occurrence: Sendable {
    /// The component this occurrence comes from, and its calendar.
    public var source: OccurrenceSource
    /// The original start of this instance when it belongs to a series (RECURRENCE-ID), else `nil`.
    public var recurrenceID: DateValueText?
    public var start: Instant
    public var end: Instant

    /// Creates an occurrence.
    public init(source: OccurrenceSource, recurrenceID: DateValueText?, start: Instant, end: Instant) {
        self.source = source
        self.recurrenceID = recurrenceID
        self.start = start
        self.end = end
    }

    public var allDay: Bool { source.allDay }
    /// The zone the item was written in, or `nil` for UTC, floating and all-day values.
    public var timeZone: ZoneRules? { source.timeZone }
    /// The zone local times are shown in: `timeZone`, else the configured zone.
    public var displayZone: ZoneRules { source.displayZone }

    public var calendar: String { source.calendar }
    public var scope: String { source.scope }
    public var uid: String { source.component.uid }
    public var summary: String? { source.component.summary }
    public var location: String? { source.component.location }
    public var description: String? { source.component.description }
    public var status: CalendarComponent.Status? { source.component.status }
    /// VEVENT or VTODO (to-dos only with `--todos`; their occurrence is the instant they are due).
    public var componentKind: CalendarComponent.Kind { source.component.kind }
    /// The VALARMs of the component this occurrence came from.
    public var alarms: [Alarm] { source.component.alarms }

    /// The local wall-clock start in `displayZone`.
    public var startLocal: LocalDateTime { displayZone.wallClock(at: start) }
}

/// A RECURRENCE-ID as calwatch prints it: a UTC instant, or a date for all-day series.
public enum DateValueText: Hashable, Sendable, CustomStringConvertible {
    case instant(Instant)
    /// A date, as days since 1970-01-01 (kept as one word: occurrences are many).
    case day(Int64)

    /// A RECURRENCE-ID that is a date.
    public static func date(_ date: CalendarDate) -> DateValueText { .day(date.daysSinceEpoch) }

    /// Reads the printed form back: `2027-03-01` or `2027-03-01T08:30:00Z`.
    public init?(text: String) {
        let compact = Substring(text.filter { $0 != "-" && $0 != ":" })
        switch DateValue(icalText: compact, reference: .utc) {
        case .date(let date): self = .date(date)
        case .dateTime(let wall, .utc): self = .instant(Instant(secondsSinceEpoch: wall.secondsAsUTC))
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .instant(let instant): instant.description
        case .day(let days): CalendarDate(daysSinceEpoch: days).description
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

    /// What a person is shown of `problems`: each file's first `limit`, then one line that counts the rest (an
    /// error when any of them is). A file of 30 KB with 2,000 unclosed `BEGIN:VEVENT` lines wrote 4,000 lines to
    /// the daemon's log each time it was read; its first lines say what is wrong with it as well.
    public static func shown(_ problems: [CalendarProblem], perFile limit: Int = 20) -> [CalendarProblem] {
        var seen: [String: (count: Int, error: Bool)] = [:]
        var shown: [CalendarProblem] = []
        var files: [String] = []
        for problem in problems {
            let before = seen[problem.path] ?? (0, false)
            if before.count == 0 { files.append(problem.path) }
            let rest = before.count >= limit
            seen[problem.path] = (before.count + 1, before.error || rest && problem.severity == .error)
            if !rest { shown.append(problem) }
        }
        for path in files {
            guard let (count, error) = seen[path], count > limit else { continue }
            shown.append(
                CalendarProblem(
                    severity: error ? .error : .warning, path: path,
                    message: "\(count - limit) more problems in this file are not shown; the first \(limit) are"))
        }
        return shown
    }

    /// `path:line: error: message`, with every excerpt of the file the message quotes ('…') and the UID left
    /// out: for places that others read (a fleet's `last_problem`), where the file's text must not show.
    public var withoutQuotedText: String {
        var message = ""
        var quoting = false
        for character in self.message {
            if quoting {
                quoting = character != "'"
            } else if character == "'", message.last.map({ $0.isWhitespace || "(:[".contains($0) }) ?? true {
                message += "'…'"
                quoting = true
            } else {
                message.append(character)
            }
        }
        return located(message)
    }

    /// `path:line: severity: message`.
    private func located(_ message: String) -> String {
        path + (line.map { ":\($0)" } ?? "") + ": \(severity.rawValue): \(message)"
    }

    /// `path:line: warning: message (UID uid)`, the shape compilers use so editors can jump to it.
    public var description: String {
        located(message) + (uid.map { $0.isEmpty ? "" : " (UID \($0))" } ?? "")
    }
}
