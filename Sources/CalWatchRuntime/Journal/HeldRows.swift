import CalWatchCore

/// The rows a throwaway journal (a replay's own) has numbered but not written: written only when something may read
/// them back, let go once every sink of the run has handled them.
///
/// A replay's journal is removed when the run ends and is never read by another process, so a row matters only
/// while a sink of this run may still ask for it: a sink catching up or retrying, a hook's retry. With one sink
/// keeping up, almost every row is handled before any of that happens, and writing it was 28–33% of a replay's
/// time. `JournalStore` writes all held rows before anything reads or changes its tables otherwise, so what it
/// finds is what it would have found had every row been written at once.
struct HeldRows {
    /// Events numbered from `first` on, committed together at `recorded`.
    struct Batch {
        var first: Int64
        var events: ArraySlice<PlannedEvent>
        let recorded: Timestamp
    }

    private(set) var batches: [Batch] = []
    /// Events held, in all batches.
    private(set) var count = 0
    /// The sinks of the run (`JournalStore.verify`): rows are let go only once all of them have handled them.
    var sinks: Set<String> = []
    /// How far each sink has handled, as it said in this run.
    private var cursors: [String: Int64] = [:]

    var isEmpty: Bool { batches.isEmpty }

    mutating func hold(_ events: [PlannedEvent], from first: Int64, recorded: Timestamp) {
        guard !events.isEmpty else { return }
        batches.append(Batch(first: first, events: events[...], recorded: recorded))
        count += events.count
    }

    /// Takes the oldest batches out, leaving at most `newest` events held.
    mutating func take(keepingNewest newest: Int) -> [Batch] {
        var taken: [Batch] = []
        while count > newest, !batches.isEmpty {
            let batch = batches.removeFirst()
            count -= batch.events.count
            taken.append(batch)
        }
        return taken
    }

    /// Notes that `sink` has handled everything up to `sequence`, and lets go of what every sink has handled now;
    /// returns how many events went. Nothing goes while a sink of the run has handled nothing in it.
    mutating func handled(through sequence: Int64, by sink: String) -> Int {
        cursors[sink] = sequence
        guard !sinks.isEmpty else { return 0 }
        var everyone = Int64.max
        for sink in sinks {
            guard let cursor = cursors[sink] else { return 0 }
            everyone = min(everyone, cursor)
        }
        var released = 0
        while let batch = batches.first, batch.first <= everyone {
            let handled = Int(min(Int64(batch.events.count), everyone - batch.first + 1))
            released += handled
            if handled == batch.events.count {
                batches.removeFirst()
            } else {
                batches[0].events = batch.events.dropFirst(handled)
                batches[0].first += Int64(handled)
            }
        }
        count -= released
        return released
    }
}
