/// Decides what is due: a pure function of (occurrences, configuration, state, now) (docs/design.md §1 and §5).
///
/// It returns the events due at `now` that the state has not seen, and the next instant at which something
/// becomes due; whatever sleeps, watches or writes sits around it. Calling it again at the same `now` after
/// applying its events returns nothing, so a run stopped at any point and started again continues exactly.
///
/// The caller passes every occurrence that overlaps `[now − maxDuration, now + horizon]`. A caller that keeps
/// occurrences between calls (the replay, the daemon) plans each `Subject` alone, and only at its next wake.
public enum Planner {
    /// What is due now, and when to look again.
    public struct Plan: Sendable {
        /// Due events in emission order: by scheduled time, then ends before starts, then id.
        public var due: [PlannedEvent]
        /// The next instant after `now` at which something becomes due, or `nil` when nothing will.
        public var nextWake: Instant?
    }

    /// Plans every occurrence at `now`; `facts` classifies each (plain events when not given).
    public static func plan(
        _ occurrences: [Occurrence], facts: (Occurrence) -> OccurrenceFacts = { _ in .event }, state: PlannerState,
        configuration: PlannerConfiguration, now: Instant
    ) -> Plan {
        var due: [PlannedEvent] = []
        var wake: Instant?
        var present = Set<OccurrenceKey>()
        for occurrence in occurrences {
            let subject = Subject(occurrence, facts: facts(occurrence), configuration: configuration)
            present.insert(subject.key)
            if let next = plan(subject, state: state, configuration: configuration, now: now, into: &due) {
                wake = min(wake ?? next, next)
            }
        }
        due += removedActivities(state: state, present: present.contains, now: now)
        due.sort(by: emittedBefore)
        return Plan(due: due, nextWake: wake)
    }

    /// Plans one occurrence at `now`: appends what is due to `due` and returns its next wake.
    public static func plan(
        _ subject: Subject, state: PlannerState, configuration: PlannerConfiguration, now: Instant,
        into due: inout [PlannedEvent]
    ) -> Instant? {
        var wake: Instant?
        func wakeAt(_ instant: Instant) {
            if instant > now && (wake == nil || instant < wake!) { wake = instant }
        }
        let context = Context(subject: subject, configuration: configuration, now: now)
        context.planFlightDetected(state: state, into: &due, wake: wakeAt)
        // The kind first: it is stored inline, the flight behind a box, and this runs for every plan of every subject.
        if subject.facts.kind == .flight, subject.facts.flight?.live?.changes.isEmpty == false {
            context.planFlightChanged(state: state, into: &due, wake: wakeAt)
        }
        context.planReminders(state: state, into: &due, wake: wakeAt)
        if subject.facts.leave?.prep != nil { context.planPrepare(state: state, into: &due, wake: wakeAt) }
        context.planLiveActivity(state: state, into: &due, wake: wakeAt)
        if configuration.day?.pendingInvitations.isEmpty == false {
            context.planInvitationPending(state: state, into: &due, wake: wakeAt)
        }
        return wake
    }

    /// A running activity whose occurrence is gone ends now (reason `removed`).
    public static func removedActivities(
        state: PlannerState, present: (OccurrenceKey) -> Bool, now: Instant
    ) -> [PlannedEvent] {
        state.active.filter { !present($0.key) }.map { key, activity in
            Context.end(key: key, seed: EventID.seed(key), activity: activity, reason: .removed, at: now)
        }
    }

    /// Emission order within one planning step: by scheduled time, then ends before starts, then id.
    public static func emittedBefore(_ a: PlannedEvent, _ b: PlannedEvent) -> Bool {
        if a.time != b.time { return a.time < b.time }
        if order(a.type) != order(b.type) { return order(a.type) < order(b.type) }
        return a.id < b.id
    }

    /// The earliest instant at which anything can be due for an occurrence (a reminder, a calendar alarm, its live
    /// activity, a flight entering the horizon): a caller may leave it unplanned until then.
    public static func earliestEvent(
        of occurrence: Occurrence, facts: OccurrenceFacts, configuration: PlannerConfiguration
    ) -> Instant {
        // Rules are matched here only when one of them moves the anchor: this runs for every occurrence admitted.
        let rule =
            configuration.rules.contains { $0.anchor != nil }
            ? configuration.rules.first { $0.matches(occurrence, facts: facts) } : nil
        var earliest = Subject.anchor(occurrence, facts: facts, rule: rule, configuration: configuration).instant
            .adding(seconds: -configuration.lookAhead)
        if let prepareBy = facts.leave?.prepareBy { earliest = min(earliest, prepareBy) }
        if configuration.calendarAlarms, let alarm = AlarmExpander.triggers(of: occurrence).map(\.trigger).min() {
            earliest = min(earliest, alarm)
        }
        if facts.kind == .flight && facts.flightIdentity != nil {
            earliest = min(earliest, occurrence.start.adding(seconds: -configuration.horizon))
        }
        return earliest
    }

    /// An occurrence prepared for planning: what does not change between two plans of it is computed once (its
    /// key's hash, its fingerprint, its anchor, its reminders and their ids).
    public struct Subject: Sendable {
        public let occurrence: Occurrence
        public let facts: OccurrenceFacts
        public let key: OccurrenceKey
        /// What reminders and the live activity count back from, and which instant that is.
        let anchorKind: ReminderDetail.Anchor
        let anchor: Instant
        let seed: EventID.Hasher
        let fingerprint: UInt64
        /// The first of the configuration's rules that applies (its offsets, live activity, attendance, …).
        public let rule: ReminderRule?
        let reminders: [Reminder]

        /// A reminder that may be due: when, how it is named, and until when it is useful.
        struct Reminder: Sendable {
            var time: Instant
            var secondsBefore: Int64
            var source: ReminderDetail.Source
            var id: EventID
            var expiry: Instant
            /// Held back by quiet hours from this instant to `time`.
            var deferredFrom: Instant?
        }

        public init(_ occurrence: Occurrence, facts: OccurrenceFacts = .event, configuration: PlannerConfiguration) {
            self.occurrence = occurrence
            self.facts = facts
            rule = configuration.rules.first { $0.matches(occurrence, facts: facts) }
            (anchorKind, anchor) = Self.anchor(occurrence, facts: facts, rule: rule, configuration: configuration)
            key = OccurrenceKey(occurrence)
            seed = EventID.seed(key)
            var hasher = EventID.Hasher()
            hasher.feed(occurrence.summary ?? "")
            hasher.feed(occurrence.location ?? "")
            hasher.feed(occurrence.end.secondsSinceEpoch)
            hasher.feed(occurrence.status.map { "\($0)" } ?? "")
            fingerprint = hasher.id.high
            reminders = Self.reminders(
                occurrence, anchor: anchor, anchorKind: anchorKind, rule: rule, seed: seed, configuration: configuration
            )
        }

        /// The time to leave when the occurrence's rule, else its kind, is anchored there and it has one (a flight's
        /// from the airport rule, a placed event's from its travel time), else the start.
        package static func anchor(
            _ occurrence: Occurrence, facts: OccurrenceFacts, rule: ReminderRule?, configuration: PlannerConfiguration
        ) -> (kind: ReminderDetail.Anchor, instant: Instant) {
            if (rule?.anchor ?? configuration.anchors[facts.kind]) == .leaveBy, let leaveBy = facts.leaveBy {
                return (.leaveBy, leaveBy)
            }
            return (.start, occurrence.start)
        }

        /// The configured offsets before the anchor, and the calendar's own alarms (relative to the start), less
        /// those the calendar says were answered: at or before its `X-MOZ-LASTACK`, or a VALARM `ACKNOWLEDGED` since
        /// its firing.
        /// Quiet hours then hold back each that falls inside them (a flight's time to leave excepted, unless a rule
        /// says otherwise): to their end, or for good.
        private static func reminders(
            _ occurrence: Occurrence, anchor: Instant, anchorKind: ReminderDetail.Anchor, rule: ReminderRule?,
            seed: EventID.Hasher, configuration: PlannerConfiguration
        ) -> [Reminder] {
            let acknowledged = occurrence.source.component.acknowledgedThrough
            let reminders = allReminders(
                occurrence, anchor: anchor, rule: rule, seed: seed, configuration: configuration
            )
            .filter { reminder in acknowledged.map { reminder.time > $0 } ?? true }
            guard let quiet = configuration.quietHours else { return reminders }
            return reminders.compactMap { reminder in
                let applies = rule?.quietHours ?? !(anchorKind == .leaveBy && reminder.source == .offset)
                guard applies, let end = quiet.end(containing: reminder.time, in: occurrence.displayZone) else {
                    return reminder
                }
                guard quiet.deferToEnd, end < occurrence.end else { return nil }
                var deferred = reminder
                deferred.deferredFrom = reminder.time
                deferred.time = end
                deferred.expiry = max(reminder.expiry, end)
                return deferred
            }
        }

        private static func allReminders(
            _ occurrence: Occurrence, anchor: Instant, rule: ReminderRule?, seed: EventID.Hasher,
            configuration: PlannerConfiguration
        ) -> [Reminder] {
            if occurrence.allDay, let atTime = rule?.allDay {
                // An all-day occurrence reminded at a clock time, days before its date.
                let time = atTime.instant(before: occurrence.startLocal.date, in: occurrence.displayZone)
                let before = occurrence.start.secondsSinceEpoch - time.secondsSinceEpoch
                return [
                    Reminder(
                        time: time, secondsBefore: before, source: .offset,
                        id: Planner.offsetReminderID(seed, offset: before, anchor: occurrence.start),
                        expiry: max(time, occurrence.start))
                ]
            }
            var reminders = (rule?.offsets ?? configuration.reminderOffsets).map { offset in
                Reminder(
                    time: anchor.adding(seconds: -offset), secondsBefore: offset, source: .offset,
                    id: Planner.offsetReminderID(seed, offset: offset, anchor: anchor),
                    expiry: anchor)
            }
            guard configuration.calendarAlarms else { return reminders }
            let start = occurrence.start
            for trigger in AlarmExpander.triggers(of: occurrence)
            where (trigger.alarm.action == "DISPLAY" || trigger.alarm.action == "AUDIO")
                && !(trigger.alarm.acknowledged.map { $0 >= trigger.trigger } ?? false)
            {
                // An alarm after the start stays useful for a quarter of an hour.
                let expiry = trigger.trigger < start ? start : trigger.trigger.adding(seconds: 900)
                reminders.append(
                    Reminder(
                        time: trigger.trigger,
                        secondsBefore: start.secondsSinceEpoch - trigger.trigger.secondsSinceEpoch,
                        source: .valarm,
                        id: Planner.alarmReminderID(
                            seed, alarm: trigger.alarmIndex, repetition: trigger.repetition, at: trigger.trigger),
                        expiry: expiry))
            }
            return reminders
        }
    }

    /// The id of a reminder `offset` seconds before `anchor`.
    package static func offsetReminderID(_ seed: EventID.Hasher, offset: Int64, anchor: Instant) -> EventID {
        EventID.make(seed, .reminderDue, "offset,anchor", offset, anchor.secondsSinceEpoch)
    }

    /// The id of a calendar alarm's reminder: which VALARM, which repetition, when.
    package static func alarmReminderID(_ seed: EventID.Hasher, alarm: Int, repetition: Int, at: Instant) -> EventID {
        EventID.make(seed, .reminderDue, "valarm,repetition,at", Int64(alarm), Int64(repetition), at.secondsSinceEpoch)
    }

    /// Within one instant: an end before a start (a moved occurrence), a start before its updates.
    private static func order(_ type: EventType) -> Int {
        switch type {
        case .liveActivityEnd: 0
        case .flightDetected, .flightChanged, .agendaDue, .conflictDetected, .accountSignInNeeded: 1
        case .liveActivityStart: 2
        case .liveActivityUpdate: 3
        case .prepareDue, .reminderDue, .invitationPending, .overrunDetected: 4
        case .reminderSnoozed, .reminderDismissed, .reminderAcknowledged: 5
        }
    }

    /// The planning of one occurrence.
    struct Context {
        let subject: Subject
        let configuration: PlannerConfiguration
        let now: Instant

        var occurrence: Occurrence { subject.occurrence }
        var key: OccurrenceKey { subject.key }
        var anchor: Instant { subject.anchor }
        var fingerprint: UInt64 { subject.fingerprint }
        /// Cancelled by the calendar, or by the airline as the flight-status service says.
        var cancelled: Bool {
            occurrence.status == .cancelled
                || (subject.facts.kind == .flight && subject.facts.flight?.live?.cancelled == true)
        }
        var eligible: Bool { configuration.includeAllDay || !occurrence.allDay }
        /// An all-day flight whose text gives its departure is reminded before its leave-by like any flight; one
        /// whose text does not (a travel day) is detected, with no time to remind of.
        var remindable: Bool {
            eligible || (occurrence.allDay && subject.facts.kind == .flight && subject.facts.leaveBy != nil)
        }

        // MARK: Flights

        /// Once per flight when it comes within the horizon (at once when found later), and again, with a new id,
        /// when its facts change; not after it has departed.
        func planFlightDetected(state: PlannerState, into due: inout [PlannedEvent], wake: (Instant) -> Void) {
            guard subject.facts.kind == .flight, let identity = subject.facts.flightIdentity, now < occurrence.start
            else { return }
            let enters = occurrence.start.adding(seconds: -configuration.horizon)
            guard now >= enters else {
                wake(enters)
                return
            }
            let id = EventID.make(
                subject.seed, .flightDetected, "flight:" + identity, occurrence.start.secondsSinceEpoch)
            guard !state.hasEmitted(id) else { return }
            due.append(base(.flightDetected, id: id, time: max(enters, now), expiry: occurrence.start))
        }

        /// Once for each change the flight-status service's answers brought (`LiveFlight.changes`), when it was
        /// asked, until the flight leaves (as the calendar had it, or later as the service says).
        func planFlightChanged(state: PlannerState, into due: inout [PlannedEvent], wake: (Instant) -> Void) {
            guard let live = subject.facts.flight?.live else { return }
            let departs = max(occurrence.start, live.departure ?? occurrence.start)
            for change in live.changes where change.asked < departs {
                guard now >= change.asked else {
                    wake(change.asked)
                    continue
                }
                guard now < departs else { return }
                let id = EventID.make(
                    subject.seed, .flightChanged, "changed:" + change.text, change.asked.secondsSinceEpoch,
                    occurrence.start.secondsSinceEpoch)
                guard !state.hasEmitted(id) else { continue }
                due.append(base(.flightChanged(change), id: id, time: change.asked, expiry: departs))
            }
        }

        // MARK: Reminders

        /// Every reminder whose time has come and whose anchor has not passed; of several missed ones only the
        /// latest is delivered (marked late), and none once a later one has been delivered.
        func planReminders(state: PlannerState, into due: inout [PlannedEvent], wake: (Instant) -> Void) {
            guard remindable || subject.rule?.allDay != nil, !cancelled || configuration.includeCancelled else {
                return
            }
            if let attendance = subject.rule?.attendance {
                // The rule says which of your answers get reminders; one you have not answered always does.
                if let answer = subject.facts.participation, !attendance.contains(answer) { return }
            } else if subject.facts.declined && !configuration.includeDeclined {
                return
            }
            // Most states hold no answer: no hashing of the key then (this runs at every plan of every occurrence).
            let answers = state.answers.isEmpty ? nil : state.answers[key]
            // Dismissed or acknowledged: nothing more, snoozes included.
            guard answers?.silenced == nil else { return }
            for (index, until) in (answers?.snoozes ?? []).enumerated() {
                planSnooze(until, count: index + 1, tag: "snooze,until", state: state, into: &due, wake: wake)
            }
            // A snooze written into the calendar (Thunderbird's X-MOZ-SNOOZE-TIME) for this instance or every one.
            let component = occurrence.source.component
            for snooze in component.calendarSnoozes
            where (snooze.occurrenceStart == nil || snooze.occurrenceStart == occurrence.start)
                && (component.acknowledgedThrough.map { snooze.until > $0 } ?? true)
            {
                planSnooze(snooze.until, count: 1, tag: "calendar-snooze,until", state: state, into: &due, wake: wake)
            }
            var latestDue: Subject.Reminder?
            for candidate in subject.reminders {
                // Past its expiry it is never due again, emitted or not: asked about only once one is due (below).
                // A running meeting's every plan (a live activity's minute) so looks nothing up.
                if candidate.time <= now && now > candidate.expiry { continue }
                guard !state.hasEmitted(candidate.id) else { continue }
                guard candidate.time <= now else {
                    if candidate.time <= candidate.expiry { wake(candidate.time) }
                    continue
                }
                // The latest; of several at one instant (held back to the end of quiet hours), the nearest the anchor.
                if latestDue == nil || candidate.time > latestDue!.time
                    || (candidate.time == latestDue!.time && candidate.secondsBefore < latestDue!.secondsBefore)
                {
                    latestDue = candidate
                }
            }
            guard let candidate = latestDue else { return }
            // None earlier comes after a later one was delivered.
            if subject.reminders.contains(where: { $0.time >= candidate.time && state.hasEmitted($0.id) }) { return }
            let lateness = now.secondsSinceEpoch - candidate.time.secondsSinceEpoch
            let grace = state.grace(configuration.lateGrace, for: key, dueAt: candidate.time)
            let reminder = ReminderDetail(
                secondsBefore: candidate.secondsBefore,
                anchor: candidate.source == .offset ? subject.anchorKind : .start, source: candidate.source,
                late: lateness > grace, lateness: lateness > grace ? lateness : 0,
                deferredFrom: candidate.deferredFrom)
            due.append(base(.reminderDue(reminder), id: candidate.id, time: candidate.time, expiry: candidate.expiry))
        }

        /// The time to get ready (the time to leave less `prep:`): once for each instant it has, while the time to
        /// leave is ahead; again when that moves (a route's new answer). Quiet hours do not hold it back: it is the
        /// wake-up. Dismissed and declined occurrences get none, as they get no reminders.
        func planPrepare(state: PlannerState, into due: inout [PlannedEvent], wake: (Instant) -> Void) {
            guard remindable, !cancelled, let leaveBy = subject.facts.leaveBy,
                let prepareBy = subject.facts.leave?.prepareBy
            else { return }
            if subject.facts.declined && !configuration.includeDeclined { return }
            if !state.answers.isEmpty, state.answers[key]?.silenced != nil { return }
            let id = EventID.make(
                subject.seed, .prepareDue, "prepare,leave", prepareBy.secondsSinceEpoch,
                leaveBy.secondsSinceEpoch)
            guard !state.hasEmitted(id) else { return }
            guard prepareBy <= now else { return wake(prepareBy) }
            guard now < leaveBy else { return }
            due.append(base(.prepareDue, id: id, time: prepareBy, expiry: leaveBy))
        }

        /// Until when a reminder of this occurrence is of use: its end, or a flight's departure.
        var reminderLimit: Instant { subject.facts.kind == .flight ? occurrence.start : occurrence.end }

        /// A snoozed reminder: at its instant, once, while it is of use.
        func planSnooze(
            _ until: Instant, count: Int, tag: String, state: PlannerState, into due: inout [PlannedEvent],
            wake: (Instant) -> Void
        ) {
            let id = EventID.make(subject.seed, .reminderDue, tag, Int64(count), until.secondsSinceEpoch)
            guard !state.hasEmitted(id), until < reminderLimit else { return }
            guard until <= now else { return wake(until) }
            let lateness = now.secondsSinceEpoch - until.secondsSinceEpoch
            let reminder = ReminderDetail(
                secondsBefore: anchor.secondsSinceEpoch - until.secondsSinceEpoch, anchor: subject.anchorKind,
                source: .snooze, late: lateness > configuration.lateGrace,
                lateness: lateness > configuration.lateGrace ? lateness : 0, snoozeCount: count)
            due.append(base(.reminderDue(reminder), id: id, time: until, expiry: reminderLimit))
        }

        // MARK: Live activities

        /// From anchor − lead to the end (at most `maxDuration` after the start); an update at every interval and
        /// at the phase change; ended early when the occurrence is cancelled or moved.
        func planLiveActivity(state: PlannerState, into due: inout [PlannedEvent], wake: (Instant) -> Void) {
            var running = state.active[key]
            var rescheduled = false
            if !state.answers.isEmpty, state.answers[key]?.dismissed == true {
                // Dismissed: a running activity ends now, and none starts again.
                if let activity = running { due.append(endEvent(activity, reason: .dismissed, at: now)) }
                return
            }
            if let activity = running {
                if cancelled {
                    due.append(endEvent(activity, reason: .cancelled, at: now))
                    return
                }
                if activity.occurrenceStart != occurrence.start {
                    due.append(endEvent(activity, reason: .rescheduled, at: now))
                    running = nil
                    rescheduled = true
                }
            }
            guard eligible, !cancelled, subject.rule?.liveActivity != false else { return }
            let activityStart = running?.activityStart ?? anchor.adding(seconds: -configuration.liveActivityLead)
            let capped = activityStart.adding(seconds: configuration.liveActivityMaxDuration)
            let activityEnd = min(occurrence.end, capped)
            let endReason: LiveActivityDetail.EndReason = capped < occurrence.end ? .expired : .ended

            guard let activity = running else {
                // Not running: start when its window has come (at once when found while the window is open).
                if now < activityStart {
                    wake(activityStart)
                } else if now < activityEnd || (activityEnd == activityStart && now == activityStart) {
                    let id = EventID.make(
                        subject.seed, .liveActivityStart, "start,occurrence", activityStart.secondsSinceEpoch,
                        occurrence.start.secondsSinceEpoch)
                    guard !state.hasEmitted(id) else { return }
                    // A moved occurrence whose new window is already open starts now, after the old one's end.
                    let time = rescheduled ? max(activityStart, now) : activityStart
                    due.append(base(.liveActivityStart(detail(at: time)), id: id, time: time, expiry: activityEnd))
                    wake(
                        nextReport(after: activityStart, activityStart: activityStart, end: activityEnd) ?? activityEnd)
                }
                return
            }
            if now >= activityEnd {
                due.append(endEvent(activity, reason: endReason, at: activityEnd))
                return
            }
            // The latest report instant that has come and not been reported.
            if let report = latestReport(
                upTo: now, after: activity.lastReport, activityStart: activityStart, end: activityEnd)
            {
                let id = EventID.make(
                    subject.seed, .liveActivityUpdate, "update,occurrence", report.secondsSinceEpoch,
                    occurrence.start.secondsSinceEpoch)
                if !state.hasEmitted(id) {
                    let expiry =
                        nextReport(after: report, activityStart: activityStart, end: activityEnd) ?? activityEnd
                    due.append(base(.liveActivityUpdate(detail(at: report)), id: id, time: report, expiry: expiry))
                }
            } else if activity.fingerprint != fingerprint && activity.fingerprint != PlannerState.unknownFingerprint {
                // The occurrence changed (title, place, end): report it at once.
                let id = EventID.make(
                    subject.seed, .liveActivityUpdate, "changed,at", Int64(bitPattern: fingerprint),
                    now.secondsSinceEpoch)
                if !state.hasEmitted(id) {
                    let expiry = nextReport(after: now, activityStart: activityStart, end: activityEnd) ?? activityEnd
                    due.append(base(.liveActivityUpdate(detail(at: now)), id: id, time: now, expiry: expiry))
                }
            }
            wake(
                nextReport(after: max(now, activity.lastReport), activityStart: activityStart, end: activityEnd)
                    ?? activityEnd)
        }

        /// Report instants: every interval from the activity's start, and the phase change at the start.
        func nextReport(after instant: Instant, activityStart: Instant, end: Instant) -> Instant? {
            let interval = max(1, configuration.liveActivityUpdateInterval)
            let elapsed = instant.secondsSinceEpoch - activityStart.secondsSinceEpoch
            var next = activityStart.adding(seconds: (elapsed / interval + 1) * interval)
            let start = occurrence.start
            if start > instant && start < next { next = start }
            if let endingSoon = endingSoonAt, endingSoon > instant && endingSoon < next { next = endingSoon }
            return next < end ? next : nil
        }

        func latestReport(upTo now: Instant, after last: Instant, activityStart: Instant, end: Instant) -> Instant? {
            let interval = max(1, configuration.liveActivityUpdateInterval)
            let elapsed = now.secondsSinceEpoch - activityStart.secondsSinceEpoch
            var latest = activityStart.adding(seconds: (elapsed / interval) * interval)
            let start = occurrence.start
            if start <= now && start > latest { latest = start }
            if let endingSoon = endingSoonAt, endingSoon <= now && endingSoon > latest { latest = endingSoon }
            guard latest > last, latest < end else { return nil }
            return latest
        }

        /// When a live activity's phase becomes `endingSoon` (`day.endingSoon`), besides the start's change.
        var endingSoonAt: Instant? {
            guard let endingSoon = configuration.day?.endingSoon, endingSoon > 0 else { return nil }
            return max(occurrence.start, occurrence.end.adding(seconds: -endingSoon))
        }

        func detail(at instant: Instant) -> LiveActivityDetail {
            LiveActivityDetail(
                start: occurrence.start, end: occurrence.end, at: instant,
                endingSoon: configuration.day?.endingSoon ?? 0)
        }

        // MARK: Invitations

        /// `invitationPending` at each of `day.pendingInvitations` before the start while the user's answer is
        /// `NEEDS-ACTION`; of several missed only the latest, and none once a later one was delivered or it started.
        func planInvitationPending(state: PlannerState, into due: inout [PlannedEvent], wake: (Instant) -> Void) {
            guard subject.facts.participation == "NEEDS-ACTION", !cancelled, eligible,
                let offsets = configuration.day?.pendingInvitations
            else { return }
            let start = occurrence.start
            var latest: (time: Instant, offset: Int64, id: EventID)?
            for offset in offsets.sorted(by: >) {
                let time = start.adding(seconds: -offset)
                let id = EventID.make(subject.seed, .invitationPending, "before,start", offset, start.secondsSinceEpoch)
                if state.hasEmitted(id) {
                    latest = nil  // a later one comes only after this, which was delivered
                    continue
                }
                guard time <= now else {
                    if now < start { wake(time) }
                    break
                }
                if now < start { latest = (time, offset, id) }
            }
            guard let latest else { return }
            let lateness = now.secondsSinceEpoch - latest.time.secondsSinceEpoch
            let detail = InvitationDetail(
                secondsBefore: latest.offset, organizer: occurrence.source.component.organizer,
                lateness: lateness > configuration.lateGrace ? lateness : 0)
            due.append(base(.invitationPending(detail), id: latest.id, time: latest.time, expiry: start))
        }

        func endEvent(_ activity: PlannerState.ActiveActivity, reason: LiveActivityDetail.EndReason, at time: Instant)
            -> PlannedEvent
        {
            var activity = activity
            // Unmoved, its end is the occurrence's as it is now (a change the last update has not reported yet).
            if activity.occurrenceStart == occurrence.start { activity.occurrenceEnd = occurrence.end }
            return Context.end(key: key, seed: subject.seed, activity: activity, reason: reason, at: time)
        }

        /// The end of a running activity. It names the activity it ends, not the occurrence as it is now: its id,
        /// its subject (`uid/<start>`) and its start and end are the ones the activity started with (and its
        /// updates last reported), so a consumer keyed on subject sees the card it holds end even when a single
        /// event moved, and one activity ends once whatever the reason.
        static func end(
            key: OccurrenceKey, seed: EventID.Hasher, activity: PlannerState.ActiveActivity,
            reason: LiveActivityDetail.EndReason, at time: Instant
        ) -> PlannedEvent {
            let id = EventID.make(
                seed, .liveActivityEnd, "start,occurrence", activity.activityStart.secondsSinceEpoch,
                activity.occurrenceStart.secondsSinceEpoch)
            let state = LiveActivityDetail(start: activity.occurrenceStart, end: activity.occurrenceEnd, at: time)
            return PlannedEvent(
                .liveActivityEnd(state, reason: reason), id: id, key: key, occurrenceStart: activity.occurrenceStart,
                occurrenceEnd: activity.occurrenceEnd, time: time, expiry: time.adding(seconds: 86_400),
                fingerprint: activity.fingerprint)
        }

        /// An event about this occurrence as it is now.
        func base(_ payload: PlannedEvent.Payload, id: EventID, time: Instant, expiry: Instant) -> PlannedEvent {
            PlannedEvent(
                payload, id: id, key: key, occurrenceStart: occurrence.start, occurrenceEnd: occurrence.end,
                time: time, expiry: expiry, fingerprint: fingerprint)
        }
    }
}
