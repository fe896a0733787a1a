import Dispatch
import Foundation
import Synchronization

/// Many small independent pieces of work (a vdir's files) done on all cores, in runs, with the results in the
/// order of the items: what a sequential loop would give.
///
/// The calling thread takes part and returns when every run is done; runs are taken from a shared counter, so a
/// core that meets slow items takes fewer runs, and the caller alone finishes them if no helper has started. The
/// helpers are threads of their own, not the Swift runtime's pool (one thread per core), which the daemon's
/// timers and fleet heartbeats need while a sync's thousand files are read.
package enum ParallelRuns {
    /// The items a run takes: enough that taking one costs nothing beside the work, few enough to share well.
    package static let runLength = 64
    /// The threads that work at once: one per core.
    package static var workers: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// `work` applied to each run of at most `runLength` items, the results in the items' order.
    package static func map<Item: Sendable, Result: Sendable>(
        _ items: [Item], runLength: Int = runLength, _ work: @Sendable (ArraySlice<Item>) -> Result
    ) -> [Result] {
        let runCount = (items.count + runLength - 1) / runLength
        var results = [Result?](repeating: nil, count: runCount)
        results.withUnsafeMutableBufferPointer { slots in
            // Each run writes its own slot, and `perform` returns after every run has finished.
            nonisolated(unsafe) let slots = slots
            perform(runCount) { index in
                slots[index] = work(items[(index * runLength)..<min(items.count, (index + 1) * runLength)])
            }
        }
        return results.map { $0! }
    }

    /// Runs two pieces of work at once when a core is free to take one, else one after the other on the calling
    /// thread; returns when both are done. They must not touch the same state.
    package static func both(_ first: () -> Void, _ second: () -> Void) {
        withoutActuallyEscaping(first) { first in
            withoutActuallyEscaping(second) { second in
                // Each runs exactly once, and both have run when `perform` returns.
                nonisolated(unsafe) let parts = [second, first]
                perform(2) { parts[$0]() }
            }
        }
    }

    /// The next piece to take, shared by the caller and its helpers.
    private final class Counter: Sendable {
        let next = Atomic<Int>(0)
    }

    /// `body` for each of `0..<count`, each index exactly once, on the calling thread and the helpers.
    private static func perform(_ count: Int, _ body: @Sendable (Int) -> Void) {
        let workers = min(count, workers)
        guard workers > 1 else {
            for index in 0..<count { body(index) }
            return
        }
        withoutActuallyEscaping(body) { body in
            let counter = Counter()
            let take: @Sendable () -> Void = {
                while true {
                    let index = counter.next.add(1, ordering: .relaxed).oldValue
                    guard index < count else { return }
                    body(index)
                }
            }
            let done = DispatchGroup()
            // A serial queue of its own per helper: a thread of its own, never one a Swift task waits for.
            for helper in 1..<workers {
                DispatchQueue(label: "calwatch-parallel-\(helper)").async(group: done, execute: take)
            }
            take()
            // A helper that has not started finds nothing left; one that took a piece finishes it.
            done.wait()
        }
    }
}
