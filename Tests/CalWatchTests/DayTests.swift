import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRemote
@testable import CalWatchRuntime
@testable import CalWatchWebhook

/// The day as a whole (`day:`): conflicts, overruns, the end of a meeting, unanswered invitations and the agenda,
/// planned by the pipeline's own loop on a virtual clock from real calendar text.
@Suite(.ownThread) struct DayTests {
    /// One VEVENT: `start` and `end` as `20261202T090000Z`, `partstat` the user's answer (no attendee when `nil`).
    static func item(
        _ uid: String, _ start: String, _ end: String, summary: String? = nil, partstat: String? = "ACCEPTED",
        extra: [String] = []
    ) -> String {
        var lines = ["BEGIN:VEVENT", "UID:\(uid)", "DTSTAMP:20261101T000000Z", "DTSTART:\(start)", "DTEND:\(end)"]
        lines.append("SUMMARY:\(summary ?? uid)")
        if let partstat {
            lines += ["ORGANIZER:mailto:boss@example.org", "ATTENDEE;PARTSTAT=\(partstat):mailto:me@example.org"]
        }
        return (lines + extra + ["END:VEVENT"]).joined(separator: "\r\n")
    }

    static func calendar(_ items: [String]) -> String {
        (["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN"] + items + ["END:VCALENDAR", ""])
            .joined(separator: "\r\n")
    }

    static let settings = """
        timezone: Europe/Berlin
        me: [me@example.org]
        day:
          agendaAt: "08:00"
          endingSoon: 5m
          conflicts: { minOverlap: 5m, include: [accepted] }
          pendingInvitations: [1d, 2h]

        """

    /// The loop driven from `from` to `to` over the calendar text, as `replay` drives it; `changes` replace the
    /// calendar at their instants (a file saved again). Returns every event with its instant, and the state.
    static func run(
        _ text: String, settings: String = settings, from: String, to: String,
        changes: [(at: String, text: String)] = [], state: PlannerState = PlannerState()
    ) throws -> (events: [PlannedEvent], state: PlannerState) {
        try run(
            files: ["work": text], settings: settings, from: from, to: to,
            changes: changes.map { ($0.at, ["work": $0.text]) }, state: state)
    }

    /// The same over several calendars, one file each (`name.ics`, its calendar `name`), each its own origin as the
    /// daemon has them; a change names the files as they are then (a file left out was deleted).
    static func run(
        files: [String: String], settings: String = settings, from: String, to: String,
        changes: [(at: String, files: [String: String])] = [], state: PlannerState = PlannerState()
    ) throws -> (events: [PlannedEvent], state: PlannerState) {
        let (emitted, state) = try emitted(
            files: files, settings: settings, from: from, to: to, changes: changes, state: state)
        return (emitted.map(\.event), state)
    }

    /// The same, each event with the occurrence and facts the sinks get with it.
    static func emitted(
        files: [String: String], settings: String = settings, from: String, to: String,
        changes: [(at: String, files: [String: String])] = [], state: PlannerState = PlannerState()
    ) throws -> (events: [PlanningLoop.Emitted], state: PlannerState) {
        var configuration = try ConfigurationTests.parse(settings).planner
        let zone = TimeZoneDatabase.rules(named: "Europe/Berlin")!
        configuration.day?.zone = zone
        let classifier = Classifier(try ConfigurationTests.parse(settings))
        let names = Set(files.keys).union(changes.flatMap(\.files.keys)).sorted()
        let folder = SinkFixtures.folder()
        var loop = PlanningLoop(configuration: configuration, facts: classifier.facts(for:), state: state)
        func load(_ files: [String: String], at now: Instant) throws {
            for (origin, name) in names.enumerated() {
                loop.remove(origin: PlanningLoop.Origin(origin))
                guard let text = files[name] else { continue }
                let path = folder + "/\(name).ics"
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                let occurrences = scan([path], from: "2026-11-20", to: "2026-12-20").occurrences
                loop.add(occurrences, origin: PlanningLoop.Origin(origin), now: now)
            }
            loop.endRemovedActivities(at: now)
        }
        var now = utc(from)
        let end = utc(to)
        try load(files, at: now)
        var pending = changes.map { (utc($0.at), $0.files) }
        var events: [PlanningLoop.Emitted] = []
        while now < end {
            events += loop.step(at: now).events
            if let change = pending.first, change.0 <= (loop.nextInstant ?? end) {
                pending.removeFirst()
                now = max(now, change.0)
                try load(change.1, at: now)
                continue
            }
            guard let next = loop.nextInstant else { break }
            now = next
        }
        return (events.filter { $0.event.time < end }, loop.state)
    }

    static func of(_ type: EventType, _ events: [PlannedEvent]) -> [PlannedEvent] { events.filter { $0.type == type } }

    // MARK: Conflicts

    @Test func twoAcceptedMeetingsThatOverlapAreReportedOnceADayAheadAndAgainWhenOneMoves() throws {
        let text = Self.calendar([
            Self.item("review", "20261202T090000Z", "20261202T100000Z", summary: "Design review"),
            Self.item("call", "20261202T093000Z", "20261202T103000Z", summary: "Customer call"),
        ])
        let moved = Self.calendar([
            Self.item("review", "20261202T090000Z", "20261202T100000Z", summary: "Design review"),
            Self.item("call", "20261202T094500Z", "20261202T104500Z", summary: "Customer call"),
        ])
        let (events, _) = try Self.run(
            text, from: "2026-11-30T00:00:00Z", to: "2026-12-03T00:00:00Z",
            changes: [("2026-12-01T12:00:00Z", moved)])
        let conflicts = Self.of(.conflictDetected, events)
        #expect(conflicts.map(\.time) == [utc("2026-12-01T09:00:00Z"), utc("2026-12-01T12:00:00Z")])
        #expect(conflicts.allSatisfy { $0.key.uid == "review" && $0.expiry <= utc("2026-12-02T09:45:00Z") })
        guard case .conflictDetected(let second)? = conflicts.last?.payload else { return }
        #expect(second.with.uid == "call")
        #expect(second.overlapSeconds == 900)
        #expect(second.overlapStart == utc("2026-12-02T09:45:00Z"))
    }

    @Test func freeDeclinedAllDayCancelledAndSlightOverlapsAreNoConflict() throws {
        let text = Self.calendar([
            Self.item("review", "20261202T090000Z", "20261202T100000Z"),
            Self.item("focus", "20261202T090000Z", "20261202T120000Z", partstat: nil, extra: ["TRANSP:TRANSPARENT"]),
            Self.item("declined", "20261202T091500Z", "20261202T094500Z", partstat: "DECLINED"),
            Self.item("cancelled", "20261202T091500Z", "20261202T094500Z", extra: ["STATUS:CANCELLED"]),
            Self.item("tentative", "20261202T091500Z", "20261202T094500Z", partstat: "TENTATIVE"),
            Self.item("handover", "20261202T095500Z", "20261202T103000Z"),
            """
            BEGIN:VEVENT\r
            UID:holiday\r
            DTSTAMP:20261101T000000Z\r
            DTSTART;VALUE=DATE:20261202\r
            DTEND;VALUE=DATE:20261203\r
            SUMMARY:Holiday\r
            END:VEVENT
            """,
        ])
        let (events, _) = try Self.run(text, from: "2026-11-30T00:00:00Z", to: "2026-12-03T00:00:00Z")
        // The handover overlaps by 5 minutes, not more than `minOverlap`; the rest do not take part.
        #expect(Self.of(.conflictDetected, events).isEmpty)
        // Tentative ones do when `include` says so.
        let tentative = Self.settings.replacingOccurrences(
            of: "include: [accepted]", with: "include: [accepted, tentative]")
        let (withTentative, _) = try Self.run(
            text, settings: tentative, from: "2026-11-30T00:00:00Z", to: "2026-12-03T00:00:00Z")
        let pairs = Self.of(.conflictDetected, withTentative).compactMap { event -> String? in
            guard case .conflictDetected(let conflict) = event.payload else { return nil }
            return event.key.uid + "+" + conflict.with.uid
        }
        #expect(pairs == ["review+tentative"])
    }

    @Test func aConflictAnInvitationCreatesIsReportedWhenItArrives() throws {
        let before = Self.calendar([Self.item("review", "20261202T090000Z", "20261202T100000Z")])
        let after = Self.calendar([
            Self.item("review", "20261202T090000Z", "20261202T100000Z"),
            Self.item("urgent", "20261202T090000Z", "20261202T093000Z", summary: "Urgent sync"),
        ])
        let (events, _) = try Self.run(
            before, from: "2026-12-02T06:00:00Z", to: "2026-12-02T12:00:00Z",
            changes: [("2026-12-02T07:10:00Z", after)])
        let conflicts = Self.of(.conflictDetected, events)
        #expect(conflicts.map(\.time) == [utc("2026-12-02T07:10:00Z")])
    }

    @Test func aDayAsCrowdedAsASharedCalendarReportsNoConflicts() throws {
        // 101 half-hour bookings from 09:00, a minute apart: a room calendar's day, not a person's.
        let bookings = (0...DaySettings.crowdedDay).map { index in
            let start = utc("2026-12-02T09:00:00Z").adding(seconds: Int64(index) * 60)
            return Self.item(
                "booking-\(index)", NextCommandTests.stamp(Int(start.secondsSinceEpoch)),
                NextCommandTests.stamp(Int(start.secondsSinceEpoch) + 1800), partstat: nil)
        }
        let (events, _) = try Self.run(
            Self.calendar(bookings), from: "2026-12-01T00:00:00Z", to: "2026-12-03T00:00:00Z")
        #expect(Self.of(.conflictDetected, events).isEmpty)
        #expect(Self.of(.overrunDetected, events).isEmpty)
        guard case .agendaDue(let agenda)? = Self.of(.agendaDue, events).last?.payload else {
            Issue.record("no agenda")
            return
        }
        #expect(agenda.items.count == DaySettings.crowdedDay + 1)
        #expect(agenda.items.allSatisfy { $0.conflicts.isEmpty })
        // One booking fewer, and they are a day of conflicts again.
        let (fewer, _) = try Self.run(
            Self.calendar(Array(bookings.dropLast())), from: "2026-12-01T00:00:00Z", to: "2026-12-03T00:00:00Z")
        #expect(!Self.of(.conflictDetected, fewer).isEmpty)
    }

    /// The pairs of occurrences a day's conflict events name, as `uid+uid` with the two in order.
    static func pairs(_ conflicts: [PlannedEvent]) -> Set<String> {
        Set(
            conflicts.flatMap { event in
                event.others.map { [event.key.uid, $0.uid].sorted().joined(separator: "+") }
            })
    }

    /// Every pair of `uids`, as `pairs` names them.
    static func pairs(_ uids: [String]) -> Set<String> {
        Set(
            uids.indices.flatMap { i in
                uids.indices.filter { $0 > i }.map { [uids[i], uids[$0]].sorted().joined(separator: "+") }
            })
    }

    /// A day at the crowded bound (100 meetings that all overlap): one conflict per meeting that a later one
    /// overlaps and one overrun per meeting that starts while others run, each naming all of them, so 99 and 99
    /// events rather than 4,950 and 4,950; and every pair is still named once.
    @Test func aCrowdedDayReportsConflictsPerOccurrenceNotPerPair() throws {
        let uids = (0..<DaySettings.crowdedDay).map { "meeting-\($0)" }
        let meetings = uids.indices.map { index in
            let start = utc("2026-12-02T08:00:00Z").adding(seconds: Int64(index) * 60)
            return Self.item(
                uids[index], NextCommandTests.stamp(Int(start.secondsSinceEpoch)),
                NextCommandTests.stamp(Int(start.secondsSinceEpoch) + 3 * 3600))
        }
        let (events, _) = try Self.run(
            Self.calendar(meetings), from: "2026-12-01T00:00:00Z", to: "2026-12-03T00:00:00Z")
        let conflicts = Self.of(.conflictDetected, events)
        let overruns = Self.of(.overrunDetected, events)
        #expect(conflicts.count == DaySettings.crowdedDay - 1 && overruns.count == DaySettings.crowdedDay - 1)
        #expect(Self.pairs(conflicts) == Self.pairs(uids))
        // The first meeting's conflict names the 99 after it; the last start's overrun, the 99 still running.
        guard case .conflictDetected(let first)? = conflicts.first(where: { $0.key.uid == "meeting-0" })?.payload,
            case .overrunDetected(let last)? = overruns.last?.payload
        else {
            Issue.record("no conflict on the first meeting or no overrun")
            return
        }
        #expect(first.with.uid == "meeting-1" && first.alsoWith.count == DaySettings.crowdedDay - 2)
        #expect(last.next.uid == "meeting-99" && last.alsoRunning.count == DaySettings.crowdedDay - 2)
        #expect(overruns.last?.key.uid == "meeting-98")
    }

    @Test func aRuleKeepsASharedCalendarOutOfConflictsButNotOutOfReminders() throws {
        let settings = Self.settings + "rules:\n  - calendars: [rooms]\n    conflicts: false\n"
        let files = [
            "work": Self.calendar([Self.item("review", "20261202T090000Z", "20261202T100000Z")]),
            "rooms": Self.calendar([
                Self.item("booking", "20261202T091500Z", "20261202T094500Z", partstat: nil),
                Self.item("other-booking", "20261202T091500Z", "20261202T094500Z", partstat: nil),
            ]),
        ]
        let (events, _) = try Self.run(
            files: files, settings: settings, from: "2026-12-01T00:00:00Z", to: "2026-12-03T00:00:00Z")
        #expect(Self.of(.conflictDetected, events).isEmpty)
        #expect(Self.of(.overrunDetected, events).isEmpty)
        #expect(Set(Self.of(.reminderDue, events).map(\.key.uid)) == ["review", "booking", "other-booking"])
        // Without the rule, the bookings overlap the review and each other: one event on each occurrence that a
        // later one overlaps, naming them all (review: both bookings; the first booking: the other).
        let (without, _) = try Self.run(files: files, from: "2026-12-01T00:00:00Z", to: "2026-12-03T00:00:00Z")
        #expect(Self.pairs(Self.of(.conflictDetected, without)) == Self.pairs(["review", "booking", "other-booking"]))
        #expect(Self.of(.conflictDetected, without).count == 2)
    }

    // MARK: Overruns and the end of a meeting

    /// A review from 10:00 to 11:00 Berlin time, and a call with a Meet link from 10:30: it starts while the review
    /// still runs.
    static let reviewAndCall = calendar([
        item("review", "20261202T090000Z", "20261202T100000Z", summary: "Design review"),
        item(
            "call", "20261202T093000Z", "20261202T103000Z", summary: "Customer call",
            extra: ["LOCATION:https://meet.google.com/abc-defg-hij"]),
    ])

    @Test func aMeetingStillRunningWhenTheNextStartsNudgesWithTheNextJoinLink() throws {
        let text = Self.reviewAndCall
        let (events, _) = try Self.run(text, from: "2026-12-02T06:00:00Z", to: "2026-12-02T12:00:00Z")
        let overruns = Self.of(.overrunDetected, events)
        #expect(overruns.map(\.time) == [utc("2026-12-02T09:30:00Z")])
        guard case .overrunDetected(let overrun)? = overruns.first?.payload else { return }
        #expect(overruns.first?.key.uid == "review")
        #expect(overrun.next.joinUrl == "https://meet.google.com/abc-defg-hij")
        #expect(overrun.lateness == 0)
    }

    @Test func aHookOnAnOverrunGetsTheJoinLinkOfTheMeetingThatStarted() async throws {
        let text = Self.reviewAndCall
        let (events, _) = try Self.run(text, from: "2026-12-02T06:00:00Z", to: "2026-12-02T12:00:00Z")
        let overrun = try #require(Self.of(.overrunDetected, events).first)
        let entry = JournalStore.Entry(
            sequence: 1, event: overrun, occurrence: nil, facts: .event, recorded: Timestamp(overrun.time))
        let folder = SinkFixtures.folder()
        // A real child process: the arguments as calwatch passes them, written to a file.
        let script = folder + "/join.sh"
        try "#!/bin/sh\nprintf '%s|%s' \"$1\" \"$CALWATCH_OTHER_SUMMARY\" > \"$(dirname \"$0\")/joined\"\n".write(
            toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        var settings = HookSinkTests.unhurried([script, "{otherJoinURL}"])
        settings.events = [.overrunDetected]
        let sink = HookSinkTests.sink(settings, log: HookSinkTests.Log())
        let journal = try JournalStore(path: JournalTests.temporaryPath())
        try await HookSinkTests.running(sink, journal: journal, entries: [entry]) {
            await sink.deliver([entry])
        }
        let joined = try String(contentsOfFile: folder + "/joined", encoding: .utf8)
        #expect(joined == "https://meet.google.com/abc-defg-hij|Customer call")
    }

    @Test func aPhoneHearsOfAnOverrunWithAJoinButtonForTheMeetingThatStarted() throws {
        let text = Self.reviewAndCall
        let (events, _) = try Self.emitted(
            files: ["work": text], from: "2026-12-01T06:00:00Z", to: "2026-12-02T12:00:00Z")
        func message(_ type: EventType) throws -> [String: Any] {
            let emitted = try #require(events.last { $0.event.type == type })
            let entry = JournalStore.Entry(
                sequence: 1, event: emitted.event, occurrence: emitted.occurrence, facts: emitted.facts,
                recorded: Timestamp(emitted.event.time))
            let request = try #require(
                WebhookSink.push(
                    entry, preset: .ntfy, to: URL(string: "https://ntfy.example.org/ada")!, token: nil, headers: [:]))
            return try #require(try JSONSerialization.jsonObject(with: request.body ?? Data()) as? [String: Any])
        }
        let overrun = try message(.overrunDetected)
        #expect(overrun["title"] as? String == "Customer call has started")
        #expect(overrun["priority"] as? Int == 4)
        #expect(
            overrun["actions"] as? [[String: String]] == [
                ["action": "view", "label": "Join", "url": "https://meet.google.com/abc-defg-hij"]
            ])
        let conflict = try message(.conflictDetected)
        #expect(conflict["title"] as? String == "Conflict: Design review and Customer call", "\(conflict)")
        #expect(conflict["message"] as? String == "10:00–11:00 overlaps 10:30–11:30 by 30 min")
        let agenda = try message(.agendaDue)
        #expect(agenda["title"] as? String == "Your day, 2026-12-02: 2 items")
        #expect(agenda["message"] as? String == "10:00 Design review (conflict)\n10:30 Customer call (conflict)")
    }

    @Test func theLastMinutesOfAMeetingAreEndingSoon() throws {
        let text = Self.calendar([Self.item("review", "20261202T090000Z", "20261202T100000Z")])
        let (events, _) = try Self.run(text, from: "2026-12-02T06:00:00Z", to: "2026-12-02T12:00:00Z")
        let phases = Self.of(.liveActivityUpdate, events).map { ($0.time, $0.liveActivity!.phase) }
        #expect(phases.first { $0.1 == .endingSoon }?.0 == utc("2026-12-02T09:55:00Z"))
        #expect(phases.filter { $0.0 < utc("2026-12-02T09:55:00Z") }.allSatisfy { $0.1 != .endingSoon })
        #expect(phases.filter { $0.0 >= utc("2026-12-02T09:55:00Z") }.allSatisfy { $0.1 == .endingSoon })
    }

    // MARK: Invitations

    @Test func anUnansweredInvitationIsPendingADayAndTwoHoursAheadUntilAnswered() throws {
        let pending = Self.calendar([
            Self.item("budget", "20261203T140000Z", "20261203T150000Z", partstat: "NEEDS-ACTION"),
            Self.item("offsite", "20261204T140000Z", "20261204T150000Z", partstat: "NEEDS-ACTION"),
        ])
        let answered = Self.calendar([
            Self.item("budget", "20261203T140000Z", "20261203T150000Z", partstat: "NEEDS-ACTION"),
            Self.item("offsite", "20261204T140000Z", "20261204T150000Z", partstat: "ACCEPTED"),
        ])
        let (events, _) = try Self.run(
            pending, from: "2026-12-01T00:00:00Z", to: "2026-12-05T00:00:00Z",
            changes: [("2026-12-04T10:00:00Z", answered)])
        let invitations = Self.of(.invitationPending, events).map { "\($0.key.uid) \($0.time)" }
        #expect(
            invitations == [
                "budget 2026-12-02T14:00:00Z", "budget 2026-12-03T12:00:00Z", "offsite 2026-12-03T14:00:00Z",
            ])
    }

    @Test func ofInvitationsMissedWhileStoppedOnlyTheLatestComesMarkedLate() throws {
        let text = Self.calendar([
            Self.item("budget", "20261203T140000Z", "20261203T150000Z", partstat: "NEEDS-ACTION")
        ])
        let (events, _) = try Self.run(text, from: "2026-12-03T12:30:00Z", to: "2026-12-03T16:00:00Z")
        let invitations = Self.of(.invitationPending, events)
        #expect(invitations.count == 1)
        guard case .invitationPending(let detail)? = invitations.first?.payload else { return }
        #expect(detail.secondsBefore == 7200)
        #expect(detail.lateness == 1800)
        #expect(detail.organizer == "boss@example.org")
    }

    // MARK: Agenda

    @Test func theAgendaComesAtEightInTheUsersZoneWithTheDayInOrderAndItsConflicts() throws {
        let text = Self.calendar([
            Self.item("review", "20261202T090000Z", "20261202T100000Z"),
            Self.item("call", "20261202T093000Z", "20261202T103000Z"),
            Self.item("late", "20261202T233000Z", "20261203T003000Z", summary: "After midnight in Berlin"),
            Self.item("declined", "20261202T120000Z", "20261202T130000Z", partstat: "DECLINED"),
            """
            BEGIN:VEVENT\r
            UID:holiday\r
            DTSTAMP:20261101T000000Z\r
            DTSTART;VALUE=DATE:20261202\r
            DTEND;VALUE=DATE:20261203\r
            SUMMARY:Holiday\r
            END:VEVENT
            """,
        ])
        let (events, _) = try Self.run(text, from: "2026-12-02T00:00:00Z", to: "2026-12-03T00:00:00Z")
        let agendas = Self.of(.agendaDue, events)
        // 08:00 in Berlin is 07:00 UTC.
        #expect(agendas.map(\.time) == [utc("2026-12-02T07:00:00Z")])
        guard case .agendaDue(let agenda)? = agendas.first?.payload else { return }
        #expect(agenda.date == "2026-12-02")
        #expect(agenda.zone == "Europe/Berlin")
        #expect(agenda.items.map(\.occurrence.uid) == ["holiday", "review", "call"])
        #expect(agenda.items.map(\.conflicts) == [[], ["call"], ["review"]])
        #expect(agendas.first?.subject == "agenda/2026-12-02")

        // Stopped after it and started again later that morning, from the state the journal keeps: not sent again.
        let (morning, state) = try Self.run(text, from: "2026-12-02T00:00:00Z", to: "2026-12-02T07:30:00Z")
        #expect(Self.of(.agendaDue, morning).count == 1)
        let (again, _) = try Self.run(
            text, from: "2026-12-02T07:30:00Z", to: "2026-12-02T12:00:00Z", state: state)
        #expect(Self.of(.agendaDue, again).isEmpty)
        // Started in the afternoon without it, the morning's agenda is no longer sent.
        let (afternoon, _) = try Self.run(text, from: "2026-12-02T13:00:00Z", to: "2026-12-03T00:00:00Z")
        #expect(Self.of(.agendaDue, afternoon).isEmpty)
    }

    @Test func aRuleWithItsOwnAgendaTimeTakesItsItemsOutOfTheMainOne() throws {
        let settings =
            Self.settings + """
                rules:
                  - summary: "(?i)school"
                    agendaAt: "06:30"

                """
        let text = Self.calendar([
            Self.item("review", "20261202T090000Z", "20261202T100000Z"),
            Self.item("school", "20261202T140000Z", "20261202T150000Z", summary: "School pick-up", partstat: nil),
        ])
        let (events, _) = try Self.run(
            text, settings: settings, from: "2026-12-02T00:00:00Z", to: "2026-12-03T00:00:00Z")
        let agendas = Self.of(.agendaDue, events).compactMap { event -> String? in
            guard case .agendaDue(let agenda) = event.payload else { return nil }
            return "\(event.time) \(event.key.uid) " + agenda.items.map(\.occurrence.uid).joined(separator: ",")
        }
        #expect(
            agendas == [
                "2026-12-02T05:30:00Z agenda-rule1 school", "2026-12-02T07:00:00Z agenda review",
            ])
    }

    @Test func withoutDayNothingOfTheDayIsPlanned() throws {
        let text = Self.calendar([
            Self.item("review", "20261202T090000Z", "20261202T100000Z"),
            Self.item("call", "20261202T093000Z", "20261202T103000Z"),
            Self.item("budget", "20261202T140000Z", "20261202T150000Z", partstat: "NEEDS-ACTION"),
        ])
        let (events, _) = try Self.run(
            text, settings: "timezone: Europe/Berlin\nme: [me@example.org]\n", from: "2026-12-01T00:00:00Z",
            to: "2026-12-03T00:00:00Z")
        let types = Set(events.map(\.type))
        #expect(types.isDisjoint(with: [.conflictDetected, .overrunDetected, .invitationPending, .agendaDue]))
        #expect(events.compactMap(\.liveActivity).allSatisfy { $0.phase != .endingSoon })
    }

    // MARK: One meeting in several calendars

    /// The weekly review as three calendars hold it: the user's work calendar (an attendee, accepted), a shared
    /// team calendar (its own UID, the same join link) and a delegate's (the same UID, not an attendee).
    static let threeCopies: [String: String] = {
        let link = "LOCATION:https://meet.google.com/abc-defg-hij"
        return [
            "work": calendar([item("review", "20261202T090000Z", "20261202T100000Z", summary: "Review", extra: [link])]
            ),
            "team": calendar([
                item(
                    "team-review", "20261202T090000Z", "20261202T100000Z", summary: "Review", partstat: nil,
                    extra: [link])
            ]),
            "delegate": calendar([
                item("review", "20261202T090000Z", "20261202T100000Z", summary: "Review", partstat: nil, extra: [link])
            ]),
        ]
    }()

    @Test func oneMeetingInThreeCalendarsRemindsOnceFromTheCopyWhereTheUserIsAnAttendee() throws {
        let (events, _) = try Self.run(
            files: Self.threeCopies, from: "2026-12-01T00:00:00Z", to: "2026-12-03T00:00:00Z")
        let reminders = Self.of(.reminderDue, events)
        #expect(reminders.map(\.time) == ["08:30", "08:45", "08:55"].map { utc("2026-12-02T\($0):00Z") })
        #expect(reminders.allSatisfy { $0.key.uid == "review" && $0.key.calendar == "work" })
        #expect(Self.of(.liveActivityStart, events).count == 1)
        // Not a conflict with itself, and once in the agenda.
        #expect(Self.of(.conflictDetected, events).isEmpty)
        #expect(Self.of(.overrunDetected, events).isEmpty)
        guard case .agendaDue(let agenda)? = Self.of(.agendaDue, events).last?.payload else {
            Issue.record("no agenda")
            return
        }
        #expect(agenda.items.map(\.occurrence.calendar) == ["work"])
    }

    @Test func whenTheWinningCopyGoesTheNextRemindsInItsPlaceWithoutRepeats() throws {
        var later = Self.threeCopies
        later["work"] = nil
        later["delegate"] = nil
        let (events, _) = try Self.run(
            files: Self.threeCopies, from: "2026-12-02T08:00:00Z", to: "2026-12-02T12:00:00Z",
            changes: [("2026-12-02T08:40:00Z", later)])
        let reminders = Self.of(.reminderDue, events).map { "\($0.key.calendar) \($0.key.uid) \($0.time)" }
        #expect(
            reminders == [
                "work review 2026-12-02T08:30:00Z", "team team-review 2026-12-02T08:45:00Z",
                "team team-review 2026-12-02T08:55:00Z",
            ])
    }

    /// A replay adds its calendars at once and leaves out what it could only admit after its end (`addAll`), but
    /// not a copy that one it admits loses to: the review in two weeks in the user's calendar, and the team's copy of
    /// it with a calendar alarm that rings within the replay. Its events are those of a loop given everything.
    @Test func aReplayKeepsTheCopyBeyondItsEndThatWinsOverOneWithinIt() throws {
        let link = "LOCATION:https://meet.google.com/abc-defg-hij"
        let alarm = ["BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Review", "TRIGGER:-P13D", "END:VALARM"]
        let folder = SinkFixtures.folder()
        func occurrences(_ items: [String]) throws -> [Occurrence] {
            let path = folder + "/\(UUID().uuidString).ics"
            try Self.calendar(items).write(toFile: path, atomically: true, encoding: .utf8)
            return scan([path], from: "2026-11-20", to: "2026-12-20").occurrences
        }
        let team = try occurrences([
            Self.item(
                "team-review", "20261215T090000Z", "20261215T100000Z", summary: "Review", partstat: nil,
                extra: [link] + alarm)
        ])
        let mine = try occurrences([
            Self.item("review", "20261215T090000Z", "20261215T100000Z", summary: "Review", extra: [link]),
            Self.item("later", "20261216T090000Z", "20261216T100000Z", summary: "Planning"),
        ])
        let (start, end) = (utc("2026-12-01T00:00:00Z"), utc("2026-12-03T00:00:00Z"))
        let settings = try ConfigurationTests.parse("timezone: Europe/Berlin\nme: [me@example.org]\n")
        func replay(_ occurrences: [Occurrence], all: Bool) -> (events: [PlannedEvent], waiting: Int) {
            let classifier = Classifier(settings)
            var loop = PlanningLoop(
                configuration: settings.planner, facts: classifier.facts(for:), state: PlannerState())
            if all {
                loop.addAll(occurrences, now: start, planningStopsAt: end)
            } else {
                loop.add(occurrences, now: start)
            }
            let waiting = loop.waitingCount
            var (now, events) = (start, [PlannedEvent]())
            while now < end {
                events += loop.step(at: now).events.map(\.event)
                guard let next = loop.nextInstant else { break }
                now = next
            }
            return (events, waiting)
        }
        // Alone, the team's copy rings within the replay.
        #expect(replay(team, all: true).events.map { "\($0.type) \($0.time)" } == ["reminderDue 2026-12-02T09:00:00Z"])
        // With the user's own copy, which wins, nothing is due before the end, given all or what matters.
        let given = replay(team + mine, all: false)
        let replayed = replay(team + mine, all: true)
        #expect(given.events.isEmpty && replayed.events.isEmpty)
        // The meeting after it, in no group, was left out.
        #expect(given.waiting == 3 && replayed.waiting == 2)
    }

    // MARK: Where the user is

    /// Out to Tokyo on the 3rd, back on the 8th; a floating breakfast there, an all-day item there, a Berlin
    /// meeting after coming back and a floating appointment at home.
    static let trip = calendar([
        item(
            "out", "20261203T115500Z", "20261204T030000Z", summary: "Flight LH 716 Frankfurt (FRA) to Tokyo (HND)",
            partstat: nil),
        item(
            "back", "20261208T010000Z", "20261208T150000Z", summary: "Flight LH 717 Tokyo (HND) to Frankfurt (FRA)",
            partstat: nil),
        item("breakfast", "20261205T090000", "20261205T100000", summary: "Breakfast with Kenji", partstat: nil),
        """
        BEGIN:VEVENT\r
        UID:office\r
        DTSTAMP:20261101T000000Z\r
        DTSTART;VALUE=DATE:20261207\r
        DTEND;VALUE=DATE:20261208\r
        SUMMARY:Tokyo office day\r
        END:VEVENT
        """,
        item("dentist", "20261210T090000", "20261210T100000", summary: "Dentist", partstat: nil),
    ])

    @Test func onATripFloatingTimesAndTheAgendaFollowTheZoneTheFlightsTakeTheUserTo() throws {
        let settings = "timezone: Europe/Berlin\nday:\n  agendaAt: \"08:00\"\n  travelZone: true\n"
        let (events, _) = try Self.run(
            Self.trip, settings: settings, from: "2026-12-02T00:00:00Z", to: "2026-12-11T00:00:00Z")
        let starts = Dictionary(
            Self.of(.liveActivityStart, events).map { ($0.key.uid, $0.occurrenceStart) },
            uniquingKeysWith: { a, _ in a })
        // 09:00 in Tokyo, not in Berlin; the dentist at home, at 09:00 in Berlin.
        #expect(starts["breakfast"] == utc("2026-12-05T00:00:00Z"))
        #expect(starts["dentist"] == utc("2026-12-10T08:00:00Z"))
        let agendas = Self.of(.agendaDue, events).compactMap { event -> String? in
            guard case .agendaDue(let agenda) = event.payload else { return nil }
            return "\(event.time) \(agenda.date) \(agenda.zone) "
                + agenda.items.map(\.occurrence.uid).joined(separator: ",")
        }
        #expect(agendas.contains("2026-12-04T23:00:00Z 2026-12-05 Asia/Tokyo breakfast"))
        // The all-day item covers Tokyo's day.
        #expect(agendas.contains("2026-12-06T23:00:00Z 2026-12-07 Asia/Tokyo office"))
        #expect(agendas.contains("2026-12-10T07:00:00Z 2026-12-10 Europe/Berlin dentist"))
        // Without travelZone, the breakfast is at 09:00 in Berlin.
        let (home, _) = try Self.run(
            Self.trip, settings: "timezone: Europe/Berlin\nday:\n  agendaAt: \"08:00\"\n", from: "2026-12-02T00:00:00Z",
            to: "2026-12-11T00:00:00Z")
        #expect(
            Self.of(.liveActivityStart, home).first { $0.key.uid == "breakfast" }?.occurrenceStart
                == utc("2026-12-05T08:00:00Z"))
    }

    @Test func aRuleKeepsItsItemsOnHomeTime() throws {
        let settings = """
            timezone: Europe/Berlin
            day:
              travelZone: true
            rules:
              - summary: "Breakfast"
                travelZone: false

            """
        let (events, _) = try Self.run(
            Self.trip, settings: settings, from: "2026-12-02T00:00:00Z", to: "2026-12-11T00:00:00Z")
        let breakfast = try #require(Self.of(.liveActivityStart, events).first { $0.key.uid == "breakfast" })
        #expect(breakfast.occurrenceStart == utc("2026-12-05T08:00:00Z"))
    }

    // MARK: Journal and sinks

    @Test func theDaysEventsReadBackFromTheJournalRenderAsTheyWereDelivered() async throws {
        let text = Self.calendar([
            Self.item("review", "20261202T090000Z", "20261202T100000Z"),
            Self.item("call", "20261202T093000Z", "20261202T103000Z"),
            Self.item("budget", "20261202T140000Z", "20261202T150000Z", partstat: "NEEDS-ACTION"),
        ])
        let (events, _) = try Self.run(text, from: "2026-12-01T00:00:00Z", to: "2026-12-03T00:00:00Z")
        let journal = try JournalStore(path: JournalTests.temporaryPath())
        let day = events.filter {
            [.conflictDetected, .overrunDetected, .invitationPending, .agendaDue].contains($0.type)
                || $0.liveActivity?.phase == .endingSoon
        }
        #expect(Set(day.map(\.type)).count == 5)
        _ = try await journal.append(day, recorded: Timestamp(millisecondsSinceEpoch: 0))
        let read = try await journal.events(after: 0, limit: 100).map(\.event)
        #expect(read.map(\.payload) == day.map(\.payload))
        #expect(read.map(\.id) == day.map(\.id))
    }
}

/// `day:` as users write it, and its mistakes reported with key and line.
@Suite struct DayConfigurationTests {
    @Test func everyKeyOfDayIsRead() throws {
        let configuration = try ConfigurationTests.parse(
            """
            day:
              agendaAt: "07:30"
              endingSoon: 10m
              conflicts: { minOverlap: 15m, include: [accepted, tentative], ahead: 2d }
              overruns: false
              pendingInvitations: [2d, 1h]
              travelZone: true
            rules:
              - calendars: [Family]
                agendaAt: "06:45"
                travelZone: false
            """)
        let day = try #require(configuration.planner.day)
        #expect(day.agendaAt == 7 * 60 + 30)
        #expect(day.endingSoon == 600)
        #expect(day.conflicts?.minOverlap == 900 && day.conflicts?.ahead == 2 * 86_400)
        #expect(day.conflicts?.include == [.accepted, .tentative])
        #expect(!day.overruns && day.travelZone)
        #expect(day.pendingInvitations == [2 * 86_400, 3600])
        #expect(configuration.planner.rules.first?.agendaAt == 6 * 60 + 45)
        #expect(configuration.planner.rules.first?.travelZone == false)
        // The invitations' earliest offset is how far ahead occurrences are read.
        #expect(configuration.planner.lookAhead >= 2 * 86_400)
        // Without `day:`, none of it; `day: {}` and `conflicts: false`.
        #expect(try ConfigurationTests.parse("timezone: UTC").planner.day == nil)
        #expect(try ConfigurationTests.parse("day: {}").planner.day?.conflicts != nil)
        #expect(try ConfigurationTests.parse("day: { conflicts: false }").planner.day?.conflicts == nil)
    }

    @Test func checkSaysWhatDayWillDoAndWhatItCannotWithoutMe() async throws {
        let folder = SinkFixtures.folder()
        try "day: { agendaAt: \"07:30\", pendingInvitations: [2h] }\nsinks: [{ type: jsonl, path: out.jsonl }]\n"
            .write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let run = try await CommandLineTests().calwatch([
            "check", "--config", folder + "/config.yml", PlantedWeekTests.repository + "/samples/day/calendars",
        ])
        #expect(run.status == 0, "\(run.errors)")
        #expect(
            run.output.contains(
                "day: conflicts of your own and accepted ones over 5m, 1d ahead; overruns; ending soon 5m before the "
                    + "end; unanswered invitations 2h before; the agenda at 07:30"), "\(run.output)")
        #expect(run.output.contains("note: `me` is not set, so no invitation is known to be yours"))
    }

    @Test func mistakesInDayAreNamedWithKeyAndLine() {
        let problems = ConfigurationTests.problems(
            """
            day:
              agendaAt: "25:00"
              conflicts: { include: [maybe] }
              pendingInvitations: [soon]
              travelzone: true
            """)
        let found = problems.map { "\($0.line ?? 0) \($0.key ?? "")" }
        #expect(found.contains("2 day.agendaAt"), "\(problems)")
        #expect(found.contains("3 day.conflicts.include[0]"), "\(problems)")
        #expect(found.contains("4 day.pendingInvitations[0]"), "\(problems)")
        #expect(problems.contains { $0.line == 5 && $0.description.contains("travelZone") }, "\(problems)")
    }
}
