/// The whole pipeline on a virtual clock: planner → journal → sinks, from one instant to another, as fast as the
/// machine allows (`calwatch replay`).
///
/// The planner sees a sliding window of occurrences: each is admitted at its earliest possible event and kept
/// while its live activity runs, so a year of occurrences costs linear time. Events are applied to the planner's
/// state at once and committed to the journal in batches; sinks only ever see committed events, so a run killed
/// at any point and started again over the same journal emits the rest: nothing lost, nothing journaled twice.
public final class Replay {
    /// What a replay did.
    public struct Summary: Sendable {
        public var counts: [EventType: Int] = [:]
        public var total = 0
        /// Events a sink received again from the journal because an earlier run stopped before they were delivered.
        public var caughtUp = 0
        public var sinks: [String] = []
    }

    private let occurrences: [(earliest: Instant, retire: Instant, occurrence: Occurrence)]
    private let configuration: PlannerConfiguration
    private let journal: JournalStore
    private let sinks: [any EventSink]
    private let recordedTime: () -> Instant
    /// Events per journal transaction.
    private let batchSize: Int

    /// Creates a replay of `occurrences` (any order) into `journal` and `sinks`; `recordedTime` is the real clock.
    public init(
        occurrences: [Occurrence], configuration: PlannerConfiguration, journal: JournalStore,
        sinks: [any EventSink], recordedTime: @escaping () -> Instant, batchSize: Int = 512
    ) {
        self.occurrences = occurrences.map { occurrence in
            let triggers = AlarmExpander.triggers(of: occurrence).map(\.trigger)
            let earliest = min(
                occurrence.start.adding(seconds: -configuration.lookAhead), triggers.min() ?? occurrence.start)
            let retire = max(occurrence.end, (triggers.max() ?? occurrence.end).adding(seconds: 900))
            return (earliest, retire, occurrence)
        }.sorted { $0.earliest < $1.earliest }
        self.configuration = configuration
        self.journal = journal
        self.sinks = sinks
        self.recordedTime = recordedTime
        self.batchSize = batchSize
    }

    /// Replays `[from, to)`.
    public func run(from: Instant, to: Instant) throws -> Summary {
        var summary = Summary(sinks: sinks.map(\.name))
        summary.caughtUp = try catchUpSinks()
        var state = try journal.plannerState()
        var window: [OccurrenceKey: (retire: Instant, occurrence: Occurrence)] = [:]
        // Live activities the journal says are running are in the window from the start: otherwise a run started
        // again from an earlier instant would see them without their occurrence and end them as removed.
        for entry in occurrences where state.active[OccurrenceKey(entry.occurrence)] != nil {
            window[OccurrenceKey(entry.occurrence)] = (entry.retire, entry.occurrence)
        }
        var nextIndex = 0
        // Each event with its occurrence as planned: the JSON must not depend on when the batch is committed.
        var pending: [(event: PlannedEvent, occurrence: Occurrence?)] = []
        var now = from
        while now < to {
            while nextIndex < occurrences.count && occurrences[nextIndex].earliest <= now {
                let entry = occurrences[nextIndex]
                window[OccurrenceKey(entry.occurrence)] = (entry.retire, entry.occurrence)
                nextIndex += 1
            }
            for (key, entry) in window where entry.retire < now && state.active[key] == nil {
                window[key] = nil
            }
            let plan = Planner.plan(
                window.values.map(\.occurrence), state: state, configuration: configuration, now: now)
            if plan.due.isEmpty {
                let admission = nextIndex < occurrences.count ? occurrences[nextIndex].earliest : nil
                guard let next = [plan.nextWake, admission].compactMap({ $0 }).min() else { break }
                now = next
                continue
            }
            for event in plan.due {
                state.apply(event)
                pending.append((event, window[event.key]?.occurrence))
                summary.counts[event.type, default: 0] += 1
                summary.total += 1
            }
            if pending.count >= batchSize {
                try commit(pending)
                pending.removeAll(keepingCapacity: true)
            }
        }
        try commit(pending)
        return summary
    }

    /// Journals events, then hands what was committed to every sink and moves its cursor.
    private func commit(_ pending: [(event: PlannedEvent, occurrence: Occurrence?)]) throws {
        guard !pending.isEmpty else { return }
        let recorded = recordedTime()
        var occurrenceOf: [String: Occurrence] = [:]
        for item in pending { occurrenceOf[item.event.id] = item.occurrence }
        var writer = JSONLineWriter(capacity: 4096)
        let entries = try journal.append(pending.map(\.event), recorded: recorded) { event, sequence in
            writer.reset()
            CloudEventJSON.write(
                event, occurrence: occurrenceOf[event.id], sequence: sequence, recordedTime: recorded, to: &writer)
            return String(decoding: writer.bytes.dropLast(), as: UTF8.self)
        }
        guard let last = entries.last?.sequence else { return }
        for sink in sinks {
            try sink.deliver(entries)
            try journal.setCursor(last, for: sink.name)
        }
    }

    /// Delivers what the journal holds beyond each sink's cursor (a run stopped between commit and delivery).
    private func catchUpSinks() throws -> Int {
        var delivered = 0
        for sink in sinks {
            var cursor = try journal.cursor(for: sink.name)
            while true {
                let rows = try journal.entries(after: cursor, limit: 1000)
                guard let last = rows.last else { break }
                try sink.deliver(
                    rows.map { row in
                        JournalStore.Entry(sequence: row.sequence, event: nil, json: row.json)
                    })
                try journal.setCursor(last.sequence, for: sink.name)
                cursor = last.sequence
                delivered += rows.count
            }
        }
        return delivered
    }
}
