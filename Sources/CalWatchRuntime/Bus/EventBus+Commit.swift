import CalWatchCore

extension EventBus {
    /// Journals planned events, then hands what was committed to the sinks: sinks only ever see committed events,
    /// and an event the journal already holds (a run started again) is not handed on twice.
    func publish(_ pending: [PlanningLoop.Emitted], committingTo journal: JournalStore, recorded: Timestamp)
        async throws
    {
        guard !pending.isEmpty else { return }
        let committed = try await journal.append(pending.map(\.event), recorded: recorded)
        CalwatchMetrics.committed(committed)
        var index = 0
        let rendering = JournalStore.Entry.Rendering(count: committed.count)
        let entries = committed.enumerated().map { slot, committed in
            // Committed events come in the order given, some perhaps skipped as already journaled.
            while pending[index].event.id != committed.event.id { index += 1 }
            return JournalStore.Entry(
                sequence: committed.sequence, event: committed.event, occurrence: pending[index].occurrence,
                facts: pending[index].facts, recorded: recorded, rendering: rendering, slot: slot)
        }
        await publish(entries)
    }

    /// Runs the sinks' consumers while `body` publishes, then lets them finish what was committed: the bus's tasks
    /// never outlive this call, whether `body` returns or throws.
    public func running(_ body: () async throws -> Void) async throws -> [SinkReport] {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.run() }
            do {
                try await body()
            } catch {
                _ = await finish()
                throw error
            }
            return await finish()
        }
    }
}
