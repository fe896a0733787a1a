import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The planner on a manual clock: exact instants, no sleeping (docs/design.md §5).
@Suite struct PlannerTests {
    static let berlin = TimeZoneDatabase.rules(named: "Europe/Berlin")!

    /// A timed meeting in UTC, as the expander would produce it.
    static func meeting(
        _ uid: String, _ start: String, _ end: String, status: CalendarComponent.Status? = nil, allDay: Bool = false,
        alarms: [Alarm] = []
    ) -> Occurrence {
        var component = CalendarComponent(kind: .event, uid: uid)
        component.summary = "Meeting \(uid)"
        component.status = status
        component.alarms = alarms
        let source = OccurrenceSource(
            calendar: "work", component: component, allDay: allDay, timeZone: nil, displayZone: berlin)
        return Occurrence(source: source, recurrenceID: nil, start: utc(start), end: utc(end))
    }

    /// Runs from `from` to `to`; `calendar` gives the occurrences in force at each instant.
    static func run(
        from: String, to: String, state: inout PlannerState, configuration: PlannerConfiguration = .init(),
        facts: (Occurrence) -> OccurrenceFacts = { _ in .event }, calendar: @escaping (Instant) -> [Occurrence]
    ) -> [PlannedEvent] {
        var events: [PlannedEvent] = []
        Planner.run(
            from: utc(from), to: utc(to), state: &state, configuration: configuration, facts: facts,
            occurrencesAt: calendar
        ) { events.append($0) }
        return events
    }

    /// Runs from a fresh state with a fixed calendar.
    static func run(
        from: String, to: String, configuration: PlannerConfiguration = .init(),
        facts: (Occurrence) -> OccurrenceFacts = { _ in .event }, _ occurrences: [Occurrence]
    ) -> [PlannedEvent] {
        var state = PlannerState()
        return run(from: from, to: to, state: &state, configuration: configuration, facts: facts) { _ in occurrences }
    }

    /// `type time [detail]` lines, the way the assertions read.
    static func lines(_ events: [PlannedEvent], types: Set<EventType> = Set(EventType.allCases)) -> [String] {
        events.filter { types.contains($0.type) }.map { event in
            var line = "\(event.type.rawValue) \(event.time)"
            if let reminder = event.reminder {
                line += " \(reminder.secondsBefore / 60)m\(reminder.late ? " late \(reminder.lateness)s" : "")"
                if reminder.source == .valarm { line += " valarm" }
                if reminder.anchor == .leaveBy { line += " before leaveBy" }
            }
            if let reason = event.liveActivity?.endReason { line += " \(reason.rawValue)" }
            return line
        }
    }

    let standup = PlannerTests.meeting("standup", "2027-03-01T10:00:00Z", "2027-03-01T10:30:00Z")

    @Test func remindersFireAtStartMinusEachOffset() {
        let events = Self.run(from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", [standup])
        #expect(
            Self.lines(events, types: [.reminderDue]) == [
                "reminderDue 2027-03-01T09:30:00Z 30m", "reminderDue 2027-03-01T09:45:00Z 15m",
                "reminderDue 2027-03-01T09:55:00Z 5m",
            ])
    }

    @Test func liveActivityStartsUpdatesEveryMinuteChangesPhaseAndEnds() {
        let events = Self.run(from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", [standup])
        let activity = events.filter { $0.type != .reminderDue }
        #expect(activity.first?.type == .liveActivityStart)
        #expect(activity.first?.time == utc("2027-03-01T09:45:00Z"))
        #expect(activity.first?.liveActivity?.secondsToStart == 900)
        let updates = activity.filter { $0.type == .liveActivityUpdate }
        // 09:46 … 10:29, one a minute.
        #expect(updates.count == 44)
        #expect(updates.first?.time == utc("2027-03-01T09:46:00Z"))
        #expect(updates.last?.time == utc("2027-03-01T10:29:00Z"))
        let phaseChange = updates.first { $0.liveActivity?.phase == .inProgress }
        #expect(phaseChange?.time == utc("2027-03-01T10:00:00Z"))
        #expect(Self.lines([activity.last!]) == ["liveActivityEnd 2027-03-01T10:30:00Z ended"])
    }

    @Test func phaseChangeIsReportedAtTheStartEvenOffTheUpdateGrid() {
        var configuration = PlannerConfiguration()
        configuration.liveActivityLead = 600
        configuration.liveActivityUpdateInterval = 420  // 09:50, 09:57, 10:04 … and the start at 10:00
        var state = PlannerState()
        let events = Self.run(
            from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", state: &state, configuration: configuration
        ) { _ in [standup] }
        let updates = events.filter { $0.type == .liveActivityUpdate }.map(\.time.description)
        #expect(updates.prefix(3) == ["2027-03-01T09:57:00Z", "2027-03-01T10:00:00Z", "2027-03-01T10:04:00Z"])
    }

    @Test func cancelledOccurrenceEndsItsActivityAndCancelsItsReminders() {
        let cancelled = Self.meeting("standup", "2027-03-01T10:00:00Z", "2027-03-01T10:30:00Z", status: .cancelled)
        var state = PlannerState()
        let events = Self.run(from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", state: &state) { now in
            now < utc("2027-03-01T09:50:00Z") ? [standup] : [cancelled]
        }
        #expect(
            Self.lines(events, types: [.reminderDue, .liveActivityEnd]).suffix(2) == [
                "reminderDue 2027-03-01T09:45:00Z 15m", "liveActivityEnd 2027-03-01T09:50:00Z cancelled",
            ])
        #expect(events.last?.type == .liveActivityEnd)
        #expect(state.active.isEmpty)
    }

    @Test func deletedOccurrenceEndsItsActivityAsRemoved() {
        var state = PlannerState()
        let events = Self.run(from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", state: &state) { now in
            now < utc("2027-03-01T09:50:00Z") ? [standup] : []
        }
        #expect(Self.lines(events).last == "liveActivityEnd 2027-03-01T09:50:00Z removed")
        #expect(!Self.lines(events).contains("reminderDue 2027-03-01T09:55:00Z 5m"))
    }

    @Test func movedOccurrenceGetsNewRemindersAndNoStaleOnes() {
        let moved = Self.meeting("standup", "2027-03-01T11:00:00Z", "2027-03-01T11:30:00Z")
        var state = PlannerState()
        let events = Self.run(from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", state: &state) { now in
            now < utc("2027-03-01T09:40:00Z") ? [standup] : [moved]
        }
        #expect(
            Self.lines(events, types: [.reminderDue]) == [
                "reminderDue 2027-03-01T09:30:00Z 30m", "reminderDue 2027-03-01T10:30:00Z 30m",
                "reminderDue 2027-03-01T10:45:00Z 15m", "reminderDue 2027-03-01T10:55:00Z 5m",
            ])
        #expect(events.first { $0.type == .liveActivityStart }?.time == utc("2027-03-01T10:45:00Z"))
    }

    @Test func movedWhileRunningEndsAsRescheduledAndStartsAgain() {
        let moved = Self.meeting("standup", "2027-03-01T10:05:00Z", "2027-03-01T10:35:00Z")
        var state = PlannerState()
        let events = Self.run(from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", state: &state) { now in
            now < utc("2027-03-01T09:52:00Z") ? [standup] : [moved]
        }
        let lifecycle = Self.lines(events, types: [.liveActivityStart, .liveActivityEnd])
        #expect(
            lifecycle == [
                "liveActivityStart 2027-03-01T09:45:00Z", "liveActivityEnd 2027-03-01T09:52:00Z rescheduled",
                // The new window (09:50–10:35) is already open: it starts at once.
                "liveActivityStart 2027-03-01T09:52:00Z", "liveActivityEnd 2027-03-01T10:35:00Z ended",
            ])
    }

    @Test func restartAfterDowntimeFollowsTheLatePolicy() {
        // A journal left by a run that stopped at 09:20, before anything of the standup was due.
        var state = PlannerState()
        _ = Self.run(from: "2027-03-01T09:00:00Z", to: "2027-03-01T09:20:00Z", state: &state) { _ in [self.standup] }
        #expect(state.emitted.isEmpty)
        let events = Self.run(from: "2027-03-01T09:50:00Z", to: "2027-03-01T12:00:00Z", state: &state) { _ in
            [self.standup]
        }
        // 30m and 15m were missed: only the latest comes, once, marked late by 5 minutes; 5m is on time.
        #expect(
            Self.lines(events, types: [.reminderDue]) == [
                "reminderDue 2027-03-01T09:45:00Z 15m late 300s", "reminderDue 2027-03-01T09:55:00Z 5m",
            ])
        // The activity still running is started, then reported as it is now.
        let activity = Self.lines(events, types: [.liveActivityStart, .liveActivityUpdate])
        #expect(
            activity.prefix(2) == ["liveActivityStart 2027-03-01T09:45:00Z", "liveActivityUpdate 2027-03-01T09:50:00Z"])
    }

    @Test func restartAfterTheAnchorDropsRemindersAndAfterTheEndStartsNothing() {
        var state = PlannerState()
        let afterStart = Self.run(from: "2027-03-01T10:10:00Z", to: "2027-03-01T12:00:00Z", state: &state) { _ in
            [self.standup]
        }
        #expect(Self.lines(afterStart, types: [.reminderDue]).isEmpty)
        #expect(afterStart.first?.type == .liveActivityStart)
        var fresh = PlannerState()
        #expect(
            Self.run(from: "2027-03-01T10:40:00Z", to: "2027-03-01T12:00:00Z", state: &fresh) { _ in [self.standup] }
                .isEmpty)
    }

    @Test func aRunStoppedPartWayAndStartedAgainEmitsOnlyTheRest() {
        var whole = PlannerState()
        let once = Self.run(from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", state: &whole) { _ in
            [self.standup]
        }
        for stop in ["2027-03-01T09:30:00Z", "2027-03-01T09:45:00Z", "2027-03-01T10:00:00Z", "2027-03-01T10:29:30Z"] {
            var state = PlannerState()
            let first = Self.run(from: "2027-03-01T09:00:00Z", to: stop, state: &state) { _ in [self.standup] }
            let second = Self.run(from: stop, to: "2027-03-01T12:00:00Z", state: &state) { _ in [self.standup] }
            #expect((first + second).map(\.id) == once.map(\.id), "stopped at \(stop)")
        }
        #expect(Set(once.map(\.id)).count == once.count)
    }

    @Test func longOccurrenceExpiresAfterMaxDuration() {
        let workshop = Self.meeting("workshop", "2027-03-01T08:00:00Z", "2027-03-01T20:00:00Z")
        let events = Self.run(from: "2027-03-01T07:00:00Z", to: "2027-03-02T00:00:00Z", [workshop])
        #expect(Self.lines(events, types: [.liveActivityEnd]) == ["liveActivityEnd 2027-03-01T15:45:00Z expired"])
    }

    @Test func allDayOccurrencesGetNothingUnlessConfigured() {
        let holiday = Self.meeting("holiday", "2027-03-01T23:00:00Z", "2027-03-02T23:00:00Z", allDay: true)
        #expect(Self.run(from: "2027-03-01T00:00:00Z", to: "2027-03-03T00:00:00Z", [holiday]).isEmpty)
        var configuration = PlannerConfiguration()
        configuration.includeAllDay = true
        var state = PlannerState()
        let events = Self.run(
            from: "2027-03-01T00:00:00Z", to: "2027-03-03T00:00:00Z", state: &state, configuration: configuration
        ) { _ in [holiday] }
        #expect(Self.lines(events, types: [.reminderDue]).first == "reminderDue 2027-03-01T22:30:00Z 30m")
    }

    @Test func calendarAlarmsBecomeReminders() {
        let alarm = Alarm(action: "DISPLAY", trigger: .relative(ICalDuration(exactSeconds: -3600), toEnd: false))
        let procedure = Alarm(action: "PROCEDURE", trigger: .relative(ICalDuration(exactSeconds: -1200), toEnd: false))
        let dentist = Self.meeting(
            "dentist", "2027-03-01T10:00:00Z", "2027-03-01T10:30:00Z", alarms: [alarm, procedure])
        let events = Self.run(from: "2027-03-01T08:00:00Z", to: "2027-03-01T12:00:00Z", [dentist])
        // PROCEDURE alarms are never acted on.
        #expect(Self.lines(events, types: [.reminderDue]).first == "reminderDue 2027-03-01T09:00:00Z 60m valarm")
        #expect(Self.lines(events, types: [.reminderDue]).count == 4)
    }

    @Test func twoRunsGiveTheSameIdsAndTimes() {
        let first = Self.run(from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", [standup])
        let second = Self.run(from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", [standup])
        #expect(first == second)
        #expect(first.allSatisfy { $0.id.description.count == 32 && EventID(hex: $0.id.description) == $0.id })
    }
}

extension PlannerTests {
    @Test func anActivityCancelledPartWayReportsHowFarItGot() {
        let cancelled = Self.meeting("standup", "2027-03-01T10:00:00Z", "2027-03-01T10:30:00Z", status: .cancelled)
        var state = PlannerState()
        let events = Self.run(from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", state: &state) { now in
            now < utc("2027-03-01T10:15:00Z") ? [self.standup] : [cancelled]
        }
        let end = events.last { $0.type == .liveActivityEnd }?.liveActivity
        #expect(end?.endReason == .cancelled)
        #expect(end?.progress == 0.5)
        #expect(end?.secondsToEnd == 900)
    }
}

/// Flights and declined meetings: what classification tells the planner.
extension PlannerTests {
    /// BA987 departs 07:10 Berlin (06:10Z); leave by 02:25Z (3 h international lead and 45 min travel).
    static let flight = PlannerTests.meeting("ba987", "2027-03-03T06:10:00Z", "2027-03-03T08:05:00Z")
    static func flightFacts(gate: String = "") -> OccurrenceFacts {
        OccurrenceFacts(
            kind: .flight, leave: Leave(by: utc("2027-03-03T02:25:00Z"), travelSeconds: 2700, source: .flightRule),
            flightIdentity: "BA987 BER-LHR 2027-03-03T06:10:00Z gate \(gate)")
    }

    @Test func aFlightsRemindersAndLiveActivityHangOffLeaveBy() {
        let events = Self.run(
            from: "2027-03-03T00:00:00Z", to: "2027-03-03T12:00:00Z", facts: { _ in Self.flightFacts() }, [Self.flight])
        #expect(
            Self.lines(events, types: [.reminderDue, .liveActivityStart, .liveActivityEnd]) == [
                "reminderDue 2027-03-03T01:55:00Z 30m before leaveBy",
                "liveActivityStart 2027-03-03T02:10:00Z",
                "reminderDue 2027-03-03T02:10:00Z 15m before leaveBy",
                "reminderDue 2027-03-03T02:20:00Z 5m before leaveBy",
                "liveActivityEnd 2027-03-03T08:05:00Z ended",
            ])
        // The phase changes at departure, not at leave-by.
        let phases = events.filter { $0.type == .liveActivityUpdate }.map { "\($0.time) \($0.liveActivity!.phase)" }
        #expect(phases.contains("2027-03-03T06:09:00Z upcoming"))
        #expect(phases.contains("2027-03-03T06:10:00Z inProgress"))
        // With the anchor configured to the start, a flight is reminded like any event.
        var startAnchored = PlannerConfiguration()
        startAnchored.anchors[.flight] = .start
        let byStart = Self.run(
            from: "2027-03-03T00:00:00Z", to: "2027-03-03T12:00:00Z", configuration: startAnchored,
            facts: { _ in Self.flightFacts() }, [Self.flight])
        #expect(Self.lines(byStart, types: [.reminderDue]).first == "reminderDue 2027-03-03T05:40:00Z 30m")
    }

    @Test func aFlightIsDetectedOnceWithinTheHorizonAndAgainWhenItsFactsChange() {
        var state = PlannerState()
        // 60 days ahead: detected at the instant it enters the horizon, once.
        let detected = Self.run(
            from: "2026-12-01T00:00:00Z", to: "2027-01-10T00:00:00Z", state: &state,
            facts: { _ in Self.flightFacts() }, calendar: { _ in [Self.flight] })
        #expect(Self.lines(detected) == ["flightDetected 2027-01-02T06:10:00Z"])
        // The gate is announced on the day: detected again at once, with a new id.
        let changed = Self.run(
            from: "2027-03-03T04:00:00Z", to: "2027-03-03T04:01:00Z", state: &state,
            facts: { _ in Self.flightFacts(gate: "B12") }, calendar: { _ in [Self.flight] })
        #expect(Self.lines(changed, types: [.flightDetected]) == ["flightDetected 2027-03-03T04:00:00Z"])
        #expect(changed.first { $0.type == .flightDetected }?.id != detected.first?.id)
        // A plain event is never a flight.
        #expect(Self.run(from: "2026-12-01T00:00:00Z", to: "2027-03-03T00:00:00Z", [Self.flight]).isEmpty)
    }

    @Test func aDeclinedMeetingGetsNoRemindersUnlessConfigured() {
        let declined: (Occurrence) -> OccurrenceFacts = { _ in OccurrenceFacts(kind: .meeting, declined: true) }
        let events = Self.run(
            from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", facts: declined, [standup])
        #expect(Self.lines(events, types: [.reminderDue]).isEmpty)
        var configuration = PlannerConfiguration()
        configuration.includeDeclined = true
        let included = Self.run(
            from: "2027-03-01T09:00:00Z", to: "2027-03-01T12:00:00Z", configuration: configuration, facts: declined,
            [standup])
        #expect(Self.lines(included, types: [.reminderDue]).count == 3)
    }
}
