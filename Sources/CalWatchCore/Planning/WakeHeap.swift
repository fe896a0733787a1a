/// When each planned occurrence (or the day's pair of occurrences) wants to be looked at next: a binary min-heap of
/// (instant, slot).
///
/// A slot may be pushed again with a new instant before its old entry comes up; the caller keeps each slot's
/// current instant and skips entries that no longer match it.
struct WakeHeap<Slot: Comparable> {
    private var heap: [(instant: Instant, slot: Slot)] = []

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    /// The earliest instant waiting.
    var next: Instant? { heap.first?.instant }

    mutating func push(_ instant: Instant, slot: Slot) {
        heap.append((instant, slot))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry.
    mutating func pop() -> (instant: Instant, slot: Slot)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var first = parent
            if left < heap.count && Self.before(heap[left], heap[first]) { first = left }
            if right < heap.count && Self.before(heap[right], heap[first]) { first = right }
            guard first != parent else { break }
            heap.swapAt(parent, first)
            parent = first
        }
        return top
    }

    /// Ties go to the lower slot, so the order of a step never depends on the heap's history.
    private static func before(_ a: (instant: Instant, slot: Slot), _ b: (instant: Instant, slot: Slot)) -> Bool {
        a.instant != b.instant ? a.instant < b.instant : a.slot < b.slot
    }
}
