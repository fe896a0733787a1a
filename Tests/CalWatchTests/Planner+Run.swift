import CalWatchCore

extension Planner {
    /// Runs the planner alone on a virtual clock from `from` to `to` (exclusive), applying every event to `state`:
    /// the tests' driver (`Replay` is the same loop with a window of occurrences, the journal and sinks).
    ///
    /// At each instant it plans until nothing more is due (a start may make an update due at the same instant),
    /// then jumps to the next wake: no sleeping, as fast as the machine allows. `occurrencesAt` supplies the
    /// occurrences in force at an instant, so a test can change the calendar part-way.
    static func run(
        from: Instant, to: Instant, state: inout PlannerState, configuration: PlannerConfiguration,
        facts: (Occurrence) -> OccurrenceFacts = { _ in .event }, occurrencesAt: (Instant) -> [Occurrence],
        emit: (PlannedEvent) -> Void
    ) {
        var now = from
        while now < to {
            let plan = plan(occurrencesAt(now), facts: facts, state: state, configuration: configuration, now: now)
            if plan.due.isEmpty {
                guard let next = plan.nextWake else { return }
                now = next
                continue
            }
            for event in plan.due {
                state.apply(event)
                emit(event)
            }
        }
    }
}
