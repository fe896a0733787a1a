/// Expands the items of one calendar into the occurrences overlapping a window (docs/design.md §3).
///
/// Instances are generated in the wall time of the series' zone by libical's `icalrecur_iterator`; everything
/// else is done here, because libical 3.0's `icalcomponent_foreach_recurrence` gets it wrong: DTSTART as the first
/// instance, UNTIL, COUNT, RDATE (with TZID and PERIOD), EXDATE (with DATE on a DATE-TIME series), overrides by
/// RECURRENCE-ID (with RANGE=THISANDFUTURE), de-duplication, and the conversion to instants with RFC 5545's
/// gap and fold rule.
public struct OccurrenceExpander {
    private let calendarName: String
    private let scope: String
    private let options: ExpansionOptions
    private let resolver: ZoneResolver
    private let window: InstantWindow
    private var problems: [CalendarProblem] = []
    /// What is left of `maxIterationsPerCalendar`, and the rules not stepped once it ran out.
    private var stepsLeft: Int
    private var rulesNotStepped: [(uid: String, line: Int?)] = []

    /// Expands a parsed calendar into `occurrences` (appending); `calendarName` labels every occurrence.
    /// Returns the problems met.
    public static func expand(
        _ calendar: ParsedCalendar, calendarName: String, scope: String = "", options: ExpansionOptions,
        into occurrences: inout [Occurrence]
    ) -> [CalendarProblem] {
        expand(calendar, calendarName: calendarName, scope: scope, options: options) { occurrences += $0 }
    }

    /// Expands a parsed calendar one item at a time: `item` is handed each UID's occurrences (its master's and its
    /// overrides') as they were made, in the order the items are written. Returns the problems met.
    public static func expand(
        _ calendar: ParsedCalendar, calendarName: String, scope: String = "", options: ExpansionOptions,
        item: ([Occurrence]) -> Void
    ) -> [CalendarProblem] {
        var expander = OccurrenceExpander(
            calendar: calendar, calendarName: calendarName, scope: scope, options: options)
        expander.run(calendar.components, item: item)
        if let first = expander.rulesNotStepped.first {
            expander.problems.append(
                CalendarProblem(
                    severity: .warning, line: first.line, uid: first.uid,
                    message: "the calendar's rules used up the \(options.maxIterationsPerCalendar) steps one calendar "
                        + "gets; \(expander.rulesNotStepped.count) rule(s) from here on were not stepped and their "
                        + "series show their first instance only. Rules that start long ago and step every minute or "
                        + "hour cost the most."))
        }
        let zoneProblems = expander.resolver.problems.map { CalendarProblem(severity: .warning, message: $0) }
        return zoneProblems + expander.problems
    }

    private init(calendar: ParsedCalendar, calendarName: String, scope: String, options: ExpansionOptions) {
        self.calendarName = calendarName
        self.scope = scope
        self.options = options
        self.window = options.expansionWindow
        self.stepsLeft = options.maxIterationsPerCalendar
        self.resolver = ZoneResolver(
            defaultZone: options.defaultZone, definitions: calendar.timeZones,
            calendarZoneName: calendar.defaultTimeZone)
    }

    // MARK: Grouping

    private mutating func run(_ components: [CalendarComponent], item: ([Occurrence]) -> Void) {
        // Each item (kind and UID) numbered as first written, and each component's item by its place in
        // `components`: copies of the components would double the calendar held.
        struct Item: Hashable {
            var kind: CalendarComponent.Kind
            var uid: String
        }
        var numbers: [Item: Int] = [:]
        var itemOf = [Int](repeating: -1, count: components.count)
        var uids: [Int: String] = [:]
        var unknown = UnknownProperties()
        for (index, var component) in components.enumerated() {
            for problem in component.problems {
                report(.warning, component, problem)
            }
            unknown.add(component)
            for error in component.errors {
                report(.error, component, error)
            }
            // A to-do is an occurrence only when it has a time to act on (its DUE, else its DTSTART: Thunderbird's
            // daily tasks have no DUE) and is not done.
            if component.kind == .todo
                && (!options.includeTodos || component.todoCompleted || component.due == nil && component.start == nil)
            {
                continue
            }
            if component.uid.isEmpty {
                component.uid = "no-uid-\(index + 1)"
                uids[index] = component.uid
            }
            let item = Item(kind: component.kind, uid: component.uid)
            if let number = numbers[item] {
                itemOf[index] = number
            } else {
                itemOf[index] = numbers.count
                numbers[item] = numbers.count
            }
        }
        if let summary = unknown.summary {
            problems.append(CalendarProblem(severity: .warning, line: unknown.firstLine, message: summary))
        }
        // Each item's components, in the order written: the places sorted by item (a counting sort).
        var firstOf = [Int](repeating: 0, count: numbers.count + 1)
        for number in itemOf where number >= 0 { firstOf[number + 1] += 1 }
        for number in firstOf.indices.dropFirst() { firstOf[number] += firstOf[number - 1] }
        numbers = [:]
        var places = [Int](repeating: 0, count: firstOf.last ?? 0)
        var filled = firstOf
        for (index, number) in itemOf.enumerated() where number >= 0 {
            places[filled[number]] = index
            filled[number] += 1
        }
        var occurrences: [Occurrence] = []
        for number in firstOf.indices.dropLast() {
            let group = places[firstOf[number]..<firstOf[number + 1]].map { index in
                var component = components[index]
                if let uid = uids[index] { component.uid = uid }
                return component
            }
            expandGroup(group, into: &occurrences)
            item(occurrences)
            occurrences.removeAll(keepingCapacity: true)
        }
    }

    /// Property names neither iCalendar's nor `X-`, counted over a file's items for one summary line.
    struct UnknownProperties {
        private var counts: [String: Int] = [:]
        private var order: [String] = []
        private var items = 0
        private(set) var firstLine: Int?

        mutating func add(_ component: CalendarComponent) {
            guard !component.unknownProperties.isEmpty else { return }
            items += 1
            if firstLine == nil { firstLine = component.line }
            for name in component.unknownProperties {
                if counts[name] == nil { order.append(name) }
                counts[name, default: 0] += 1
            }
        }

        /// `properties calwatch does not know are ignored in 12 items: TEAMUP-EVENT-ID (12), …`.
        var summary: String? {
            guard items > 0 else { return nil }
            let shown = order.prefix(8).map { "\($0.prefix(60)) (\(counts[$0]!))" }
            let more = order.count > 8 ? ", and \(order.count - 8) more" : ""
            return "properties calwatch does not know are ignored in \(items) item\(items == 1 ? "" : "s"): "
                + shown.joined(separator: ", ") + more
                + "; a producer's own properties should be named X-…, which are passed over silently"
        }
    }

    /// One UID: its master (the newest copy when there are several) and its overrides.
    private mutating func expandGroup(_ components: [CalendarComponent], into output: inout [Occurrence]) {
        var master: CalendarComponent?
        var overrides: [CalendarComponent] = []
        // Looked up by RECURRENCE-ID, so that a series with thousands of overrides stays linear.
        var overrideIndex: [DateValue: Int] = [:]
        for component in components {
            if let recurrenceID = component.recurrenceID {
                if let index = overrideIndex[recurrenceID] {
                    if !Self.isNewer(overrides[index], than: component) { overrides[index] = component }
                } else {
                    overrideIndex[recurrenceID] = overrides.count
                    overrides.append(component)
                }
            } else {
                // The same series' master written twice: the newer wins (the later one when neither is newer, as
                // peers read it), and the other is named, with what of it is lost.
                if let current = master {
                    let (kept, dropped) =
                        Self.isNewer(current, than: component) ? (current, component) : (component, current)
                    var message =
                        "the series is written twice (a master at line \(current.line.map(String.init) ?? "?") and "
                        + "one at line \(component.line.map(String.init) ?? "?")); the one at line "
                        + "\(kept.line.map(String.init) ?? "?") is used"
                    let lost = dropped.exceptionDates.filter { !kept.exceptionDates.contains($0) }
                    if !lost.isEmpty {
                        message +=
                            ", and the other's EXDATEs " + lost.map(\.description).joined(separator: ", ")
                            + " are not, so those instances are shown; keep one master (with every EXDATE)"
                    } else {
                        message += "; keep one master"
                    }
                    report(.warning, kept, message)
                    master = kept
                    continue
                }
                master = component
            }
        }
        guard let master else {
            // Invited to single instances only (common with CalDAV): each override stands alone.
            for override in overrides { emitAlone(override, into: &output) }
            return
        }
        expandSeries(master, overrides: overrides, into: &output)
    }

    /// Whether `a` is a newer copy of an item than `b`: a higher SEQUENCE, then a later LAST-MODIFIED.
    static func isNewer(_ a: CalendarComponent, than b: CalendarComponent) -> Bool {
        if a.sequence != b.sequence { return a.sequence > b.sequence }
        guard let left = a.lastModified, let right = b.lastModified else { return false }
        return left.wallClock > right.wallClock
    }

    /// Records a problem of a component, with its line and UID.
    private mutating func report(
        _ severity: CalendarProblem.Severity, _ component: CalendarComponent, _ message: String
    ) {
        problems.append(CalendarProblem(severity: severity, line: component.line, uid: component.uid, message: message))
    }

    // MARK: Resolving values

    /// A DATE or DATE-TIME resolved to an instant, with the wall time and zone recurrence runs in.
    struct Resolved {
        var wall: LocalDateTime
        var zone: ZoneRules
        var isDate: Bool
        var instant: Instant
        /// Whether the value named a zone (shown as `timeZone`).
        var zoned: Bool
    }

    /// Resolves a value of a series: a floating value inside a zoned series is read in the series' zone (a common
    /// producer slip: EXDATE, RDATE or RECURRENCE-ID written without the TZID of DTSTART).
    private func resolve(_ value: DateValue, inSeriesOf series: Resolved) -> Resolved {
        resolve(value, seriesZone: series.zoned ? series.zone : nil)
    }

    /// Resolves a value; floating values go to `seriesZone`, else X-WR-TIMEZONE, else the configured zone.
    private func resolve(_ value: DateValue, seriesZone: ZoneRules? = nil) -> Resolved {
        switch value {
        case .date(let date):
            let wall = LocalDateTime(date: date)
            return Resolved(
                wall: wall, zone: options.defaultZone, isDate: true, instant: options.defaultZone.instant(for: wall),
                zoned: false)
        case .dateTime(let wall, .utc):
            let instant = Instant(secondsSinceEpoch: wall.secondsAsUTC)
            if let zone = resolver.calendarZone {
                // X-WR-TIMEZONE: Google writes UTC but means wall time in the calendar's zone for recurrences.
                return Resolved(
                    wall: zone.wallClock(at: instant), zone: zone, isDate: false, instant: instant, zoned: true)
            }
            return Resolved(wall: wall, zone: .utc, isDate: false, instant: instant, zoned: false)
        case .dateTime(let wall, .floating):
            let zone = seriesZone ?? resolver.calendarZone ?? options.defaultZone
            return Resolved(wall: wall, zone: zone, isDate: false, instant: zone.instant(for: wall), zoned: false)
        case .dateTime(let wall, .zone(let tzid)):
            let zone = resolver.rules(for: tzid)
            return Resolved(wall: wall, zone: zone, isDate: false, instant: zone.instant(for: wall), zoned: true)
        }
    }

    /// How long each instance lasts.
    enum Span {
        /// Exact seconds (DTEND on a DATE-TIME series, or the time part of a DURATION).
        case exact(Int64)
        /// Wall-clock days in the series' zone, then exact seconds (DATE spans, `P1D`).
        case nominal(days: Int, seconds: Int64)

        func end(startWall: LocalDateTime, start: Instant, zone: ZoneRules) -> Instant {
            switch self {
            case .exact(let seconds): return start.adding(seconds: seconds)
            case .nominal(let days, let seconds):
                return zone.instant(for: startWall.adding(days: days)).adding(seconds: seconds)
            }
        }

        /// A DURATION: nominal when it has days or weeks, else exact.
        init(_ duration: ICalDuration) {
            self =
                duration.nominalDays == 0
                ? .exact(duration.exactSeconds) : .nominal(days: duration.nominalDays, seconds: duration.exactSeconds)
        }

        /// An upper bound of the length in seconds, for widening the generation window.
        var maximumSeconds: Int64 {
            switch self {
            case .exact(let seconds): max(0, seconds)
            case .nominal(let days, let seconds): max(0, Int64(days) * 86_400 + 7200 + seconds)
            }
        }
    }

    private mutating func span(of component: CalendarComponent, start: Resolved) -> Span {
        // A to-do with neither DUE nor DURATION happens at its DTSTART, whether a date or a time (RFC 5545 §3.6.2).
        if component.kind == .todo && component.due == nil && component.duration == nil { return .exact(0) }
        let endValue = component.kind == .todo ? component.due : component.end
        if let endValue {
            if start.isDate {
                let days = Int(endValue.date.daysSinceEpoch - start.wall.date.daysSinceEpoch)
                return .nominal(days: days > 0 ? days : 1, seconds: 0)
            }
            let end = resolve(endValue, inSeriesOf: start).instant
            let seconds = end.secondsSinceEpoch - start.instant.secondsSinceEpoch
            if seconds < 0 {
                report(
                    .warning, component, "DTEND is before DTSTART; the event is read as lasting no time. Correct DTEND."
                )
            }
            return .exact(max(0, seconds))
        }
        if let duration = component.duration {
            if duration.isNegative {
                report(.warning, component, "DURATION is negative; the event is read as lasting no time.")
                return .exact(0)
            }
            return Span(duration)
        }
        return start.isDate ? .nominal(days: 1, seconds: 0) : .exact(0)
    }

    // MARK: Series

    /// An instance before it becomes an `Occurrence`.
    struct Instance {
        /// The instance's original start: its RECURRENCE-ID.
        var recurrenceID: Instant
        var wall: LocalDateTime
        /// An end given by an RDATE period.
        var explicitEnd: Instant?
    }

    private mutating func expandSeries(
        _ master: CalendarComponent, overrides: [CalendarComponent], into output: inout [Occurrence]
    ) {
        let startValue = master.kind == .todo ? (master.start ?? master.due) : master.start
        guard let startValue else {
            let missing = master.kind == .todo ? "DUE" : "DTSTART"
            report(
                .error, master,
                "the \(master.kind == .todo ? "to-do" : "event") has no usable \(missing) and is skipped; "
                    + "add a \(missing) such as \(missing):20270301T093000Z.")
            return
        }
        let base = resolve(startValue)
        let span = span(of: master, start: base)

        // Overrides, keyed by the instant (or, for DATE/DATE-TIME mix-ups, the date) they replace.
        var exact: [Int64: Int] = [:]
        var byDate: [CalendarDate: Int] = [:]
        var thisAndFuture: [(from: Instant, shift: Int64, index: Int)] = []
        var reach: Int64 = 0
        for (index, override) in overrides.enumerated() {
            guard let recurrenceID = override.recurrenceID else { continue }
            let original = resolve(recurrenceID, inSeriesOf: base)
            if original.isDate != base.isDate {
                byDate[original.wall.date] = index
            } else {
                exact[original.instant.secondsSinceEpoch] = index
            }
            if override.rangeThisAndFuture, let newStart = override.start {
                let moved = resolve(newStart, inSeriesOf: base)
                let shift = moved.wall.secondsAsUTC - original.wall.secondsAsUTC
                thisAndFuture.append((original.instant, shift, index))
                reach = max(reach, abs(shift) + self.span(of: override, start: moved).maximumSeconds)
            }
        }
        thisAndFuture.sort { $0.from < $1.from }

        let lower = window.start.adding(seconds: -span.maximumSeconds - reach)
        let upper = window.end.adding(seconds: reach)
        var instances = generate(master, base: base, lower: lower, upper: upper)
        let excluded = exceptions(master, base: base, lower: lower, upper: upper)
        if !excluded.isEmpty {
            instances.removeAll { excluded.contains($0.recurrenceID, wall: $0.wall) }
        }

        let masterSource = source(master, base: base)
        // An override that moves this and future instances lends its data to them, in the series' zone.
        var shiftedSources: [Int: OccurrenceSource] = [:]
        var used = Set<Int>()
        for instance in instances {
            let key = instance.recurrenceID.secondsSinceEpoch
            let index =
                exact[key] ?? (byDate.isEmpty ? nil : byDate[base.zone.wallClock(at: instance.recurrenceID).date])
            if let index {
                used.insert(index)
                continue  // emitted below from the override's own data
            }
            var source = masterSource
            var wall = instance.wall
            var instanceSpan = span
            if let rule = Self.lastRule(in: thisAndFuture, from: instance.recurrenceID) {
                if shiftedSources[rule.index] == nil {
                    shiftedSources[rule.index] = self.source(overrides[rule.index], base: base)
                }
                source = shiftedSources[rule.index]!
                wall = wall.adding(seconds: rule.shift)
                let moved = resolve(source.component.start!, inSeriesOf: base)
                instanceSpan = self.span(of: source.component, start: moved)
            }
            let start = base.isDate ? options.defaultZone.instant(for: wall) : base.zone.instant(for: wall)
            let end =
                instance.explicitEnd ?? instanceSpan.end(startWall: wall, start: start, zone: base.zone)
            emit(
                source, start: start, end: end,
                recurrenceID: master.isRecurring ? recurrenceText(instance.recurrenceID, base: base) : nil,
                into: &output)
        }
        // Every override is emitted from its own data, wherever it moved the instance to.
        for (index, override) in overrides.enumerated() {
            // An EXDATE naming an overridden instance deletes it, override and all: how several clients delete a
            // modified instance of a series.
            if master.isRecurring && !excluded.isEmpty, let recurrenceID = override.recurrenceID {
                let original = resolve(recurrenceID, inSeriesOf: base)
                if excluded.contains(original.instant, wall: original.wall) { continue }
            }
            if !used.contains(index) && !master.isRecurring && override.recurrenceID != nil {
                // An override of a single event that names another instant: still shown, as written.
                emitAlone(override, into: &output)
                continue
            }
            emitOverride(override, series: base, masterSpan: span, into: &output)
        }
    }

    /// The last THISANDFUTURE override at or before an instance, by binary search (`rules` is sorted by `from`).
    private static func lastRule(
        in rules: [(from: Instant, shift: Int64, index: Int)], from instant: Instant
    ) -> (from: Instant, shift: Int64, index: Int)? {
        var low = 0
        var high = rules.count
        while low < high {
            let middle = (low + high) / 2
            if rules[middle].from <= instant { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : rules[low - 1]
    }

    /// DTSTART, every RRULE instance and every RDATE whose start can overlap `[lower, upper)`, de-duplicated.
    private mutating func generate(
        _ master: CalendarComponent, base: Resolved, lower: Instant, upper: Instant
    ) -> [Instance] {
        var instances: [Instance] = []
        if base.instant >= lower && base.instant < upper {
            instances.append(Instance(recurrenceID: base.instant, wall: base.wall))
        }
        for text in master.recurrenceRules {
            iterate(text, property: "RRULE", master: master, base: base, lower: lower, upper: upper, into: &instances)
        }
        for date in master.recurrenceDates {
            var resolved = resolve(date.start, inSeriesOf: base)
            if resolved.isDate && !base.isDate {
                // RDATE;VALUE=DATE on a timed series: the series' time of day on that date.
                resolved.wall = LocalDateTime(
                    date: resolved.wall.date, hour: base.wall.hour, minute: base.wall.minute, second: base.wall.second)
                resolved.instant = base.zone.instant(for: resolved.wall)
            }
            var end: Instant?
            switch date {
            case .start: end = nil
            case .period(_, let endValue): end = resolve(endValue, inSeriesOf: base).instant
            case .periodWithDuration(_, let duration):
                end = Span(duration).end(startWall: resolved.wall, start: resolved.instant, zone: resolved.zone)
            }
            // The RDATE is re-expressed in the series' wall time, so that THISANDFUTURE shifts apply alike.
            let wall = base.isDate ? resolved.wall : base.zone.wallClock(at: resolved.instant)
            let instant = base.isDate ? options.defaultZone.instant(for: wall) : resolved.instant
            // Like an RRULE instance, unless its own period ends later than the series' span would.
            if instant < upper && (end ?? instant) >= lower {
                instances.append(Instance(recurrenceID: instant, wall: wall, explicitEnd: end))
            }
        }
        // Sorted by start; of two instances at one instant, the first (DTSTART, RRULE) wins over an RDATE.
        var seen = Set<Int64>()
        seen.reserveCapacity(instances.count)
        return instances.sorted { $0.recurrenceID < $1.recurrenceID }.filter {
            seen.insert($0.recurrenceID.secondsSinceEpoch).inserted
        }
    }

    /// Adds the instances of one RRULE (or EXRULE: `property` names it in messages) inside `[lower, upper)`.
    private mutating func iterate(
        _ text: String, property: String, master: CalendarComponent, base: Resolved, lower: Instant, upper: Instant,
        into instances: inout [Instance]
    ) {
        guard stepsLeft > 0 else {
            rulesNotStepped.append((master.uid, master.line))
            return
        }
        let budget = min(options.maxIterationsPerRule, stepsLeft)
        let rule = RecurrenceRuleText(text)
        let steps = rule.flatMap { rule in
            rule.outOfRange == nil ? RuleSteps(rule, start: base.wall, isDate: base.isDate, budget: budget) : nil
        }
        guard let rule, var steps else {
            let why = rule?.outOfRange.map { " (\($0))" } ?? ""
            report(
                .error, master,
                "\(property) '\(text)' cannot be iterated\(why) and is ignored. Correct the \(property).")
            return
        }
        let untilInstant: Instant? =
            if case .dateTime(let wall, .utc) = rule.until { Instant(secondsSinceEpoch: wall.secondsAsUTC) } else {
                nil
            }
        let untilBeforeStart: Bool =
            switch rule.until {
            case .date(let date): date < base.wall.date
            case .dateTime(let wall, .utc): Instant(secondsSinceEpoch: wall.secondsAsUTC) < base.instant
            case .dateTime(let wall, _): wall < base.wall
            case nil: false
            }
        if untilBeforeStart {
            // Said, because a producer that writes UNTIL=00000101 meant something else: the series is DTSTART alone.
            report(
                .warning, master,
                "\(property) '\(text)' ends (UNTIL) before DTSTART; "
                    + (property == "RRULE" ? "the series is its first instance only." : "it excludes nothing."))
            return
        }
        if steps.canSkip, rule.count == nil, lower.secondsSinceEpoch - base.instant.secondsSinceEpoch > 86_400 {
            // Jump close to the window instead of stepping through years of seconds, or of days.
            steps.skip(to: base.zone.wallClock(at: lower.adding(seconds: -86_400)))
        }
        var counted = 0
        var stepCount = 0
        var kept = 0
        defer {
            stepsLeft -= max(stepCount, steps.stepsTaken)
            switch steps.stop {
            case .noDay?:
                report(
                    .warning, master,
                    "\(property) '\(text)' matches no day in 400 years (its BYMONTH, BYMONTHDAY, BYYEARDAY and BYDAY "
                        + "exclude each other); it adds no instances. Correct the \(property).")
            case .noTime?:
                report(
                    .warning, master,
                    "\(property) '\(text)' never reaches its BYHOUR, BYMINUTE or BYSECOND: every INTERVAL from DTSTART "
                        + "misses them; it adds no instances. Correct the \(property).")
            case .budget?:
                report(
                    .warning, master,
                    "\(property) '\(text)' was stopped after \(budget) steps without reaching the "
                        + "window's end; later instances are not shown.")
            case nil: break
            }
        }
        while let wall = steps.next() {
            stepCount += 1
            if stepCount > budget {
                report(
                    .warning, master,
                    "\(property) '\(text)' was stopped after \(budget) steps; later instances are not shown.")
                return
            }
            if let count = rule.count {
                // DTSTART always counts as the first instance (RFC 5545 §3.3.10), even when the rule skips it.
                if counted == 0 && wall != base.wall { counted = 1 }
                counted += 1
                if counted > count { return }
            }
            let instant = base.isDate ? options.defaultZone.instant(for: wall) : base.zone.instant(for: wall)
            switch rule.until {
            case .dateTime(let untilWall, let reference):
                if let untilInstant, reference == .utc {
                    if instant > untilInstant { return }
                } else if wall > untilWall {
                    return
                }
            case .date(let untilDate):
                // A DATE UNTIL on a DATE-TIME series includes that whole day (docs/design.md §3).
                if wall.date > untilDate { return }
            case nil: break
            }
            if instant >= upper { return }
            if instant < lower { continue }
            instances.append(Instance(recurrenceID: instant, wall: wall))
            kept += 1
            if kept >= options.maxInstancesPerSeries {
                report(
                    .warning, master,
                    "\(property) '\(text)' yields more than \(options.maxInstancesPerSeries) instances in "
                        + "the window; only the first \(options.maxInstancesPerSeries) are shown.")
                return
            }
        }
    }

    /// The instances of one rule: stepped in Swift when the rule is simple, else by libical.
    enum RuleSteps {
        case simple(SimpleRecurrence)
        case subDaily(SubDailyRecurrence)
        case libical(RecurrenceIterator)

        init?(_ rule: RecurrenceRuleText, start: LocalDateTime, isDate: Bool, budget: Int) {
            if let simple = SimpleRecurrence(rule, start: start) {
                self = .simple(simple)
            } else if rule.isSubDaily {
                // Never libical's: it steps these one period at a time without end (see SubDailyRecurrence). A rule
                // the Swift stepper does not read (an ordinal BYDAY, a value out of range, a DATE start) cannot be
                // iterated, and is reported.
                guard !isDate, let subDaily = SubDailyRecurrence(rule, start: start, budget: budget) else {
                    return nil
                }
                self = .subDaily(subDaily)
            } else if let iterator = RecurrenceIterator(rule: rule.iterable, start: start, isDate: isDate) {
                self = .libical(iterator)
            } else {
                return nil
            }
        }

        mutating func next() -> LocalDateTime? {
            switch self {
            case .simple(var simple):
                let next = simple.next()
                self = .simple(simple)
                return next
            case .subDaily(var subDaily):
                let next = subDaily.next()
                self = .subDaily(subDaily)
                return next
            case .libical(let iterator): return iterator.next()
            }
        }

        /// Steps taken inside the stepper that `next` did not return (the sub-daily stepper's excluded periods).
        var stepsTaken: Int {
            if case .subDaily(let subDaily) = self { subDaily.stepsTaken } else { 0 }
        }

        /// Why stepping gave up before the rule's end, when it did (only the Swift sub-daily stepper can tell).
        var stop: SubDailyRecurrence.Stop? {
            if case .subDaily(let subDaily) = self { subDaily.stop } else { nil }
        }

        /// Whether `skip` is exact: calwatch's own steppers. libical's is used for nothing else.
        var canSkip: Bool {
            if case .libical = self { false } else { true }
        }

        /// Moves close to `wall`, for a rule without COUNT.
        mutating func skip(to wall: LocalDateTime) {
            switch self {
            case .libical: break
            case .subDaily(var subDaily):
                subDaily.skip(to: wall)
                self = .subDaily(subDaily)
            case .simple(var simple):
                simple.skip(to: wall)
                self = .simple(simple)
            }
        }
    }

    /// The instances EXDATEs and EXRULEs take out of a series.
    struct Exceptions {
        var instants: Set<Int64> = []
        /// EXDATEs that are DATEs on a DATE-TIME series, or the reverse: they take out the instance on that date.
        var dates: Set<CalendarDate> = []

        var isEmpty: Bool { instants.isEmpty && dates.isEmpty }

        func contains(_ instant: Instant, wall: LocalDateTime) -> Bool {
            instants.contains(instant.secondsSinceEpoch) || (!dates.isEmpty && dates.contains(wall.date))
        }
    }

    /// EXDATEs (by instant, or by date when an EXDATE is a DATE on a DATE-TIME series or the reverse) and the
    /// instances of EXRULEs.
    private mutating func exceptions(
        _ master: CalendarComponent, base: Resolved, lower: Instant, upper: Instant
    ) -> Exceptions {
        guard !master.exceptionDates.isEmpty || !master.exceptionRules.isEmpty else { return Exceptions() }
        var excluded: [Instance] = []
        for text in master.exceptionRules {
            iterate(text, property: "EXRULE", master: master, base: base, lower: lower, upper: upper, into: &excluded)
        }
        var exceptions = Exceptions(instants: Set(excluded.map(\.recurrenceID.secondsSinceEpoch)))
        for value in master.exceptionDates {
            let resolved = resolve(value, inSeriesOf: base)
            if resolved.isDate || base.isDate {
                exceptions.dates.insert(
                    resolved.isDate ? resolved.wall.date : base.zone.wallClock(at: resolved.instant).date)
            } else {
                exceptions.instants.insert(resolved.instant.secondsSinceEpoch)
            }
        }
        return exceptions
    }

    // MARK: Emitting

    private func recurrenceText(_ instant: Instant, base: Resolved) -> DateValueText {
        base.isDate ? .date(options.defaultZone.wallClock(at: instant).date) : .instant(instant)
    }

    private mutating func emitOverride(
        _ override: CalendarComponent, series: Resolved, masterSpan: Span, into output: inout [Occurrence]
    ) {
        guard let recurrenceID = override.recurrenceID else { return }
        let original = resolve(recurrenceID, inSeriesOf: series)
        let start = override.start.map { resolve($0, inSeriesOf: series) } ?? original
        let hasOwnEnd =
            override.end != nil || override.duration != nil || (override.kind == .todo && override.due != nil)
        let span =
            hasOwnEnd || override.start != nil && start.isDate != series.isDate
            ? self.span(of: override, start: start) : masterSpan
        let end = span.end(startWall: start.wall, start: start.instant, zone: start.zone)
        emit(
            source(override, base: start), start: start.instant, end: end,
            recurrenceID: recurrenceText(original.instant, base: original), into: &output)
    }

    private mutating func emitAlone(_ component: CalendarComponent, into output: inout [Occurrence]) {
        guard let startValue = component.kind == .todo ? (component.start ?? component.due) : component.start else {
            return
        }
        let start = resolve(startValue)
        let end = span(of: component, start: start).end(startWall: start.wall, start: start.instant, zone: start.zone)
        let recurrenceID = component.recurrenceID.map { value -> DateValueText in
            let original = resolve(value)
            return recurrenceText(original.instant, base: original)
        }
        emit(
            source(component, base: start), start: start.instant, end: end, recurrenceID: recurrenceID,
            into: &output)
    }

    /// The shared part of the occurrences of `component` whose start resolved as `base`.
    private func source(_ component: CalendarComponent, base: Resolved) -> OccurrenceSource {
        OccurrenceSource(
            calendar: calendarName, component: component, allDay: base.isDate, timeZone: base.zoned ? base.zone : nil,
            displayZone: base.zoned ? base.zone : options.defaultZone, scope: scope)
    }

    private func emit(
        _ source: OccurrenceSource, start: Instant, end: Instant, recurrenceID: DateValueText?,
        into output: inout [Occurrence]
    ) {
        // A to-do's occurrence is the instant it is due (its start when it has no DUE: its span is then empty).
        let begin = source.component.kind == .todo ? end : start
        guard window.overlaps(start: begin, end: end) else { return }
        output.append(Occurrence(source: source, recurrenceID: recurrenceID, start: begin, end: end))
    }
}
