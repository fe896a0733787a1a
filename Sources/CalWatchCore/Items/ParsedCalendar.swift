/// One VCALENDAR object read from a source, as plain values.
public struct ParsedCalendar: Sendable {
    /// `X-WR-CALNAME`.
    public var name: String?
    /// `X-WR-TIMEZONE`: applies to UTC and floating values of this calendar (docs/design.md §3).
    public var defaultTimeZone: String?
    public var components: [CalendarComponent]
    /// The calendar's own VTIMEZONE definitions, by TZID.
    public var timeZones: [String: TimeZoneDefinition]
    /// Problems found outside any event (structure, calendar properties), worded for the user.
    public var problems: [ParseProblem]

    /// Creates an empty calendar.
    public init() {
        self.components = []
        self.timeZones = [:]
        self.problems = []
    }
}

/// A problem found while reading calendar text, with its line when known.
public struct ParseProblem: Sendable, Hashable {
    public var line: Int?
    public var message: String

    /// Creates a problem.
    public init(line: Int? = nil, message: String) {
        self.line = line
        self.message = message
    }
}

/// A VTIMEZONE: the observances (STANDARD/DAYLIGHT) a calendar defines for one TZID.
public struct TimeZoneDefinition: Sendable {
    /// One STANDARD or DAYLIGHT block.
    public struct Observance: Sendable {
        /// The first onset, as wall time in the offset before it (`TZOFFSETFROM`).
        public var start: LocalDateTime
        public var offsetFrom: Int
        public var offsetTo: Int
        public var recurrenceRule: String?
        public var recurrenceDates: [LocalDateTime]

        /// Creates an observance.
        public init(
            start: LocalDateTime, offsetFrom: Int, offsetTo: Int, recurrenceRule: String? = nil,
            recurrenceDates: [LocalDateTime] = []
        ) {
            self.start = start
            self.offsetFrom = offsetFrom
            self.offsetTo = offsetTo
            self.recurrenceRule = recurrenceRule
            self.recurrenceDates = recurrenceDates
        }
    }

    public var tzid: String
    public var observances: [Observance]

    /// Creates a definition.
    public init(tzid: String, observances: [Observance] = []) {
        self.tzid = tzid
        self.observances = observances
    }
}
