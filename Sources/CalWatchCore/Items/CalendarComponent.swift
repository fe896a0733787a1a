/// One VEVENT or VTODO as plain values: a series master, a single event, or an override of one instance.
public struct CalendarComponent: Sendable {
    /// Which kind of component this was.
    public enum Kind: String, Sendable { case event, todo }

    /// `STATUS`, reduced to what calwatch acts on.
    public enum Status: String, Sendable {
        case confirmed, tentative, cancelled
        /// A VTODO's `COMPLETED` or `IN-PROCESS`/`NEEDS-ACTION` are not event states; see `todoCompleted`.
        case other
    }

    public var kind: Kind
    public var uid: String
    public var summary: String?
    public var location: String?
    public var description: String?
    public var status: Status?
    /// `SEQUENCE`, used to choose between duplicate copies of one component.
    public var sequence: Int
    /// `LAST-MODIFIED` or `DTSTAMP`, the tie-breaker after `sequence`.
    public var lastModified: DateValue?
    public var start: DateValue?
    public var end: DateValue?
    public var due: DateValue?
    public var duration: ICalDuration?
    /// RRULE texts, after repair where the original did not parse.
    public var recurrenceRules: [String]
    public var recurrenceDates: [RecurrenceDate]
    public var exceptionDates: [DateValue]
    /// EXRULE texts (RFC 2445; deprecated by RFC 5545 but still written by older producers).
    public var exceptionRules: [String]
    public var recurrenceID: DateValue?
    /// `RECURRENCE-ID;RANGE=THISANDFUTURE`: this override also moves every later instance.
    public var rangeThisAndFuture: Bool
    /// Whether a VTODO is finished (`STATUS:COMPLETED` or a `COMPLETED` time).
    public var todoCompleted: Bool
    public var alarms: [Alarm]
    /// Problems libical reported inside this component, already worded for the user.
    public var problems: [String]
    /// Problems that lose part of the item (an RRULE that cannot be read: only its first instance is used).
    public var errors: [String] = []
    /// Property names that are neither iCalendar's nor `X-` (Teamup writes its own): ignored, and reported once per
    /// file rather than once per item.
    public var unknownProperties: [String] = []
    /// The line of the file where the component begins, when known.
    public var line: Int?
    /// `ATTENDEE`s, as the meeting classifier needs them.
    public var attendees: [Attendee] = []
    /// The `ORGANIZER`'s address, without `mailto:`, lower case.
    public var organizer: String?
    /// `TRANSP:TRANSPARENT` (or Outlook's `X-MICROSOFT-CDO-BUSYSTATUS:FREE`): the time is shown as free, so the
    /// item never conflicts with another.
    public var transparent = false
    /// The properties join links are read from besides LOCATION and DESCRIPTION, in file order: `CONFERENCE`,
    /// `URL`, `X-GOOGLE-CONFERENCE`, `X-MICROSOFT-SKYPETEAMSMEETINGURL`, `X-MICROSOFT-ONLINEMEETING*`, and
    /// the HTML description `X-ALT-DESC`.
    public var linkProperties: [NamedText] = []
    /// Where the item takes place: its `GEO`, else the point of Apple's `X-APPLE-STRUCTURED-LOCATION`.
    public var geo: GeoPoint? {
        get { whereabouts?.geo }
        set { whereabouts = Whereabouts.of(newValue, placeTitle, travelDuration) }
    }
    /// The place's name in `X-APPLE-STRUCTURED-LOCATION` (its `X-TITLE`), as Apple Calendar shows it.
    public var placeTitle: String? {
        get { whereabouts?.placeTitle }
        set { whereabouts = Whereabouts.of(geo, newValue, travelDuration) }
    }
    /// How long the way there takes, as Apple Calendar writes it (`X-APPLE-TRAVEL-DURATION`).
    public var travelDuration: ICalDuration? {
        get { whereabouts?.travelDuration }
        set { whereabouts = Whereabouts.of(geo, placeTitle, newValue) }
    }
    /// The three above, held by reference: most items have none, and each item would otherwise carry 64 bytes for
    /// them (a megabyte and more on a 10,000-item scan).
    private var whereabouts: Whereabouts?

    private final class Whereabouts: Sendable, Hashable {
        let geo: GeoPoint?
        let placeTitle: String?
        let travelDuration: ICalDuration?

        private init(_ geo: GeoPoint?, _ placeTitle: String?, _ travelDuration: ICalDuration?) {
            self.geo = geo
            self.placeTitle = placeTitle
            self.travelDuration = travelDuration
        }

        static func of(_ geo: GeoPoint?, _ placeTitle: String?, _ travelDuration: ICalDuration?) -> Whereabouts? {
            geo == nil && placeTitle == nil && travelDuration == nil
                ? nil : Whereabouts(geo, placeTitle, travelDuration)
        }

        static func == (a: Whereabouts, b: Whereabouts) -> Bool {
            a.geo == b.geo && a.placeTitle == b.placeTitle && a.travelDuration == b.travelDuration
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(geo)
            hasher.combine(placeTitle)
            hasher.combine(travelDuration)
        }
    }
    /// The calendar's own answers, as Thunderbird writes them: `X-MOZ-LASTACK`, the instant up to which its
    /// alarms were acknowledged (none at or before it comes again).
    public var acknowledgedThrough: Instant?
    /// `X-MOZ-SNOOZE-TIME` (every instance) and `X-MOZ-SNOOZE-TIME-<start in µs>` (one instance of a series): a
    /// reminder snoozed until then.
    public var calendarSnoozes: [CalendarSnooze] = []

    /// A snooze written into the calendar.
    public struct CalendarSnooze: Hashable, Sendable {
        /// The instance it is for (its start), or `nil` for every one.
        public var occurrenceStart: Instant?
        public var until: Instant
    }

    /// Creates an empty component of a kind; the reader fills it property by property.
    public init(kind: Kind, uid: String = "") {
        self.kind = kind
        self.uid = uid
        self.sequence = 0
        self.recurrenceRules = []
        self.recurrenceDates = []
        self.exceptionDates = []
        self.exceptionRules = []
        self.rangeThisAndFuture = false
        self.todoCompleted = false
        self.alarms = []
        self.problems = []
    }

    /// Whether this component defines a recurring series (RRULE or RDATE).
    public var isRecurring: Bool { !recurrenceRules.isEmpty || !recurrenceDates.isEmpty }
}

/// One RDATE value: a start, or a period with its own end.
public enum RecurrenceDate: Hashable, Sendable {
    case start(DateValue)
    case period(DateValue, end: DateValue)
    case periodWithDuration(DateValue, ICalDuration)

    /// The start the RDATE adds.
    public var start: DateValue {
        switch self {
        case .start(let value), .period(let value, _), .periodWithDuration(let value, _): value
        }
    }
}

/// A VALARM inside a component.
public struct Alarm: Hashable, Sendable {
    /// When the alarm fires.
    public enum Trigger: Hashable, Sendable {
        /// An offset from the start (`RELATED=START`, the default) or the end (`RELATED=END`).
        case relative(ICalDuration, toEnd: Bool)
        /// `VALUE=DATE-TIME`: a fixed UTC instant.
        case absolute(DateValue)
    }

    public var action: String
    public var trigger: Trigger
    /// `REPEAT`: how many more times the alarm fires after the first.
    public var repeatCount: Int
    /// `DURATION`: the gap between repeats.
    public var repeatInterval: ICalDuration?
    public var description: String?
    /// RFC 9074 `ACKNOWLEDGED`: when another device acknowledged the alarm; a firing at or before it is not repeated.
    public var acknowledged: Instant?

    /// Creates an alarm.
    public init(
        action: String, trigger: Trigger, repeatCount: Int = 0, repeatInterval: ICalDuration? = nil,
        description: String? = nil
    ) {
        self.action = action
        self.trigger = trigger
        self.repeatCount = repeatCount
        self.repeatInterval = repeatInterval
        self.description = description
    }
}

/// One `ATTENDEE`.
public struct Attendee: Hashable, Sendable {
    /// The address without `mailto:`, lower case.
    public var address: String
    /// `CN`.
    public var name: String?
    /// `PARTSTAT`, upper case (`ACCEPTED`, `DECLINED`, …), `nil` when absent.
    public var participation: String?

    public init(address: String, name: String? = nil, participation: String? = nil) {
        self.address = address
        self.name = name
        self.participation = participation
    }
}

/// A property's name and text value.
public struct NamedText: Hashable, Sendable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
