import CICal
import Foundation

/// Reads iCalendar text with libical and returns plain Swift values; no libical pointer leaves this file.
enum ICalDocumentParser {
    /// Events handed to libical per call: small enough that its tree stays in cache, large enough that the per-call
    /// cost vanishes.
    static let batchSize = 128

    /// Parses one iCalendar stream (which may hold several VCALENDARs, or bare VEVENTs).
    ///
    /// A UTF-8 byte-order mark is skipped. Well-formed calendars are read in batches (see `ICalendarLayout`), which
    /// also gives each component the line it starts on; anything else goes to libical whole.
    static func parse(_ bytes: [UInt8]) -> [ParsedCalendar] {
        _ = LibICal.ready
        let offset = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var text = offset == 0 ? bytes : Array(bytes[offset...])
        // libical reads C strings: a NUL byte would silently end the file there.
        var problems: [ParseProblem] = []
        if let first = text.firstIndex(of: 0) {
            let line = text[..<first].reduce(1) { $1 == 10 ? $0 + 1 : $0 }
            text.removeAll { $0 == 0 }
            problems.append(ParseProblem(line: line, message: "NUL bytes removed (the first on this line)"))
        }
        problems += PropertyLengthLimit.removeLongProperties(from: &text)
        guard let layout = ICalendarLayout.scan(text) else {
            problems += ICalendarLayout.blankUnmatchedEnds(in: &text).map {
                ParseProblem(line: $0.line, message: $0.message)
            }
            var calendars = parseWhole(text)
            if !calendars.isEmpty { calendars[0].problems = problems + calendars[0].problems }
            return calendars
        }
        problems += layout.repairs.map { ParseProblem(line: $0.line, message: $0.message) }
        let items = layout.calendars.reduce(0) { $0 + $1.children.count }
        var calendars: [ParsedCalendar]
        if items <= batchSize && layout.repairs.isEmpty {
            // A vdir item or a small, well-formed file: one libical call, lines taken from the layout.
            if let read = parseWithKnownZones(text, layout: layout) {
                calendars = read
            } else {
                calendars = parseWhole(text)
                if calendars.count == layout.calendars.count {
                    for index in calendars.indices {
                        assignLines(layout.calendars[index].children, of: text, to: &calendars[index].components)
                    }
                }
            }
        } else {
            calendars = layout.calendars.map { parseInBatches($0, of: text) }
        }
        if !calendars.isEmpty { calendars[0].problems = problems + calendars[0].problems }
        return calendars
    }

    /// Gives each event and to-do the line it starts on, when libical kept all of them (it drops broken ones), and
    /// puts back what libical lost of its RRULEs (`writtenRule`).
    private static func assignLines<C: Collection<ICalendarLayout.Child>>(
        _ children: C, of text: [UInt8], to components: inout [CalendarComponent]
    ) {
        let items = children.filter { $0.name == "VEVENT" || $0.name == "VTODO" }
        guard items.count == components.count else { return }
        for (index, child) in zip(components.indices, items) {
            components[index].line = child.line
            guard components[index].isRecurring else { continue }
            let bytes = child.bytes(of: text)
            restoreDateLists(of: &components[index], from: bytes)
            guard !components[index].recurrenceRules.isEmpty else { continue }
            let written = RecurrenceRuleText.written(in: bytes)
            guard written.count == components[index].recurrenceRules.count else { continue }
            for (rule, original) in zip(components[index].recurrenceRules.indices, written) {
                components[index].recurrenceRules[rule] = RecurrenceRuleText.restoring(
                    components[index].recurrenceRules[rule], from: original)
            }
        }
    }

    /// libical keeps only the first 500 values of a comma-separated EXDATE or RDATE (a series with years of
    /// cancelled days got them back): when it kept fewer than were written, the written lists are read instead.
    private static func restoreDateLists(of component: inout CalendarComponent, from bytes: ArraySlice<UInt8>) {
        let exceptions = WrittenProperties.named("EXDATE", in: bytes)
        if exceptions.reduce(0, { $0 + $1.value.split(separator: ",").count }) > component.exceptionDates.count {
            component.exceptionDates = exceptions.flatMap { dateValues($0.value, reference: $0.reference) }
        }
        let additions = WrittenProperties.named("RDATE", in: bytes)
        if additions.reduce(0, { $0 + $1.value.split(separator: ",").count }) > component.recurrenceDates.count {
            component.recurrenceDates = additions.flatMap { recurrenceDates($0.value, reference: $0.reference) }
        }
    }

    private static func parseInBatches(_ layout: ICalendarLayout.Calendar, of text: [UInt8]) -> ParsedCalendar {
        // The header: the calendar's own properties and every VTIMEZONE, read once.
        var header = calendarBegin
        for range in layout.propertyRanges { header += text[range] }
        for child in layout.children where child.name == "VTIMEZONE" { header += child.bytes(of: text) }
        header += calendarEnd
        var calendar = parseWhole(header).first ?? ParsedCalendar()
        let items = layout.children.filter { $0.name != "VTIMEZONE" }
        // One component per item, at its exact size: the components are most of what a large file's scan holds.
        calendar.components.reserveCapacity(items.count)
        // The batches are independent: parsed on all cores, a few at a time (so that only those are held twice),
        // and taken in in order.
        let round = batchSize * 2 * ParallelRuns.workers
        for roundStart in stride(from: 0, to: items.count, by: round) {
            let roundItems = Array(items[roundStart..<min(roundStart + round, items.count)])
            let parts = ParallelRuns.map(roundItems, runLength: batchSize) { batch in
                var chunk = calendarBegin
                for child in batch { chunk += child.bytes(of: text) }
                chunk += calendarEnd
                return parseWhole(chunk).map { part in
                    // The part let go of first, so that the components are changed in place, not copied.
                    var part = part
                    var components = part.components
                    part.components = []
                    assignLines(batch, of: text, to: &components)
                    return (components, part.problems)
                }
            }
            for (components, problems) in parts.joined() {
                calendar.components += components
                calendar.problems += problems
            }
        }
        return calendar
    }

    /// What encloses components handed to libical apart from their file.
    private static let calendarBegin = Array("BEGIN:VCALENDAR\r\n".utf8)
    private static let calendarEnd = Array("END:VCALENDAR\r\n".utf8)

    /// The VTIMEZONEs read so far, by their text: a vdir repeats the same few in every item (each item carries the
    /// zones its times name), and they are often more than half of its lines.
    private static let knownZones = Locked<[[UInt8]: [String: TimeZoneDefinition]]>([:])
    /// Distinct VTIMEZONE texts kept: a user's calendars name tens of zones; a feed that varies them is not kept
    /// beyond this.
    static let knownZonesLimit = 256
    /// The longest VTIMEZONE text kept (a zone's rules take 1–3 KB; one listing years of RDATEs is read each time).
    static let knownZoneBytes = 16 << 10

    /// Parses a small calendar whose VTIMEZONEs were all read before without handing them to libical again:
    /// about half of libical's work on a vdir item. Times are read as written with their `TZID`, so the zones'
    /// absence from libical's tree changes nothing else; `nil` when there is nothing to gain or the text does not
    /// come out as the layout says (the caller then parses it whole).
    private static func parseWithKnownZones(_ text: [UInt8], layout: ICalendarLayout) -> [ParsedCalendar]? {
        var zonesByCalendar: [[String: TimeZoneDefinition]] = []
        var cut: [Range<Int>] = []
        for calendar in layout.calendars {
            var zones: [String: TimeZoneDefinition] = [:]
            for child in calendar.children where child.name == "VTIMEZONE" {
                guard child.edits.isEmpty, child.range.count <= knownZoneBytes else { return nil }
                let defined = definitions(ofZone: Array(text[child.range]))
                // One zone (the usual item) shares the cached table rather than copying it into one of its own.
                if zones.isEmpty { zones = defined } else { zones.merge(defined) { $1 } }
                cut.append(child.range)
            }
            zonesByCalendar.append(zones)
        }
        guard !cut.isEmpty else { return nil }
        var rest: [UInt8] = []
        rest.reserveCapacity(text.count)
        var position = 0
        for range in cut.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            rest += text[position..<range.lowerBound]
            position = range.upperBound
        }
        rest += text[position...]
        var calendars = parseWhole(rest)
        guard calendars.count == layout.calendars.count else { return nil }
        for index in calendars.indices {
            if calendars[index].timeZones.isEmpty {
                calendars[index].timeZones = zonesByCalendar[index]
            } else {
                calendars[index].timeZones.merge(zonesByCalendar[index]) { $1 }
            }
            assignLines(layout.calendars[index].children, of: text, to: &calendars[index].components)
        }
        return calendars
    }

    /// What one VTIMEZONE's text defines, read by libical the first time it is met.
    private static func definitions(ofZone zone: [UInt8]) -> [String: TimeZoneDefinition] {
        if let known = knownZones.withLock({ $0[zone] }) { return known }
        let definitions =
            parseWhole(calendarBegin + zone + calendarEnd).first?.timeZones
            ?? [:]
        knownZones.withLock { known in
            if known.count >= knownZonesLimit { known.removeAll() }
            known[zone] = definitions
        }
        return definitions
    }

    /// Hands a whole text to libical.
    private static func parseWhole(_ bytes: [UInt8]) -> [ParsedCalendar] {
        var text = bytes
        text.append(0)
        let root: OpaquePointer? = text.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                icalparser_parse_string($0)
            }
        }
        icalerror_clear_errno()
        guard let root else { return [] }
        // "icalparser_parse_string: returns a component the caller owns", freed once everything is copied out.
        defer { icalcomponent_free(root) }
        return calendars(in: root)
    }

    private static func calendars(in root: OpaquePointer) -> [ParsedCalendar] {
        switch icalcomponent_isa(root) {
        case ICAL_VCALENDAR_COMPONENT:
            return [calendar(root)]
        case ICAL_XROOT_COMPONENT:
            var result: [ParsedCalendar] = []
            var loose = ParsedCalendar()
            forEachChild(of: root) { child in
                if icalcomponent_isa(child) == ICAL_VCALENDAR_COMPONENT {
                    result.append(calendar(child))
                } else {
                    read(child, into: &loose)
                }
            }
            if !loose.components.isEmpty { result.append(loose) }
            return result
        default:
            var loose = ParsedCalendar()
            read(root, into: &loose)
            return loose.components.isEmpty && loose.timeZones.isEmpty ? [] : [loose]
        }
    }

    private static func calendar(_ component: OpaquePointer) -> ParsedCalendar {
        var calendar = ParsedCalendar()
        forEachProperty(of: component) { property in
            switch icalproperty_isa(property) {
            case ICAL_X_PROPERTY:
                switch LibICal.string(icalproperty_get_x_name(property))?.uppercased() {
                case "X-WR-CALNAME": calendar.name = textValue(property)
                case "X-WR-TIMEZONE": calendar.defaultTimeZone = textValue(property)
                default: break
                }
            case ICAL_XLICERROR_PROPERTY:
                calendar.problems.append(ParseProblem(message: errorText(property)))
            default: break
            }
        }
        forEachChild(of: component) { read($0, into: &calendar) }
        return calendar
    }

    private static func read(_ component: OpaquePointer, into calendar: inout ParsedCalendar) {
        switch icalcomponent_isa(component) {
        case ICAL_VEVENT_COMPONENT: calendar.components.append(item(component, kind: .event))
        case ICAL_VTODO_COMPONENT: calendar.components.append(item(component, kind: .todo))
        case ICAL_VTIMEZONE_COMPONENT:
            if let definition = timeZone(component) { calendar.timeZones[definition.tzid] = definition }
        default: break
        }
    }

    // MARK: VEVENT / VTODO

    private static func item(_ component: OpaquePointer, kind: CalendarComponent.Kind) -> CalendarComponent {
        var item = CalendarComponent(kind: kind)
        var dtstamp: DateValue?
        forEachProperty(of: component) { property in
            switch icalproperty_isa(property) {
            case ICAL_UID_PROPERTY: item.uid = LibICal.string(icalproperty_get_uid(property)) ?? ""
            case ICAL_SUMMARY_PROPERTY: item.summary = LibICal.string(icalproperty_get_summary(property))
            case ICAL_LOCATION_PROPERTY: item.location = LibICal.string(icalproperty_get_location(property))
            case ICAL_DESCRIPTION_PROPERTY: item.description = LibICal.string(icalproperty_get_description(property))
            case ICAL_STATUS_PROPERTY:
                switch rawValue(property).uppercased() {
                case "CONFIRMED": item.status = .confirmed
                case "TENTATIVE": item.status = .tentative
                case "CANCELLED", "CANCELED": item.status = .cancelled
                case "COMPLETED":
                    item.status = .other
                    item.todoCompleted = true
                default: item.status = .other
                }
            case ICAL_COMPLETED_PROPERTY: item.todoCompleted = true
            case ICAL_SEQUENCE_PROPERTY: item.sequence = Int(icalproperty_get_sequence(property))
            case ICAL_LASTMODIFIED_PROPERTY: item.lastModified = dateValue(property)
            case ICAL_DTSTAMP_PROPERTY: dtstamp = dateValue(property)
            case ICAL_DTSTART_PROPERTY: item.start = dateValue(property)
            case ICAL_DTEND_PROPERTY: item.end = dateValue(property)
            case ICAL_DUE_PROPERTY: item.due = dateValue(property)
            case ICAL_DURATION_PROPERTY: item.duration = ICalDuration(icalText: Substring(rawValue(property)))
            case ICAL_RRULE_PROPERTY: item.recurrenceRules.append(rawValue(property))
            case ICAL_RDATE_PROPERTY: item.recurrenceDates += recurrenceDates(property)
            case ICAL_EXDATE_PROPERTY: item.exceptionDates += dateValues(property)
            case ICAL_EXRULE_PROPERTY: item.exceptionRules.append(rawValue(property))
            case ICAL_RECURRENCEID_PROPERTY:
                item.recurrenceID = dateValue(property)
                if let range = icalproperty_get_first_parameter(property, ICAL_RANGE_PARAMETER) {
                    item.rangeThisAndFuture = icalparameter_get_range(range) == ICAL_RANGE_THISANDFUTURE
                }
            case ICAL_XLICERROR_PROPERTY: readError(property, into: &item)
            case ICAL_ATTENDEE_PROPERTY: item.attendees.append(attendee(property))
            case ICAL_ORGANIZER_PROPERTY: item.organizer = address(rawValue(property))
            case ICAL_TRANSP_PROPERTY: item.transparent = rawValue(property).uppercased() == "TRANSPARENT"
            case ICAL_CONFERENCE_PROPERTY, ICAL_URL_PROPERTY:
                item.linkProperties.append(NamedText(name: propertyName(property), value: rawValue(property)))
            case ICAL_GEO_PROPERTY:
                if let point = GeoPoint(icalGeo: rawValue(property)) { item.geo = point }
            case ICAL_X_PROPERTY:
                let name = LibICal.string(icalproperty_get_x_name(property))?.uppercased() ?? ""
                if Self.linkPropertyNames.contains(name) || name.hasPrefix("X-MICROSOFT-ONLINEMEETING") {
                    item.linkProperties.append(NamedText(name: name, value: textValue(property)))
                } else if name == "X-CALWATCH-KIND" {
                    let value = String(textValue(property).prefix(32))
                    item.declaredKind = value
                    let kind = value.trimmingCharacters(in: .whitespaces).lowercased()
                    if OccurrenceFacts.Kind(rawValue: kind) == nil {
                        item.problems.append(
                            "X-CALWATCH-KIND '\(TerminalText.safe(value, keepingLines: false))' is not flight, "
                                + "meeting or event; it is ignored and calwatch's judgement decides. Write one of the three."
                        )
                    }
                } else if name == "X-MICROSOFT-CDO-BUSYSTATUS" {
                    let status = textValue(property).uppercased()
                    if status == "FREE" { item.transparent = true }
                    // Google's event type, more telling, is kept when both are there.
                    if item.declaredShowAs == nil { item.declaredShowAs = Self.busyStatuses[status] }
                } else if name == "X-GOOGLE-EVENT-TYPE" {
                    let type = CalendarComponent.ShowAs(rawValue: textValue(property))
                    if let type, [.outOfOffice, .focusTime, .workingLocation].contains(type) {
                        item.declaredShowAs = type
                    }
                } else if name == "X-APPLE-TRAVEL-DURATION" {
                    item.travelDuration = ICalDuration(icalText: Substring(textValue(property)))
                } else if name == "X-APPLE-STRUCTURED-LOCATION" {
                    // GEO, where an item has both, is the producer's own.
                    if item.geo == nil { item.geo = GeoPoint(geoURI: textValue(property)) }
                    item.placeTitle = xParameter("X-TITLE", of: property).flatMap { $0.isEmpty ? nil : $0 }
                } else if name == "X-MOZ-LASTACK" {
                    item.acknowledgedThrough = utcInstant(textValue(property))
                } else if name.hasPrefix("X-MOZ-SNOOZE-TIME"), let until = utcInstant(textValue(property)) {
                    let suffix = name.dropFirst("X-MOZ-SNOOZE-TIME".count)
                    if suffix.isEmpty {
                        item.calendarSnoozes.append(.init(occurrenceStart: nil, until: until))
                    } else if suffix.first == "-", let microseconds = Int64(suffix.dropFirst()) {
                        item.calendarSnoozes.append(
                            .init(occurrenceStart: Instant(secondsSinceEpoch: microseconds / 1_000_000), until: until))
                    }
                }
            default: break
            }
        }
        if item.lastModified == nil { item.lastModified = dtstamp }
        var alarmCount = 0
        var requested = 0
        forEachChild(of: component) { child in
            guard icalcomponent_isa(child) == ICAL_VALARM_COMPONENT, let alarm = alarm(child) else { return }
            alarmCount += 1
            requested += alarm.repeatCount + 1
            if alarmCount <= maximumAlarms { item.alarms.append(alarm) }
        }
        // Every alarm read fires at least once; repetitions fill what is left, in order.
        var repetitionsLeft = maximumFirings - item.alarms.count
        for index in item.alarms.indices {
            item.alarms[index].repeatCount = min(item.alarms[index].repeatCount, repetitionsLeft)
            repetitionsLeft -= item.alarms[index].repeatCount
        }
        let firings = item.alarms.reduce(0) { $0 + $1.repeatCount + 1 }
        if firings < requested {
            item.problems.append(
                "the item's \(alarmCount) VALARMs fire \(requested) times (REPEAT included); the first "
                    + "\(item.alarms.count) VALARMs and \(firings) firings are read (at most \(maximumAlarms) and "
                    + "\(maximumFirings)).")
        }
        return item
    }

    /// The alarms read from one item, and their firings (REPEAT included) together. Calendar apps offer a handful of
    /// alerts; an invitation with 10,000 VALARMs repeating 1,000 times each took 5 GB and 23 s to scan, and would
    /// have been planned as ten million reminders for every instance.
    static let maximumAlarms = 32
    static let maximumFirings = 200

    /// Extension properties that carry join links (besides `X-MICROSOFT-ONLINEMEETING*`).
    /// Outlook's `X-MICROSOFT-CDO-BUSYSTATUS` values as how an item shows its time.
    private static let busyStatuses: [String: CalendarComponent.ShowAs] = [
        "FREE": .free, "TENTATIVE": .tentative, "BUSY": .busy, "OOF": .outOfOffice,
        "WORKINGELSEWHERE": .workingElsewhere,
    ]

    private static let linkPropertyNames: Set<String> = [
        "X-GOOGLE-CONFERENCE", "X-MICROSOFT-SKYPETEAMSMEETINGURL", "X-ALT-DESC", "X-MS-OLK-CONFERENCEURL",
    ]

    private static func attendee(_ property: OpaquePointer) -> Attendee {
        var attendee = Attendee(address: address(rawValue(property)))
        if let name = icalproperty_get_first_parameter(property, ICAL_CN_PARAMETER) {
            attendee.name = LibICal.string(icalparameter_get_cn(name))
        }
        if let status = icalproperty_get_first_parameter(property, ICAL_PARTSTAT_PARAMETER) {
            attendee.participation =
                LibICal.string(icalparameter_get_xvalue(status))?.uppercased()
                ?? LibICal.string(icalparameter_enum_to_string(Int32(icalparameter_get_partstat(status).rawValue)))
        }
        return attendee
    }

    /// The value of an `X-` parameter of a property (`X-TITLE` of Apple's structured location), quotes removed.
    private static func xParameter(_ name: String, of property: OpaquePointer) -> String? {
        var parameter = icalproperty_get_first_parameter(property, ICAL_X_PARAMETER)
        while let current = parameter {
            if LibICal.string(icalparameter_get_xname(current))?.uppercased() == name {
                guard var value = LibICal.string(icalparameter_get_xvalue(current)) else { return nil }
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = String(value.dropFirst().dropLast())
                }
                return String(String.UnicodeScalarView(value.unicodeScalars.prefix(200)))
            }
            parameter = icalproperty_get_next_parameter(property, ICAL_X_PARAMETER)
        }
        return nil
    }

    /// A CAL-ADDRESS without `mailto:`, lower case.
    private static func address(_ value: String) -> String {
        var text = Substring(value)
        if text.lowercased().hasPrefix("mailto:") { text = text.dropFirst(7) }
        return text.lowercased()
    }

    private static func propertyName(_ property: OpaquePointer) -> String {
        LibICal.string(icalproperty_kind_to_string(icalproperty_isa(property))) ?? ""
    }

    /// Turns libical's `X-LIC-ERROR` into a user-facing problem, repairing a dropped RRULE where possible.
    private static func readError(_ property: OpaquePointer, into item: inout CalendarComponent) {
        let message = errorText(property)
        // Google writes empty LOCATION: lines; an empty value loses nothing, so it is not worth a warning.
        if message.hasPrefix("No value for ") { return }
        let unknownName = "Parse error in property name: "
        if message.hasPrefix(unknownName) {
            item.unknownProperties.append(String(message.dropFirst(unknownName.count)))
            return
        }
        let marker = "in RRULE property. Removing entire property: "
        guard let range = message.range(of: marker) else {
            item.problems.append(message)
            return
        }
        let original = String(message[range.upperBound...])
        switch RecurrenceRuleRepair.repair(original, accepts: RecurrenceIterator.accepts) {
        case .repaired(let rule, let changes):
            item.recurrenceRules.append(rule)
            item.problems.append(
                "RRULE '\(original)' is not valid iCalendar; read it as '\(rule)' (\(changes.joined(separator: ", "))). "
                    + "Fix the producer or the file to silence this warning.")
        case .unrepairable(let reason):
            item.errors.append(
                "RRULE '\(original)' cannot be read: \(reason). Only the first instance (DTSTART) is shown; "
                    + "correct the RRULE to get the whole series.")
        }
    }

    private static func errorText(_ property: OpaquePointer) -> String {
        (LibICal.string(icalproperty_get_xlicerror(property)) ?? "unknown libical error")
            .trimmingCharacters(in: [" ", "\n"])
    }

    // MARK: VALARM

    private static func alarm(_ component: OpaquePointer) -> Alarm? {
        var action = "DISPLAY"
        var trigger: Alarm.Trigger?
        var repeatCount = 0
        var interval: ICalDuration?
        var description: String?
        var acknowledged: Instant?
        forEachProperty(of: component) { property in
            switch icalproperty_isa(property) {
            case ICAL_ACTION_PROPERTY: action = rawValue(property).uppercased()
            case ICAL_TRIGGER_PROPERTY:
                let text = rawValue(property)
                if let duration = ICalDuration(icalText: Substring(text)) {
                    var toEnd = false
                    if let related = icalproperty_get_first_parameter(property, ICAL_RELATED_PARAMETER) {
                        toEnd = icalparameter_get_related(related) == ICAL_RELATED_END
                    }
                    trigger = .relative(duration, toEnd: toEnd)
                } else if let value = DateValue(icalText: Substring(text), reference: .utc) {
                    trigger = .absolute(value)
                }
            case ICAL_REPEAT_PROPERTY: repeatCount = max(0, Int(icalproperty_get_repeat(property)))
            case ICAL_DURATION_PROPERTY: interval = ICalDuration(icalText: Substring(rawValue(property)))
            case ICAL_DESCRIPTION_PROPERTY: description = LibICal.string(icalproperty_get_description(property))
            case ICAL_ACKNOWLEDGED_PROPERTY: acknowledged = utcInstant(rawValue(property))
            default: break
            }
        }
        guard let trigger else { return nil }
        var alarm = Alarm(
            action: action, trigger: trigger, repeatCount: interval == nil ? 0 : min(repeatCount, 1000),
            repeatInterval: interval, description: description)
        alarm.acknowledged = acknowledged
        return alarm
    }

    /// A UTC date-time (`20270301T093000Z`), as ACKNOWLEDGED and Thunderbird's X-MOZ properties hold them.
    private static func utcInstant(_ text: String?) -> Instant? {
        guard let text, let value = DateValue(icalText: Substring(text), reference: .utc), !value.isDate else {
            return nil
        }
        return Instant(secondsSinceEpoch: value.wallClock.secondsAsUTC)
    }

    // MARK: VTIMEZONE

    private static func timeZone(_ component: OpaquePointer) -> TimeZoneDefinition? {
        guard let tzidProperty = icalcomponent_get_first_property(component, ICAL_TZID_PROPERTY),
            let tzid = LibICal.string(icalproperty_get_tzid(tzidProperty))
        else { return nil }
        var definition = TimeZoneDefinition(tzid: tzid)
        forEachChild(of: component) { child in
            let kind = icalcomponent_isa(child)
            guard kind == ICAL_XSTANDARD_COMPONENT || kind == ICAL_XDAYLIGHT_COMPONENT else { return }
            var start: LocalDateTime?
            var from: Int?
            var to: Int?
            var rule: String?
            var dates: [LocalDateTime] = []
            forEachProperty(of: child) { property in
                switch icalproperty_isa(property) {
                case ICAL_DTSTART_PROPERTY: start = dateValue(property)?.wallClock
                case ICAL_TZOFFSETFROM_PROPERTY: from = Int(icalproperty_get_tzoffsetfrom(property))
                case ICAL_TZOFFSETTO_PROPERTY: to = Int(icalproperty_get_tzoffsetto(property))
                case ICAL_RRULE_PROPERTY: rule = rawValue(property)
                case ICAL_RDATE_PROPERTY: dates += recurrenceDates(property).map(\.start.wallClock)
                default: break
                }
            }
            guard let start, let to else { return }
            definition.observances.append(
                .init(start: start, offsetFrom: from ?? to, offsetTo: to, recurrenceRule: rule, recurrenceDates: dates))
        }
        return definition.observances.isEmpty ? nil : definition
    }

    // MARK: Values

    /// The property's value as libical prints it (a copy of its temporary buffer).
    private static func rawValue(_ property: OpaquePointer) -> String {
        LibICal.string(icalproperty_get_value_as_string(property)) ?? ""
    }

    /// A text value with RFC 5545 escapes removed.
    private static func textValue(_ property: OpaquePointer) -> String {
        let raw = rawValue(property)
        guard raw.contains("\\") else { return raw }
        var result = ""
        var escaped = false
        for character in raw {
            if escaped {
                result.append(character == "n" || character == "N" ? "\n" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }

    private static func reference(of property: OpaquePointer) -> TimeReference {
        guard let parameter = icalproperty_get_first_parameter(property, ICAL_TZID_PARAMETER),
            let tzid = LibICal.string(icalparameter_get_tzid(parameter)), !tzid.isEmpty
        else { return .floating }
        return .zone(tzid)
    }

    private static func dateValue(_ property: OpaquePointer) -> DateValue? {
        DateValue(icalText: Substring(rawValue(property)), reference: reference(of: property))
    }

    /// EXDATE and RDATE may list several values separated by commas.
    private static func dateValues(_ property: OpaquePointer) -> [DateValue] {
        dateValues(rawValue(property), reference: reference(of: property))
    }

    private static func dateValues(_ text: String, reference: TimeReference) -> [DateValue] {
        text.split(separator: ",").compactMap { DateValue(icalText: $0, reference: reference) }
    }

    private static func recurrenceDates(_ property: OpaquePointer) -> [RecurrenceDate] {
        recurrenceDates(rawValue(property), reference: reference(of: property))
    }

    private static func recurrenceDates(_ value: String, reference: TimeReference) -> [RecurrenceDate] {
        value.split(separator: ",").compactMap { text in
            let halves = text.split(separator: "/", maxSplits: 1)
            guard let start = DateValue(icalText: halves[0], reference: reference) else { return nil }
            guard halves.count == 2 else { return .start(start) }
            if let end = DateValue(icalText: halves[1], reference: reference) { return .period(start, end: end) }
            if let duration = ICalDuration(icalText: halves[1]) { return .periodWithDuration(start, duration) }
            return .start(start)
        }
    }

    // MARK: Walking the tree

    private static func forEachChild(of component: OpaquePointer, _ body: (OpaquePointer) -> Void) {
        var child = icalcomponent_get_first_component(component, ICAL_ANY_COMPONENT)
        while let current = child {
            body(current)
            child = icalcomponent_get_next_component(component, ICAL_ANY_COMPONENT)
        }
    }

    private static func forEachProperty(of component: OpaquePointer, _ body: (OpaquePointer) -> Void) {
        var property = icalcomponent_get_first_property(component, ICAL_ANY_PROPERTY)
        while let current = property {
            body(current)
            property = icalcomponent_get_next_property(component, ICAL_ANY_PROPERTY)
        }
    }
}
