import CalWatchCore
import Testing

/// What an answer makes, decided by the pure planner at a given instant: no daemon, no journal, no clock.
@Suite struct AnswerPolicyTests {
    static let standup = PlannerTests.meeting("standup", "2027-03-01T10:00:00Z", "2027-03-01T10:30:00Z")

    static func answer(
        _ answer: Planner.Answer, _ occurrence: Occurrence = standup, facts: OccurrenceFacts = .event,
        target: String = "standup/2027-03-01T10:00:00Z", answered: (id: EventID, type: EventType?)? = nil,
        state: PlannerState = PlannerState(), at now: String
    ) -> Result<PlannedEvent, Planner.AnswerRefused> {
        Planner.answer(
            answer, target: target, answered: answered, occurrence: occurrence, facts: facts,
            state: state, now: utc(now))
    }

    @Test func aSnoozeComesBackAfterItsDurationAndCountsItself() throws {
        var state = PlannerState()
        let first = try Self.answer(.snooze(seconds: 300), state: state, at: "2027-03-01T09:45:00Z").get()
        #expect(first.type == .reminderSnoozed)
        #expect(first.answer?.until == utc("2027-03-01T09:50:00Z") && first.answer?.count == 1)
        state.apply(first)
        // The snoozed reminder snoozed again, by its own id (CE_ID), as a notification's button does.
        let snoozed = EventID(high: 7, low: 9)
        let second = try Self.answer(
            .snooze(seconds: 300), target: snoozed.description, answered: (snoozed, .reminderDue), state: state,
            at: "2027-03-01T09:50:00Z"
        ).get()
        #expect(second.answer?.count == 2 && second.answer?.answered == snoozed && second.id != first.id)
    }

    @Test func aSnoozePastTheEndOrAFlightsTimeToLeaveIsRefusedWithWhy() {
        guard case .failure(let late) = Self.answer(.snooze(seconds: 900), at: "2027-03-01T10:20:00Z") else {
            Issue.record("a snooze past the end was taken")
            return
        }
        #expect(late.description == "not snoozed: 2027-03-01T10:35:00Z is after its end (2027-03-01T10:30:00Z)")
        let flight = Self.answer(
            .snooze(seconds: 900), PlannerTests.flight, facts: PlannerTests.flightFacts(), at: "2027-03-03T02:15:00Z")
        guard case .failure(let leave) = flight else {
            Issue.record("a snooze past the time to leave was taken")
            return
        }
        #expect(leave.description.hasPrefix("not snoozed: 2027-03-03T02:30:00Z is after its time to leave"))
    }

    @Test func anOccurrenceOverAndALiveActivitysIdGetNothing() {
        guard case .failure(let over) = Self.answer(.dismiss, at: "2027-03-01T10:30:00Z") else {
            Issue.record("a dismiss of an occurrence that is over was taken")
            return
        }
        #expect(over.description == "not applied: standup is over")
        let activity = (id: EventID(high: 1, low: 2), type: EventType?.some(.liveActivityUpdate))
        guard
            case .failure(let snoozed) = Self.answer(
                .snooze(seconds: 60), answered: activity, at: "2027-03-01T09:50:00Z")
        else {
            Issue.record("a live activity's id was snoozed")
            return
        }
        #expect(snoozed.description.contains("is a liveActivityUpdate event"))
        // Dismissing by the live activity's id is an answer about its occurrence, and is taken.
        #expect(
            (try? Self.answer(.dismiss, answered: activity, at: "2027-03-01T09:50:00Z").get())?.type
                == .reminderDismissed)
    }

    @Test func theSameAnswerGivenTwiceIsOneEvent() throws {
        let once = try Self.answer(.ack, at: "2027-03-01T09:45:00Z").get()
        let again = try Self.answer(.ack, at: "2027-03-01T09:46:00Z").get()
        #expect(once.id == again.id && once.type == .reminderAcknowledged)
    }
}
