public import CalWatchCore
import Foundation
import Synchronization

/// `calwatch why`: for one occurrence, every event calwatch plans for it and what became of each, with the reason
/// when one is not planned, not emitted or not delivered.
///
/// "Planned" comes from the planner itself, run over the occurrence's life as the daemon would run it; "emitted"
/// and "delivered" are facts read back: the journal's rows, each sink's cursor, the hook runs the journal keeps,
/// and the sinks' own records (the lines of a JSON Lines file, the rows of a SQLite file). Nothing is guessed: what
/// the journal no longer holds (pruned a day after expiry) is said to be unknown.
public struct DecisionTrace: Sendable {
    /// What became of one planned event.
    public enum State: String, Sendable {
        /// Still to come.
        case planned
        /// Committed to the journal (then handed to the sinks, see `deliveries`).
        case emitted
        /// Never planned, for a reason of the configuration or the calendar (declined, cancelled, all-day).
        case skipped
        /// Its time passed with no calwatch running, and its anchor passed too.
        case missed
        /// Missed, and delivered as part of one late reminder (several missed offsets become the latest).
        case collapsed
        /// Emitted for an earlier time of the occurrence, which then moved: planned again for the new time.
        case moved
        /// Its time is past and the journal no longer holds it (rows go a day after they expire).
        case forgotten
    }

    /// What one sink did with an emitted event.
    public struct Delivery: Sendable {
        /// `delivered`, `filtered`, `waiting`, `retrying`, `failed`, `expired`, `missing`.
        public var state: String
        public var sink: String
        public var detail: String

        public init(state: String, sink: String, detail: String) {
            self.state = state
            self.sink = sink
            self.detail = detail
        }

        /// Taken by a sink that keeps no record of its own to say more.
        public static func taken(by sink: String) -> Delivery {
            Delivery(state: "delivered", sink: sink, detail: "taken by the sink")
        }
    }

    /// One planned event, or a group of live-activity updates.
    public struct Step: Sendable {
        public var type: EventType
        /// When it is (or was) due.
        public var time: Instant
        /// `30 min before the start`, `start`, `every 1 min until the end (24)`.
        public var what: String
        public var state: State
        public var reason: String?
        public var id: EventID?
        public var sequence: Int64?
        /// When it was committed to the journal.
        public var recorded: Timestamp?
        public var deliveries: [Delivery] = []
    }

    /// The occurrence as the calendars have it now; `nil` when it is no longer there (the journal's view only).
    public var occurrence: Occurrence?
    public var uid: String
    public var classification: Classification?
    public var facts: OccurrenceFacts
    /// The instant the trace is about (`--at`, or now).
    public var now: Instant
    /// Notes about the whole occurrence: why no reminders, which anchor, which journal.
    public var notes: [String]
    public var steps: [Step]

    /// Everything needed to trace an occurrence.
    public struct Inputs: Sendable {
        public var configuration: Configuration
        /// The daemon's journal, `nil` when there is none (nothing was ever emitted with this configuration).
        public var journal: JournalStore?
        public var now: Instant
        /// The zone the reasons show times in.
        public var zone: ZoneRules
        /// Every occurrence read, for the other copies of a meeting kept in several calendars.
        public var occurrences: [Occurrence]

        public init(
            configuration: Configuration, journal: JournalStore?, now: Instant, zone: ZoneRules = .utc,
            occurrences: [Occurrence] = []
        ) {
            self.configuration = configuration
            self.journal = journal
            self.now = now
            self.zone = zone
            self.occurrences = occurrences
        }
    }

    /// The trace of `occurrence` (or, when it is gone from the calendars, of what the journal holds about `uid`).
    public static func trace(
        _ occurrence: Occurrence?, uid: String, classifier: Classifier, inputs: Inputs
    ) async throws -> DecisionTrace {
        let planner = inputs.configuration.planner
        let at = { (instant: Instant) in shown(instant, in: inputs.zone) }
        let facts = occurrence.map(classifier.facts(for:)) ?? .event
        var trace = DecisionTrace(
            occurrence: occurrence, uid: uid, classification: occurrence.map(classifier.classification(of:)),
            facts: facts, now: inputs.now, notes: [], steps: [])
        let key = occurrence.map(OccurrenceKey.init)
        var rows = try await inputs.journal?.events(uid: uid) ?? []
        if let key { rows = rows.filter { $0.event.key == key } }
        // A conflict or an overrun is journaled about the earlier of the two: the later one's trace shows it too.
        let naming = try await inputs.journal?.events(namingOther: uid) ?? []
        let namingThis = naming.filter { row in
            key.map { row.event.other?.recurrenceId == $0.recurrenceID?.description } ?? true
        }
        let forgottenBefore = try await inputs.journal?.handledUntil()
        if let journal = inputs.journal {
            trace.notes.append("journal \(journal.path): \(rows.count) events about it")
        } else {
            trace.notes.append("no journal: calwatch has not emitted anything with this configuration")
        }

        guard let occurrence else {
            if !rows.isEmpty && rows.allSatisfy({ $0.event.type == .agendaDue }) {
                trace.notes.append(
                    "the day's agendas (day.agendaAt, or a rule's own agendaAt): each at its time where you were, "
                        + "of use for \(DurationText.text(DaySettings.agendaUseful))")
            } else if !rows.isEmpty && rows.allSatisfy({ $0.event.type == .accountSignInNeeded }) {
                trace.notes.append(
                    "an account's notices: one for each sign-in that lapsed, again a day later while it stays lapsed")
            } else {
                trace.notes.append(
                    "it is not in the calendars around \(at(inputs.now)) (deleted, or outside the window looked at); "
                        + "the journal's events follow")
            }
            trace.steps = rows.map { emittedStep($0, what: describe($0.event, planner: planner)) }
            try await addDeliveries(to: &trace, rows: rows, inputs: inputs)
            return trace
        }

        if let copies = copies(of: occurrence, facts: facts, among: inputs.occurrences, classifier: classifier) {
            if !copies.planned && copies.winner.uid == occurrence.uid && copies.winner.calendar != occurrence.calendar {
                // Its UID names the copy planned: that is the one traced.
                return try await Self.trace(copies.winner, uid: uid, classifier: classifier, inputs: inputs)
            }
            trace.notes.append(copies.note)
            if !copies.planned && copies.winner.uid != occurrence.uid {
                // Another UID stands for it: what the journal holds about this one is all there is.
                trace.steps = rows.map { emittedStep($0, what: describe($0.event, planner: planner)) }
                try await addDeliveries(to: &trace, rows: rows, inputs: inputs)
                return trace
            }
        }

        let subject = Planner.Subject(occurrence, facts: facts, configuration: planner)
        let anchor = Planner.Subject.anchor(occurrence, facts: facts, rule: subject.rule, configuration: planner)
        trace.notes.append(
            anchor.kind != .leaveBy
                ? "reminders count back from the start, \(at(occurrence.start))"
                : facts.kind == .flight
                    ? "reminders count back from the time to leave for the airport, \(at(anchor.instant))"
                    : "reminders count back from the time to leave, \(at(anchor.instant))")
        if let leave = facts.leave { trace.notes += Self.steps(of: leave, at: at) }
        trace.steps += skippedSteps(occurrence, facts: facts, anchor: anchor.instant, planner: planner, into: &trace)

        // The events the planner makes for it when calwatch runs throughout.
        let planned = simulate(subject, configuration: planner)
        let current = rows.filter { $0.event.occurrenceStart == occurrence.start }
        let byID = Dictionary(current.map { ($0.event.id, $0) }, uniquingKeysWith: { first, _ in first })
        var matched = Set<EventID>()
        var updates: [PlannedEvent] = []
        let written = occurrence.source.component.lastModified.map { ZoneRules.utc.instant(for: $0.wallClock) }
        for event in planned {
            if event.type == .liveActivityUpdate {
                updates.append(event)
                continue
            }
            let what = describe(event, planner: planner)
            if let row = byID[event.id] {
                matched.insert(event.id)
                trace.steps.append(emittedStep(row, what: what, written: written))
                continue
            }
            var step = Step(type: event.type, time: event.time, what: what, state: .planned, id: event.id)
            if event.time > inputs.now {
                // Still to come: planned, at the time shown.
            } else if let forgottenBefore, event.expiry < forgottenBefore {
                step.state = .forgotten
                step.reason = "the journal no longer holds events that expired before \(at(forgottenBefore))"
            } else if event.type == .reminderDue,
                let late = current.first(where: {
                    $0.event.type == .reminderDue && $0.event.time > event.time && ($0.event.reminder?.late ?? false)
                })
            {
                step.state = .collapsed
                step.reason =
                    "calwatch was not running at \(at(event.time)); the missed reminders came once, late, as the "
                    + describe(late.event, planner: planner) + " one (emitted \(at(late.recorded.instant)))"
            } else if event.type == .reminderDue,
                let later = current.first(where: { $0.event.type == .reminderDue && $0.event.time > event.time })
            {
                step.state = .collapsed
                step.reason = "a later reminder (\(describe(later.event, planner: planner))) came first"
            } else {
                step.state = .missed
                step.reason =
                    "nothing was emitted: calwatch was not running from \(at(event.time)) until it expired at "
                    + at(event.expiry)
            }
            trace.steps.append(step)
        }
        if let step = updateStep(updates, rows: byID, now: inputs.now, zone: inputs.zone, matched: &matched) {
            trace.steps.append(step)
        }

        // What the journal holds beyond the plan: a change reported while running, an early end, and what was
        // emitted for a time the occurrence has since left.
        let unmatched = rows.filter { !matched.contains($0.event.id) }
        // Updates for an earlier time, one step per time: the first of them stands for all.
        var updatesByStart: [Instant: [JournalStore.Journaled]] = [:]
        for row in unmatched where row.event.type == .liveActivityUpdate {
            updatesByStart[row.event.occurrenceStart, default: []].append(row)
        }
        for row in unmatched {
            var step = emittedStep(row, what: describe(row.event, planner: planner), written: written)
            if row.event.type == .liveActivityUpdate, let group = updatesByStart[row.event.occurrenceStart] {
                guard group.first?.sequence == row.sequence, let last = group.last else { continue }
                step.what = "\(group.count) updates, \(at(row.event.time)) to \(at(last.event.time))"
            }
            // The `rescheduled` end names the activity of the earlier start: it is what the move did, not moved.
            if row.event.occurrenceStart != occurrence.start && row.event.liveActivity?.endReason != .rescheduled {
                step.state = .moved
                step.reason =
                    "emitted for its earlier start \(at(row.event.occurrenceStart)); it moved to \(at(occurrence.start)) "
                    + "and was planned again"
            }
            trace.steps.append(step)
        }
        for row in namingThis {
            var step = emittedStep(row, what: describeFromTheOtherSide(row.event))
            step.reason = "journaled about \(row.event.key.uid), the one that starts first (its subject)"
            trace.steps.append(step)
        }
        trace.steps.sort { ($0.time, $0.sequence ?? .max) < ($1.time, $1.sequence ?? .max) }
        try await addDeliveries(to: &trace, rows: rows + namingThis, inputs: inputs)
        return trace
    }

    /// A conflict or an overrun as the later of its two occurrences sees it.
    static func describeFromTheOtherSide(_ event: PlannedEvent) -> String {
        switch event.payload {
        case .conflictDetected(let conflict):
            "conflict with \(event.key.uid) for " + DurationText.text(conflict.overlapSeconds)
        case .overrunDetected: "started while \(event.key.uid) still ran"
        default: "\(event.type.rawValue) about \(event.key.uid)"
        }
    }

    /// The copies of a meeting kept in several calendars (`nil`: it is in one): a note naming each copy and the one
    /// planned, whether that is this one, and the winner.
    static func copies(
        of occurrence: Occurrence, facts: OccurrenceFacts, among all: [Occurrence], classifier: Classifier
    ) -> (note: String, planned: Bool, winner: Occurrence)? {
        guard let identity = SameMeetings.identity(occurrence, facts: facts) else { return nil }
        // A meeting's copies start together; a flight's (the calendar's and a boarding pass's own) need not.
        let flight = facts.flight?.pass != nil
        let copies = all.filter {
            $0.start == occurrence.start
                || (flight && abs($0.start.secondsSinceEpoch - occurrence.start.secondsSinceEpoch) <= 2 * 86_400)
        }
        .map { SameMeetings.Copy($0, facts: classifier.facts(for: $0)) }
        .filter { $0.group == identity }
        guard copies.count > 1, let winner = SameMeetings.winner(copies) else { return nil }
        let planned = winner.id == SameMeetings.Copy(occurrence, facts: facts).id
        let named = copies.sorted { $0.id < $1.id }.map { copy -> String in
            let answer = copy.facts.participation.map { ", you: " + $0.lowercased() } ?? ""
            let mark = copy.id == winner.id ? " planned" : ""
            return copy.occurrence.calendar + " (UID " + copy.occurrence.uid + answer + ")" + mark
        }
        if flight {
            return (
                "one flight in \(copies.count) calendars (the same boarding pass): " + named.joined(separator: "; ")
                    + "; a calendar's is planned before the pass's own" + (planned ? "" : "; this copy is not planned"),
                planned, winner.occurrence
            )
        }
        let how = facts.joinURL != nil ? "the same start and join link" : "the same start, organizer and summary"
        return (
            "one meeting in \(copies.count) calendars (\(how)): " + named.joined(separator: "; ")
                + "; the copy where you are an attendee is planned, else the first by calendar name"
                + (planned ? "" : "; this copy is not planned"),
            planned, winner.occurrence
        )
    }

    /// The UID asked about, and its occurrence: the one named by a subject, else the one running at `now`,
    /// else one that ended within the last 12 hours (the question is usually asked afterwards), else the next,
    /// else the last before.
    public static func occurrence(named item: String, in occurrences: [Occurrence], at now: Instant) -> (
        uid: String, occurrence: Occurrence?
    ) {
        let byUID = occurrences.filter { $0.uid == item }
        if !byUID.isEmpty {
            let past = byUID.filter { $0.end <= now }
            let recent = past.filter { $0.end.adding(seconds: 12 * 3600) >= now }
            let chosen =
                byUID.first { $0.start <= now && now < $0.end } ?? recent.max { $0.start < $1.start }
                ?? byUID.filter { $0.start > now }.min { $0.start < $1.start } ?? past.max { $0.start < $1.start }
            return (item, chosen)
        }
        if let chosen = occurrences.first(where: { $0.isNamed(bySubject: item) }) { return (chosen.uid, chosen) }
        // A subject of an occurrence no longer in the calendars: its UID, for what the journal holds.
        return (item.lastIndex(of: "/").map { String(item[..<$0]) } ?? item, nil)
    }

    /// `2027-03-03 10:30:00` in `zone`: how reasons show times.
    public static func shown(_ instant: Instant, in zone: ZoneRules) -> String {
        let local = zone.wallClock(at: instant)
        func two(_ value: Int) -> String { (value < 10 ? "0" : "") + "\(value)" }
        return "\(local.date) \(two(local.hour)):\(two(local.minute)):\(two(local.second))"
    }

    /// Runs the planner over the occurrence's life, wake by wake, from an empty state.
    static func simulate(_ subject: Planner.Subject, configuration: PlannerConfiguration) -> [PlannedEvent] {
        var state = PlannerState()
        var now = Planner.earliestEvent(
            of: subject.occurrence, facts: subject.facts, configuration: configuration)
        var events: [PlannedEvent] = []
        for _ in 0..<100_000 {
            var due: [PlannedEvent] = []
            let wake = Planner.plan(subject, state: state, configuration: configuration, now: now, into: &due)
            for event in due.sorted(by: Planner.emittedBefore) {
                state.apply(event)
                events.append(event)
            }
            guard let wake else { break }
            now = wake
        }
        return events
    }

    /// How the time to leave was reached, one step a line: where to, from where and why there, how long and how.
    static func steps(of leave: Leave, at: (Instant) -> String) -> [String] {
        func named(_ place: Leave.Place?) -> String {
            let name = place?.name ?? "an unnamed place"
            return place?.at.map { "\(name) (\($0))" } ?? name
        }
        var steps = ["time to leave \(at(leave.by)), worked out:"]
        steps.append("  to: \(named(leave.destination))")
        switch leave.originBasis {
        case .previousEvent(let summary, let end)?:
            steps.append("  from: \(named(leave.origin)), where \(summary ?? "the event before") ends at \(at(end))")
        case .landing(let summary, let end)?:
            steps.append("  from: \(named(leave.origin)), where \(summary ?? "a flight") lands at \(at(end))")
        case .placeHours?: steps.append("  from: \(named(leave.origin)), whose hours in places: hold the time")
        case .startingPlace?:
            steps.append(
                "  from: \(named(leave.origin)), where the way starts when nothing else says (no place has hours)")
        case nil: steps.append("  from: not known (no event before it, no place whose hours hold the time)")
        }
        steps.append("  the way: \(leave.explanation)")
        if let weather = leave.weather { steps.append("  weather: +\(weather.percent)%: \(weather.reason)") }
        if let prep = leave.prep, let prepareBy = leave.prepareBy {
            let whose =
                switch prep.source {
                case .rule: "its rule's prep"
                case .place: "the prep of its place in places:"
                case .origin: "the prep of \(named(leave.origin)), where the way starts"
                case .flights: "flights.prep"
                case .travel: "travel.prep"
                }
            steps.append(
                "  get ready at \(at(prepareBy)): \(DurationText.text(prep.seconds)) before leaving (\(whose)); "
                    + "prepareDue then")
        }
        return steps
    }

    /// Reminders and live activities the configuration leaves out for this occurrence, each with why.
    static func skippedSteps(
        _ occurrence: Occurrence, facts: OccurrenceFacts, anchor: Instant, planner: PlannerConfiguration,
        into trace: inout DecisionTrace
    ) -> [Step] {
        var reason: String?
        var activityToo = false
        if occurrence.allDay && !planner.includeAllDay && facts.kind == .flight {
            // Reminded before its leave-by like any flight; only its day-long live activity is left out.
            return [
                Step(
                    type: .liveActivityStart, time: anchor.adding(seconds: -planner.liveActivityLead),
                    what: "live activity", state: .skipped,
                    reason: "it is an all-day flight: no live activity spans the whole day")
            ]
        } else if occurrence.allDay && !planner.includeAllDay {
            reason = "it is an all-day event, and reminders for those are off (reminders.allDay: true turns them on)"
            activityToo = true
        } else if occurrence.status == .cancelled && !planner.includeCancelled {
            reason = "it is cancelled (STATUS:CANCELLED); reminders.cancelled: true would still remind"
            activityToo = true
        } else if facts.declined && !planner.includeDeclined {
            reason = "you declined it (your PARTSTAT is DECLINED); reminders.declined: true would still remind"
        }
        guard let reason else { return [] }
        trace.notes.append("no reminders: " + reason)
        var steps = planner.reminderOffsets.map { offset in
            Step(
                type: .reminderDue, time: anchor.adding(seconds: -offset),
                what: "\(DurationText.text(offset)) before", state: .skipped, reason: reason)
        }
        if activityToo {
            steps.append(
                Step(
                    type: .liveActivityStart, time: anchor.adding(seconds: -planner.liveActivityLead),
                    what: "live activity", state: .skipped, reason: reason))
        }
        return steps
    }

    /// The live activity's updates as one step: how many, from when to when, how many emitted.
    static func updateStep(
        _ updates: [PlannedEvent], rows: [EventID: JournalStore.Journaled], now: Instant, zone: ZoneRules,
        matched: inout Set<EventID>
    ) -> Step? {
        guard let first = updates.first, let last = updates.last else { return nil }
        let emitted = updates.filter { rows[$0.id] != nil }
        matched.formUnion(emitted.map(\.id))
        let past = updates.filter { $0.time <= now }.count
        var step = Step(
            type: .liveActivityUpdate, time: first.time,
            what: "\(updates.count) updates, \(shown(first.time, in: zone)) to \(shown(last.time, in: zone))",
            state: .planned)
        if emitted.count == updates.count {
            step.state = .emitted
            step.reason = "all emitted"
        } else if past > 0 {
            step.state = emitted.isEmpty ? .missed : .emitted
            step.reason = "\(emitted.count) of the \(past) due by now were emitted"
        }
        step.sequence = emitted.first.flatMap { rows[$0.id]?.sequence }
        return step
    }

    /// `written`: when the item was last written (its LAST-MODIFIED, else DTSTAMP), which tells a reminder late
    /// because the meeting was made after its time from one calwatch was not there for.
    static func emittedStep(_ row: JournalStore.Journaled, what: String, written: Instant? = nil) -> Step {
        var step = Step(
            type: row.event.type, time: row.event.time, what: what, state: .emitted, id: row.event.id,
            sequence: row.sequence, recorded: row.recorded)
        if let reminder = row.event.reminder, reminder.late {
            let late = "late by \(DurationText.text(reminder.lateness)): "
            if let written, written > row.event.time {
                step.reason =
                    late + "the item was written at \(written) (its LAST-MODIFIED), after the reminder's "
                    + "time, and calwatch reminded as soon as it read it"
            } else {
                step.reason =
                    late + "calwatch was not running at its time, or the calendar reached it only later "
                    + "(a sync)"
            }
        }
        return step
    }

    /// `30m before`, `start`, `end (rescheduled)`, `detected`.
    static func describe(_ event: PlannedEvent, planner: PlannerConfiguration) -> String {
        switch event.payload {
        case .reminderDue:
            guard let reminder = event.reminder else { return "reminder" }
            let before = DurationText.text(reminder.secondsBefore) + " before"
            switch reminder.source {
            case .valarm: return "calendar alarm \(before) the start"
            case .snooze: return "snoozed (\(reminder.snoozeCount)), \(before)"
            case .offset: return before
            }
        case .flightDetected: return "flight detected"
        case .flightChanged(let change): return "flight changed: \(change.text) (\(change.provider))"
        case .prepareDue: return "time to get ready"
        case .liveActivityStart: return "live activity starts"
        case .liveActivityUpdate:
            return event.liveActivity?.phase == .endingSoon
                ? "live activity update (ending soon)" : "live activity update"
        case .liveActivityEnd:
            return "live activity ends (\(event.liveActivity?.endReason?.rawValue ?? "ended"))"
        case .reminderSnoozed:
            return "snoozed until " + (event.answer?.until.map { "\($0)" } ?? "?")
        case .reminderDismissed: return "dismissed"
        case .reminderAcknowledged: return "acknowledged"
        case .conflictDetected(let conflict):
            return "conflict with \"\(conflict.with.summary ?? conflict.with.uid)\" for "
                + DurationText.text(conflict.overlapSeconds)
        case .overrunDetected(let overrun):
            return "still running when \"\(overrun.next.summary ?? overrun.next.uid)\" started"
        case .invitationPending(let invitation):
            return "invitation not answered, " + DurationText.text(invitation.secondsBefore) + " before"
        case .agendaDue(let agenda):
            return "agenda for \(agenda.date) (\(agenda.items.count) item" + (agenda.items.count == 1 ? ")" : "s)")
        case .accountSignInNeeded(let notice): return notice.reason
        }
    }

    /// What each sink did with each emitted step: the hooks' filters and runs, the cursors, the sinks' records.
    static func addDeliveries(to trace: inout DecisionTrace, rows: [JournalStore.Journaled], inputs: Inputs)
        async throws
    {
        guard let journal = inputs.journal else { return }
        let bySequence = Dictionary(rows.map { ($0.sequence, $0) }, uniquingKeysWith: { first, _ in first })
        let lookup = DeliveryLookup(journal: journal, records: SinkRecords(), zone: inputs.zone)
        for sink in inputs.configuration.sinks {
            let cursor = try await journal.cursor(for: sink.name)
            for index in trace.steps.indices {
                guard let sequence = trace.steps[index].sequence, let row = bySequence[sequence],
                    trace.steps[index].type != .liveActivityUpdate || trace.steps[index].state == .emitted
                else { continue }
                let delivery = try await deliveryOf(
                    row, to: sink, cursor: cursor, trace: trace, lookup: lookup, now: inputs.now)
                trace.steps[index].deliveries.append(delivery)
            }
        }
    }

    static func deliveryOf(
        _ row: JournalStore.Journaled, to sink: SinkSettings, cursor: Int64, trace: DecisionTrace,
        lookup: DeliveryLookup, now: Instant
    ) async throws -> Delivery {
        if let filters = sink.driver?.filters {
            let entry = JournalStore.Entry(
                sequence: row.sequence, event: row.event, occurrence: trace.occurrence, facts: trace.facts,
                recorded: row.recorded)
            if let rejection = filters.rejection(entry) {
                return Delivery(state: "filtered", sink: sink.name, detail: "left out: " + rejection)
            }
        }
        guard cursor >= row.sequence else {
            if row.event.expiry < now {
                return Delivery(
                    state: "expired", sink: sink.name,
                    detail:
                        "expired at \(lookup.shown(row.event.expiry)) before the sink took it (it is at sequence \(cursor))"
                )
            }
            return Delivery(
                state: "waiting", sink: sink.name, detail: "not taken yet (the sink is at sequence \(cursor))")
        }
        return try await sink.driver?.delivery(of: row, sink: sink.name, in: lookup) ?? .taken(by: sink.name)
    }

}

/// The sinks' own records for `calwatch why`, each file read once.
public final class SinkRecords: Sendable {
    private let lines = Mutex<[String: Set<String>]>([:])

    /// The event ids in a JSON Lines file (each line's first `"id":"…"`).
    public func jsonLines(_ path: String) -> Set<String> {
        if let known = lines.withLock({ $0[path] }) { return known }
        var ids = Set<String>()
        if let data = FileManager.default.contents(atPath: path) {
            let marker = Array(#""id":""#.utf8)
            data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                var lineStart = 0
                while lineStart < bytes.count {
                    let end = bytes[lineStart...].firstIndex(of: 10) ?? bytes.count
                    if let found = Self.find(marker, in: bytes, from: lineStart, to: end), found + 32 <= end {
                        ids.insert(String(decoding: bytes[(found)..<(found + 32)], as: UTF8.self))
                    }
                    lineStart = end + 1
                }
            }
        }
        lines.withLock { $0[path] = ids }
        return ids
    }

    /// The index after `marker` in `bytes[from..<to]`.
    private static func find(_ marker: [UInt8], in bytes: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        var index = from
        while index + marker.count <= to {
            if bytes[index] == marker[0] && zip(marker, bytes[index..<(index + marker.count)]).allSatisfy(==) {
                return index + marker.count
            }
            index += 1
        }
        return nil
    }

    /// Whether a SQLite sink's file holds the event.
    public func sqlite(_ path: String, has event: PlannedEvent) -> Bool {
        guard FileManager.default.fileExists(atPath: path), let connection = try? SQLiteConnection(path: path),
            let statement = try? connection.prepare("SELECT 1 FROM event_log WHERE time = ?1 AND id = ?2"),
            (try? statement.bind([.text(event.time.description), .text(event.id.description)])) != nil
        else { return false }
        return (try? statement.step()) ?? false
    }
}
