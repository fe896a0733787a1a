import CalWatchCore

/// Files noticed and not yet read, in the order noticed, each once, with what reading one has cost lately.
///
/// `WatchService` reads them in slices sized to end before its next wake, so that a wake is never behind a sync's
/// thousands of renamed files: before, a turn read every file it was handed and only then planned, and a reminder
/// due meanwhile waited for all of them (71–107 ms behind a 5,000-file rewrite with two CPU hogs).
struct UnreadFiles {
    private var queue: [String] = []
    private var head = 0
    private var queued: Set<String> = []
    /// Milliseconds a file took to read, parse and plan lately (a moving average), from a cautious first guess.
    private(set) var millisecondsPerFile = 1.0

    /// The longest slice, in milliseconds: how long a wake that comes due unforeseen (an answer, a signal) can wait.
    static let sliceMilliseconds = 10.0
    /// Kept free of reading before a wake, in milliseconds: a slice is an estimate, and on a busy machine its thread
    /// can lose the core for a few scheduler periods (a 10 ms slice begun 13 ms before a wake ended 22 ms after it,
    /// with two CPU hogs).
    static let guardMilliseconds = 30.0

    var isEmpty: Bool { queued.isEmpty }
    var count: Int { queued.count }

    mutating func add(_ paths: some Sequence<String>) {
        for path in paths where queued.insert(path).inserted { queue.append(path) }
    }

    /// How many files to read now so that they are done well before `wake`: none when it is too near (the loop
    /// waits for it first), at least one when it is further than a slice (so a file dearer than a slice is read all
    /// the same: wakes are at least a second apart).
    func slice(before wake: Instant?, now: Timestamp) -> Int {
        guard !isEmpty else { return 0 }
        if let wake {
            let free = Double(wake.secondsSinceEpoch * 1000 - now.millisecondsSinceEpoch) - Self.guardMilliseconds
            if free < Self.sliceMilliseconds { return min(count, max(0, Int(free / millisecondsPerFile))) }
        }
        return min(count, max(1, Int(Self.sliceMilliseconds / millisecondsPerFile)))
    }

    /// The next `count` files, in the order noticed.
    mutating func take(_ count: Int) -> [String] {
        let end = min(queue.count, head + count)
        let taken = Array(queue[head..<end])
        head = end
        for path in taken { queued.remove(path) }
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        }
        return taken
    }

    /// Reading `count` files took `duration`: the estimate follows, a third of the way each time.
    mutating func took(_ count: Int, in duration: Duration) {
        guard count > 0 else { return }
        let each = duration / .milliseconds(1) / Double(count)
        millisecondsPerFile = max(0.01, millisecondsPerFile * 2 / 3 + each / 3)
    }
}
