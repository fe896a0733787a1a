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

    /// How the item shows its time, as Outlook (`X-MICROSOFT-CDO-BUSYSTATUS`, Graph's `showAs`) and Google
    /// (`X-GOOGLE-EVENT-TYPE`, the Calendar API's `eventType`) say it; rules choose by it (`showAs:`).
    public enum ShowAs: String, Sendable, CaseIterable {
        case busy, free, tentative, outOfOffice, workingElsewhere, focusTime, workingLocation
    }

    /// The fields, held by reference and copied on write: an occurrence's source and the file's parsed calendar
    /// share one copy of each item (half a kilobyte) instead of holding one each.
    private var storage: Storage<Fields>

    /// Unchecked: `fields` is changed only through `mutate` and `mutateRare`, on a storage no other value holds.
    private final class Storage<Held: Sendable>: @unchecked Sendable {
        var fields: Held
        init(_ fields: Held) { self.fields = fields }
    }

    /// What nearly every item has. The rest (`Rare`) is held by reference and only when set: a plain item's
    /// fields took 520 bytes inline, and a daemon holds one per calendar item (52 MB for 100,000).
    /// The small fields come first, in one word: stored in declaration order, the storage is then 216 bytes, in
    /// glibc's 224-byte size class rather than the 256-byte one.
    private struct Fields: Sendable {
        var kind: Kind
        var status: Status? = nil
        var transparent: Bool = false
        /// The line the component begins on, 0 when not known (a file is at most 256 MiB).
        var line: Int32 = 0
        var uid: String
        var summary: String? = nil
        var location: String? = nil
        var description: String? = nil
        var sequence = 0
        /// `LAST-MODIFIED`, else `DTSTAMP`, which every item has.
        var lastModified: DateValue? = nil
        var start: DateValue? = nil
        var end: DateValue? = nil
        var recurrenceRules: [String] = []
        var alarms: [Alarm] = []
        var rare: Storage<Rare>? = nil
    }

    /// The fields most items lack (a plain event written by a server has none of them).
    private struct Rare: Sendable, Equatable {
        var due: DateValue? = nil
        var duration: ICalDuration? = nil
        var recurrenceDates: [RecurrenceDate] = []
        var exceptionDates: [DateValue] = []
        var exceptionRules: [String] = []
        var recurrenceID: DateValue? = nil
        var rangeThisAndFuture = false
        var todoCompleted = false
        var problems: [String] = []
        var errors: [String] = []
        var unknownProperties: [String] = []
        var attendees: [Attendee] = []
        var organizer: String? = nil
        var linkProperties: [NamedText] = []
        var declaredKind: String? = nil
        var showAs: ShowAs? = nil
        var whereabouts: Whereabouts? = nil
        var acknowledgedThrough: Instant? = nil
        var calendarSnoozes: [CalendarSnooze] = []

        static let none = Rare()
    }

    /// A rare field's value (its default when none is set).
    private func rare<Value>(_ field: (Rare) -> Value) -> Value {
        if let rare = storage.fields.rare { return field(rare.fields) }
        return field(Rare.none)
    }

    /// Sets rare fields; nothing is allocated while they keep their defaults.
    private mutating func mutateRare(_ change: (inout Rare) -> Void) {
        mutate { fields in
            guard var box = fields.rare else {
                var rare = Rare()
                change(&rare)
                if rare != Rare.none { fields.rare = Storage(rare) }
                return
            }
            fields.rare = nil
            if !isKnownUniquelyReferenced(&box) { box = Storage(box.fields) }
            change(&box.fields)
            fields.rare = box
        }
    }

    private mutating func mutate(_ change: (inout Fields) -> Void) {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        change(&storage.fields)
    }

    public var kind: Kind {
        get { storage.fields.kind }
        set { mutate { $0.kind = newValue } }
    }
    public var uid: String {
        get { storage.fields.uid }
        set { mutate { $0.uid = newValue } }
    }
    public var summary: String? {
        get { storage.fields.summary }
        set { mutate { $0.summary = newValue } }
    }
    public var location: String? {
        get { storage.fields.location }
        set { mutate { $0.location = newValue } }
    }
    public var description: String? {
        get { storage.fields.description }
        set { mutate { $0.description = newValue } }
    }
    public var status: Status? {
        get { storage.fields.status }
        set { mutate { $0.status = newValue } }
    }
    /// `SEQUENCE`, used to choose between duplicate copies of one component.
    public var sequence: Int {
        get { storage.fields.sequence }
        set { mutate { $0.sequence = newValue } }
    }
    /// `LAST-MODIFIED` or `DTSTAMP`, the tie-breaker after `sequence`.
    public var lastModified: DateValue? {
        get { storage.fields.lastModified }
        set { mutate { $0.lastModified = newValue } }
    }
    public var start: DateValue? {
        get { storage.fields.start }
        set { mutate { $0.start = newValue } }
    }
    public var end: DateValue? {
        get { storage.fields.end }
        set { mutate { $0.end = newValue } }
    }
    public var due: DateValue? {
        get { rare { $0.due } }
        set { mutateRare { $0.due = newValue } }
    }
    public var duration: ICalDuration? {
        get { rare { $0.duration } }
        set { mutateRare { $0.duration = newValue } }
    }
    /// RRULE texts, after repair where the original did not parse.
    public var recurrenceRules: [String] {
        get { storage.fields.recurrenceRules }
        set { mutate { $0.recurrenceRules = newValue } }
    }
    public var recurrenceDates: [RecurrenceDate] {
        get { rare { $0.recurrenceDates } }
        set { mutateRare { $0.recurrenceDates = newValue } }
    }
    public var exceptionDates: [DateValue] {
        get { rare { $0.exceptionDates } }
        set { mutateRare { $0.exceptionDates = newValue } }
    }
    /// EXRULE texts (RFC 2445; deprecated by RFC 5545 but still written by older producers).
    public var exceptionRules: [String] {
        get { rare { $0.exceptionRules } }
        set { mutateRare { $0.exceptionRules = newValue } }
    }
    public var recurrenceID: DateValue? {
        get { rare { $0.recurrenceID } }
        set { mutateRare { $0.recurrenceID = newValue } }
    }
    /// `RECURRENCE-ID;RANGE=THISANDFUTURE`: this override also moves every later instance.
    public var rangeThisAndFuture: Bool {
        get { rare { $0.rangeThisAndFuture } }
        set { mutateRare { $0.rangeThisAndFuture = newValue } }
    }
    /// Whether a VTODO is finished (`STATUS:COMPLETED` or a `COMPLETED` time).
    public var todoCompleted: Bool {
        get { rare { $0.todoCompleted } }
        set { mutateRare { $0.todoCompleted = newValue } }
    }
    public var alarms: [Alarm] {
        get { storage.fields.alarms }
        set { mutate { $0.alarms = newValue } }
    }
    /// Problems libical reported inside this component, already worded for the user.
    public var problems: [String] {
        get { rare { $0.problems } }
        set { mutateRare { $0.problems = newValue } }
    }
    /// Problems that lose part of the item (an RRULE that cannot be read: only its first instance is used).
    public var errors: [String] {
        get { rare { $0.errors } }
        set { mutateRare { $0.errors = newValue } }
    }
    /// Property names that are neither iCalendar's nor `X-` (Teamup writes its own): ignored, and reported once per
    /// file rather than once per item.
    public var unknownProperties: [String] {
        get { rare { $0.unknownProperties } }
        set { mutateRare { $0.unknownProperties = newValue } }
    }
    /// The line of the file where the component begins, when known.
    public var line: Int? {
        get { storage.fields.line > 0 ? Int(storage.fields.line) : nil }
        set { mutate { $0.line = Int32(clamping: max(newValue ?? 0, 0)) } }
    }
    /// `ATTENDEE`s, as the meeting classifier needs them.
    public var attendees: [Attendee] {
        get { rare { $0.attendees } }
        set { mutateRare { $0.attendees = newValue } }
    }
    /// The `ORGANIZER`'s address, without `mailto:`, lower case.
    public var organizer: String? {
        get { rare { $0.organizer } }
        set { mutateRare { $0.organizer = newValue } }
    }
    /// `TRANSP:TRANSPARENT` (or Outlook's `X-MICROSOFT-CDO-BUSYSTATUS:FREE`): the time is shown as free, so the
    /// item never conflicts with another.
    public var transparent: Bool {
        get { storage.fields.transparent }
        set { mutate { $0.transparent = newValue } }
    }
    /// The properties join links are read from besides LOCATION and DESCRIPTION, in file order: `CONFERENCE`,
    /// `URL`, `X-GOOGLE-CONFERENCE`, `X-MICROSOFT-SKYPETEAMSMEETINGURL`, `X-MICROSOFT-ONLINEMEETING*`, and
    /// the HTML description `X-ALT-DESC`.
    public var linkProperties: [NamedText] {
        get { rare { $0.linkProperties } }
        set { mutateRare { $0.linkProperties = newValue } }
    }
    /// `X-CALWATCH-KIND` as written: what the item says it is (`flight`, `meeting`, `event`), over any judgement.
    public var declaredKind: String? {
        get { rare { $0.declaredKind } }
        set { mutateRare { $0.declaredKind = newValue } }
    }
    /// What the producer said of how the time shows (`X-MICROSOFT-CDO-BUSYSTATUS`, `X-GOOGLE-EVENT-TYPE`); `nil`
    /// when it said nothing.
    public var declaredShowAs: ShowAs? {
        get { rare { $0.showAs } }
        set { mutateRare { $0.showAs = newValue } }
    }
    /// How the time shows: as declared, else free for `TRANSP:TRANSPARENT`, tentative for `STATUS:TENTATIVE`, busy.
    public var showAs: ShowAs {
        declaredShowAs ?? (transparent ? .free : status == .tentative ? .tentative : .busy)
    }
    /// `geo`, `placeTitle` and `travelDuration` (below), held by reference: most items have none, and each item
    /// would otherwise carry 64 bytes for them (a megabyte and more on a 10,000-item scan).
    private var whereabouts: Whereabouts? {
        get { rare { $0.whereabouts } }
        set { mutateRare { $0.whereabouts = newValue } }
    }
    /// The calendar's own answers, as Thunderbird writes them: `X-MOZ-LASTACK`, the instant up to which its
    /// alarms were acknowledged (none at or before it comes again).
    public var acknowledgedThrough: Instant? {
        get { rare { $0.acknowledgedThrough } }
        set { mutateRare { $0.acknowledgedThrough = newValue } }
    }
    /// `X-MOZ-SNOOZE-TIME` (every instance) and `X-MOZ-SNOOZE-TIME-<start in µs>` (one instance of a series): a
    /// reminder snoozed until then.
    public var calendarSnoozes: [CalendarSnooze] {
        get { rare { $0.calendarSnoozes } }
        set { mutateRare { $0.calendarSnoozes = newValue } }
    }
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

    /// A snooze written into the calendar.
    public struct CalendarSnooze: Hashable, Sendable {
        /// The instance it is for (its start), or `nil` for every one.
        public var occurrenceStart: Instant?
        public var until: Instant
    }

    /// Creates an empty component of a kind; the reader fills it property by property.
    public init(kind: Kind, uid: String = "") {
        storage = Storage(Fields(kind: kind, uid: uid))
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
