extension Planner {
    /// An answer to an occurrence's reminders, as `calwatch snooze`, `dismiss` and `ack` give it.
    public enum Answer: Sendable, Hashable {
        /// The reminder again after this many seconds.
        case snooze(seconds: Int64)
        /// No more reminders, and the live activity ends.
        case dismiss
        /// No more reminders; the live activity goes on.
        case ack
    }

    /// Why an answer made no event, as the answering command prints it.
    public struct AnswerRefused: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The event an answer makes about `occurrence` at `now`, or why it makes none: the occurrence is over, a
    /// snooze would come after the reminder is of use (the end; for a flight, the time to leave while that is
    /// ahead, then the departure), or the event named by id is a live activity's, which has nothing to snooze.
    ///
    /// `target` is what the user named (an event id or a subject), which makes the answer's id, so the same answer
    /// given twice is one event; `answered` is the event it named by id, with its type when the journal still has it.
    public static func answer(
        _ answer: Answer, target: String, answered: (id: EventID, type: EventType?)?, occurrence: Occurrence,
        facts: OccurrenceFacts, state: PlannerState, now: Instant
    ) -> Result<PlannedEvent, AnswerRefused> {
        if case .snooze = answer, let type = answered?.type,
            [.liveActivityStart, .liveActivityUpdate, .liveActivityEnd].contains(type)
        {
            return .failure(
                AnswerRefused(
                    description:
                        "not snoozed: \(target) is a \(type.rawValue) event; snooze a reminderDue (its CE_ID), "
                        + "or dismiss or ack the occurrence"))
        }
        guard now < occurrence.end else {
            return .failure(AnswerRefused(description: "not applied: \(occurrence.uid) is over"))
        }
        let key = OccurrenceKey(occurrence)
        let payload: PlannedEvent.Payload
        switch answer {
        case .snooze(let seconds):
            let count = (state.answers[key]?.snoozes.count ?? 0) + 1
            let until = now.adding(seconds: seconds)
            let (limit, what): (Instant, String) =
                if facts.kind != .flight {
                    (occurrence.end, "end")
                } else if let leaveBy = facts.leaveBy, leaveBy > now {
                    (leaveBy, "time to leave for the airport")
                } else {
                    (occurrence.start, "departure")
                }
            guard until < limit else {
                return .failure(AnswerRefused(description: "not snoozed: \(until) is after its \(what) (\(limit))"))
            }
            payload = .reminderSnoozed(AnswerDetail(answered: answered?.id, until: until, count: count))
        case .dismiss:
            payload = .reminderDismissed(AnswerDetail(answered: answered?.id, until: nil, count: 0))
        case .ack:
            payload = .reminderAcknowledged(AnswerDetail(answered: answered?.id, until: nil, count: 0))
        }
        return .success(
            PlannedEvent(
                payload, id: EventID.make(EventID.seed(key), payload.type, "answer:" + target), key: key,
                occurrenceStart: occurrence.start, occurrenceEnd: occurrence.end, time: now, expiry: occurrence.end,
                fingerprint: 0))
    }
}
