public import CalWatchCore
import Foundation

/// What the journal keeps for hooks: each run's outcome (for `calwatch why`) and the events held for a retry.
extension JournalStore {
    /// Records how a hook's run for the event `sequence` ended.
    public func recordHookRun(
        _ sequence: Int64, sink: String, attempt: Int, outcome: HookOutcome, at finished: Instant
    )
        throws
    {
        let statement = try connection.prepare(
            "INSERT OR REPLACE INTO hook_runs (sink, seq, attempt, finished, outcome) VALUES (?1, ?2, ?3, ?4, ?5)")
        try statement.bind([
            .text(sink), .integer(sequence), .integer(Int64(attempt)), .integer(finished.secondsSinceEpoch),
            .text(outcome.description),
        ])
        try statement.step()
    }

    /// One run of a hook, as `recordHookRun` kept it.
    public struct HookRun: Sendable, Hashable {
        public var attempt: Int
        public var finished: Instant
        public var outcome: HookOutcome
    }

    /// The runs of `sink` for the event `sequence`, in order.
    public func hookRuns(_ sequence: Int64, sink: String) throws -> [HookRun] {
        let statement = try connection.prepare(
            "SELECT attempt, finished, outcome FROM hook_runs WHERE sink = ?1 AND seq = ?2 ORDER BY attempt")
        try statement.bind([.text(sink), .integer(sequence)])
        var runs: [HookRun] = []
        while try statement.step() {
            // Every outcome is written by `recordHookRun`; a row it could not have written is passed over.
            guard let outcome = statement.text(2).flatMap(HookOutcome.init(journalText:)) else { continue }
            runs.append(
                HookRun(
                    attempt: Int(statement.integer(0)), finished: Instant(secondsSinceEpoch: statement.integer(1)),
                    outcome: outcome))
        }
        return runs
    }

    /// Whether `sink` holds the event `sequence` for a retry.
    public func isHeldForRetry(_ sequence: Int64, sink: String) throws -> Bool {
        let statement = try connection.prepare("SELECT 1 FROM sink_retries WHERE sink = ?1 AND seq = ?2")
        try statement.bind([.text(sink), .integer(sequence)])
        return try statement.step()
    }

    /// Records that `sink` will try the event `sequence` again later.
    /// Keeps the events `sequences` for `sink` in one transaction, as `holdRetry` keeps one (a hook's day events set
    /// aside behind its reminders).
    public func holdRetries(_ sequences: [Int64], for sink: String) throws {
        try connection.transaction {
            for sequence in sequences {
                let statement = try connection.prepare("INSERT OR IGNORE INTO sink_retries (sink, seq) VALUES (?1, ?2)")
                try statement.bind([.text(sink), .integer(sequence)])
                try statement.step()
            }
        }
    }

    public func holdRetry(_ sequence: Int64, for sink: String) throws {
        try holdRetries([sequence], for: sink)
    }

    /// Records that `sink` is done with the event `sequence` (it worked, failed for good, or expired).
    public func releaseRetry(_ sequence: Int64, for sink: String) throws {
        let statement = try connection.prepare("DELETE FROM sink_retries WHERE sink = ?1 AND seq = ?2")
        try statement.bind([.text(sink), .integer(sequence)])
        try statement.step()
    }

    /// The events `sink` was to try again when it last stopped, in order.
    public func heldRetries(for sink: String) throws -> [Journaled] {
        let statement = try connection.prepare(
            """
            SELECT \(EventColumn.list) FROM events WHERE seq IN (SELECT seq FROM sink_retries WHERE sink = ?1) ORDER BY seq
            """)
        try statement.bind([.text(sink)])
        var rows: [Journaled] = []
        while try statement.step() {
            if let journaled = Self.journaled(statement) { rows.append(journaled) }
        }
        return rows
    }
}
