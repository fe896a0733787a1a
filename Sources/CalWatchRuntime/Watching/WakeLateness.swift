public import CalWatchCore

/// How late the daemon's loop served each wake, and what it was doing meanwhile: the daemon's own account of a
/// late reminder, in its log (`WatchService`) and in `make bench-lateness`.
///
/// A wake due at `D` is served by the first piece of work that plans at an instant at or after `D`; it is late by
/// that work's end (when its events are committed) less `D`. Its cause is whatever held the loop longest between
/// `D` and then: the wait's own wake-up (the loop asleep, or waiting for a thread), or one piece of work (reading
/// changed files, a rescan, a reload, giving memory back, planning).
public struct WakeLateness: Sendable, CustomStringConvertible {
    /// A wake served, and what delayed it most.
    public struct Late: Sendable, CustomStringConvertible {
        public var due: Instant
        public var milliseconds: Int64
        public var cause: String

        public var description: String { "\(milliseconds) ms after \(due), behind \(cause)" }
    }

    /// Wakes served.
    public private(set) var served = 0
    /// The latest of them.
    public private(set) var worst: Late?
    /// Wakes served more than `lateAfter` milliseconds after they were due.
    public private(set) var lateCount = 0
    /// Later than this (milliseconds) a wake counts as late, and the daemon logs it with its cause.
    public static let lateAfter: Int64 = 20

    private var due: Instant?
    private var waitStart: Int64 = 0
    private var work: [(what: String, start: Int64, end: Int64)] = []

    public init() {}

    public var description: String {
        "\(served) wakes served, \(lateCount) later than \(Self.lateAfter) ms; the latest "
            + (worst.map { "\($0)" } ?? "none")
    }

    /// The loop begins to wait at `now` (milliseconds since 1970) for its next wake, `due`.
    mutating func waiting(for due: Instant?, now: Int64) {
        if self.due != due {
            self.due = due
            work = []
        }
        waitStart = now
    }

    /// The wait returned at `now`: time asleep after the wake was due is the wake-up's own delay.
    mutating func woke(now: Int64) {
        note("the wait's own wake-up", from: waitStart, to: now)
    }

    /// Keeps a piece of work that may have held the wake due: only what ends after its instant (a sync read for
    /// minutes before a distant wake leaves nothing behind).
    private mutating func note(_ what: String, from start: Int64, to end: Int64) {
        guard let due, end > due.secondsSinceEpoch * 1000 else { return }
        work.append((what, start, end))
    }

    /// One piece of work ran from `start` to `end` planning at `plannedAt`. Returns the wake it served when it
    /// planned at or after the wake due, late or not.
    @discardableResult
    mutating func did(_ what: String, from start: Int64, to end: Int64, plannedAt: Instant?) -> Late? {
        note(what, from: start, to: end)
        guard let due, let plannedAt, plannedAt >= due else { return nil }
        let dueAt = due.secondsSinceEpoch * 1000
        let late = max(0, end - dueAt)
        // What the time between the due instant and the commit went to: the wake-up itself, or a piece of work.
        var causes: [String: Int64] = [:]
        for piece in work {
            let overlap = min(piece.end, end) - max(piece.start, dueAt)
            if overlap > 0 { causes[piece.what, default: 0] += overlap }
        }
        let cause = causes.max { ($0.value, $1.key) < ($1.value, $0.key) }.map { ($0.key, $0.value) } ?? ("nothing", 0)
        let served = Late(due: due, milliseconds: late, cause: "\(cause.0) (\(cause.1) ms)")
        self.served += 1
        if late > Self.lateAfter { lateCount += 1 }
        if late > (worst?.milliseconds ?? -1) { worst = served }
        self.due = nil
        work = []
        return served
    }
}
