/// Decides what is due: a pure function of (occurrences, configuration, state, now) (DESIGN §1 and §5).
///
/// It returns the events due at `now` that the state has not seen, and the next instant at which something
/// becomes due; whatever sleeps, watches or writes sits around it. Calling it again at the same `now` after
/// applying its events returns nothing, so a run stopped at any point and started again continues exactly.
///
/// The caller passes every occurrence that overlaps `[now − maxDuration, now + horizon]`.
public enum Planner {
    /// What is due now, and when to look again.
    public struct Plan: Sendable {
        /// Due events in emission order: by scheduled time, then ends before starts, then id.
        public var due: [PlannedEvent]
        /// The next instant after `now` at which something becomes due, or `nil` when nothing will.
        public var nextWake: Instant?
    }

    /// Plans at `now`.
    public static func plan(
        _ occurrences: [Occurrence], state: PlannerState, configuration: PlannerConfiguration, now: Instant
    ) -> Plan {
        var due: [PlannedEvent] = []
        var wake: Instant?
        func wakeAt(_ instant: Instant) {
            if instant > now && (wake == nil || instant < wake!) { wake = instant }
        }
        var present = Set<OccurrenceKey>()
        for occurrence in occurrences {
            let key = OccurrenceKey(occurrence)
            present.insert(key)
            let context = Context(occurrence: occurrence, key: key, configuration: configuration, now: now)
            context.planReminders(state: state, into: &due, wake: wakeAt)
            context.planLiveActivity(state: state, into: &due, wake: wakeAt)
        }
        // A running activity whose occurrence is gone ends now.
        for (key, activity) in state.active where !present.contains(key) {
            due.append(
                Context.end(
                    key: key, activity: activity, reason: .removed, at: now, fingerprint: activity.fingerprint,
                    occurrenceStart: activity.occurrenceStart, occurrenceEnd: activity.occurrenceEnd))
        }
        due.sort { a, b in
            if a.time != b.time { return a.time < b.time }
            if order(a.type) != order(b.type) { return order(a.type) < order(b.type) }
            return a.id < b.id
        }
        return Plan(due: due, nextWake: wake)
    }

    /// Within one instant: an end before a start (a moved occurrence), a start before its updates.
    private static func order(_ type: EventType) -> Int {
        switch type {
        case .liveActivityEnd: 0
        case .flightDetected: 1
        case .liveActivityStart: 2
        case .liveActivityUpdate: 3
        case .reminderDue: 4
        }
    }

    /// The planning of one occurrence.
    struct Context {
        let occurrence: Occurrence
        let key: OccurrenceKey
        let configuration: PlannerConfiguration
        let now: Instant

        var cancelled: Bool { occurrence.status == .cancelled }
        var eligible: Bool { configuration.includeAllDay || !occurrence.allDay }
        /// Reminders and live activities count back from here (the start; a flight's leave-by once flights exist).
        var anchor: Instant { occurrence.start }

        var fingerprint: String {
            [
                occurrence.summary ?? "", occurrence.location ?? "", occurrence.end.description,
                occurrence.status.map { "\($0)" } ?? "",
            ].joined(separator: "\u{1F}")
        }

        // MARK: Reminders

        /// A reminder that may be due: when, and how it is named.
        struct Candidate {
            var time: Instant
            var secondsBefore: Int64
            var source: ReminderDetail.Source
            var discriminator: String
            var expiry: Instant
        }

        func reminderCandidates() -> [Candidate] {
            var candidates = configuration.reminderOffsets.map { offset in
                Candidate(
                    time: anchor.adding(seconds: -offset), secondsBefore: offset, source: .offset,
                    discriminator: "offset=\(offset);anchor=\(anchor.secondsSinceEpoch)", expiry: anchor)
            }
            if configuration.calendarAlarms {
                for trigger in AlarmExpander.triggers(of: occurrence)
                where trigger.alarm.action == "DISPLAY" || trigger.alarm.action == "AUDIO" {
                    // An alarm after the start stays useful for a quarter of an hour.
                    let expiry = trigger.trigger < anchor ? anchor : trigger.trigger.adding(seconds: 900)
                    candidates.append(
                        Candidate(
                            time: trigger.trigger,
                            secondsBefore: anchor.secondsSinceEpoch - trigger.trigger.secondsSinceEpoch,
                            source: .valarm,
                            discriminator:
                                "valarm=\(trigger.alarmIndex).\(trigger.repetition);at=\(trigger.trigger.secondsSinceEpoch)",
                            expiry: expiry))
                }
            }
            return candidates
        }

        /// Every reminder whose time has come and whose anchor has not passed; of several missed ones only the
        /// latest is delivered (marked late), and none once a later one has been delivered.
        func planReminders(state: PlannerState, into due: inout [PlannedEvent], wake: (Instant) -> Void) {
            guard eligible, !cancelled || configuration.includeCancelled else { return }
            let candidates = reminderCandidates()
            var latestDue: (candidate: Candidate, id: String)?
            var latestEmitted: Instant?
            for candidate in candidates {
                let id = EventID.make(.reminderDue, key, candidate.discriminator)
                if state.emitted.contains(id) {
                    if latestEmitted == nil || candidate.time > latestEmitted! { latestEmitted = candidate.time }
                    continue
                }
                guard candidate.time <= now else {
                    if candidate.time <= candidate.expiry { wake(candidate.time) }
                    continue
                }
                guard now <= candidate.expiry else { continue }  // its anchor passed: dropped
                if latestDue == nil || candidate.time > latestDue!.candidate.time { latestDue = (candidate, id) }
            }
            guard let (candidate, id) = latestDue else { return }
            if let latestEmitted, latestEmitted >= candidate.time { return }
            let lateness = now.secondsSinceEpoch - candidate.time.secondsSinceEpoch
            var event = base(.reminderDue, id: id, time: candidate.time, expiry: candidate.expiry)
            event.reminder = ReminderDetail(
                secondsBefore: candidate.secondsBefore, anchor: .start, source: candidate.source,
                late: lateness > configuration.lateGrace, lateness: lateness > configuration.lateGrace ? lateness : 0)
            due.append(event)
        }

        // MARK: Live activities

        /// From anchor − lead to the end (at most `maxDuration` after the start); an update at every interval and
        /// at the phase change; ended early when the occurrence is cancelled or moved.
        func planLiveActivity(state: PlannerState, into due: inout [PlannedEvent], wake: (Instant) -> Void) {
            var running = state.active[key]
            var rescheduled = false
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
            guard eligible, !cancelled else { return }
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
                        .liveActivityStart, key,
                        "start=\(activityStart.secondsSinceEpoch);occurrence=\(occurrence.start.secondsSinceEpoch)")
                    guard !state.emitted.contains(id) else { return }
                    // A moved occurrence whose new window is already open starts now, after the old one's end.
                    let time = rescheduled ? max(activityStart, now) : activityStart
                    var event = base(.liveActivityStart, id: id, time: time, expiry: activityEnd)
                    event.liveActivity = detail(at: time)
                    due.append(event)
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
                    .liveActivityUpdate, key,
                    "update=\(report.secondsSinceEpoch);occurrence=\(occurrence.start.secondsSinceEpoch)")
                if !state.emitted.contains(id) {
                    var event = base(
                        .liveActivityUpdate, id: id, time: report,
                        expiry: nextReport(after: report, activityStart: activityStart, end: activityEnd) ?? activityEnd
                    )
                    event.liveActivity = detail(at: report)
                    due.append(event)
                }
            } else if activity.fingerprint != fingerprint {
                // The occurrence changed (title, place, end): report it at once.
                let id = EventID.make(.liveActivityUpdate, key, "changed=\(fingerprint);at=\(now.secondsSinceEpoch)")
                if !state.emitted.contains(id) {
                    var event = base(
                        .liveActivityUpdate, id: id, time: now,
                        expiry: nextReport(after: now, activityStart: activityStart, end: activityEnd) ?? activityEnd)
                    event.liveActivity = detail(at: now)
                    due.append(event)
                }
            }
            wake(
                nextReport(after: max(now, activity.lastReport), activityStart: activityStart, end: activityEnd)
                    ?? activityEnd)
        }

        /// Report instants: every interval from the activity's start, and the phase change at the anchor.
        func nextReport(after instant: Instant, activityStart: Instant, end: Instant) -> Instant? {
            let interval = max(1, configuration.liveActivityUpdateInterval)
            let elapsed = instant.secondsSinceEpoch - activityStart.secondsSinceEpoch
            var next = activityStart.adding(seconds: (elapsed / interval + 1) * interval)
            if anchor > instant && anchor < next { next = anchor }
            return next < end ? next : nil
        }

        func latestReport(upTo now: Instant, after last: Instant, activityStart: Instant, end: Instant) -> Instant? {
            let interval = max(1, configuration.liveActivityUpdateInterval)
            let elapsed = now.secondsSinceEpoch - activityStart.secondsSinceEpoch
            var latest = activityStart.adding(seconds: (elapsed / interval) * interval)
            if anchor <= now && anchor > latest { latest = anchor }
            guard latest > last, latest < end else { return nil }
            return latest
        }

        func detail(at instant: Instant) -> LiveActivityDetail {
            LiveActivityDetail(start: occurrence.start, end: occurrence.end, at: instant)
        }

        func endEvent(_ activity: PlannerState.ActiveActivity, reason: LiveActivityDetail.EndReason, at time: Instant)
            -> PlannedEvent
        {
            Context.end(
                key: key, activity: activity, reason: reason, at: time, fingerprint: fingerprint,
                occurrenceStart: occurrence.start, occurrenceEnd: occurrence.end)
        }

        static func end(
            key: OccurrenceKey, activity: PlannerState.ActiveActivity, reason: LiveActivityDetail.EndReason,
            at time: Instant, fingerprint: String, occurrenceStart: Instant, occurrenceEnd: Instant
        ) -> PlannedEvent {
            // Named by the activity it ends, so one activity ends once whatever the reason.
            let id = EventID.make(
                .liveActivityEnd, key,
                "start=\(activity.activityStart.secondsSinceEpoch);occurrence=\(activity.occurrenceStart.secondsSinceEpoch)"
            )
            return PlannedEvent(
                type: .liveActivityEnd, id: id, key: key, occurrenceStart: occurrenceStart,
                occurrenceEnd: occurrenceEnd, time: time, expiry: time.adding(seconds: 86_400), reminder: nil,
                liveActivity: LiveActivityDetail(
                    start: occurrenceStart, end: occurrenceEnd, at: time, endReason: reason),
                fingerprint: fingerprint)
        }

        func base(_ type: EventType, id: String, time: Instant, expiry: Instant) -> PlannedEvent {
            PlannedEvent(
                type: type, id: id, key: key, occurrenceStart: occurrence.start, occurrenceEnd: occurrence.end,
                time: time, expiry: expiry, reminder: nil, liveActivity: nil, fingerprint: fingerprint)
        }
    }
}
