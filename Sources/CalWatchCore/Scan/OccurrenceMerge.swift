/// Occurrences kept in blocks, one per item as it was expanded, and read out in the scan's order (start, then uid
/// and calendar, then end, then the order they were made in) by merging the blocks.
///
/// The order is that of sorting one array of every occurrence, without that array or the keys to sort it: a
/// year of a large calendar is a quarter of a million occurrences, and `scan` writes them as they are merged.
public struct OccurrenceMerge: Sendable {
    private var blocks: [OccurrenceBlock]
    /// The place of each block's next occurrence.
    private var next: [Int]
    /// The blocks not yet used up, a binary min-heap on their next occurrence, whose order keys are kept in the
    /// entries themselves (a comparison touches nothing else).
    private var heap: [Head]
    /// Each source's place among all sources ordered by uid, then calendar, then first appearance.
    private let rankOf: [ObjectIdentifier: Int32]
    /// Occurrences not yet taken.
    public private(set) var remaining: Int

    /// Merges `blocks` given in the order their occurrences were made; each block's own order is put right first
    /// (an item's occurrences mostly come out in order already).
    public init(blocks: [OccurrenceBlock]) {
        self.init(blocks: blocks, ordered: false)
    }

    /// Occurrences already in the scan's order, taken as they are.
    public init(inOrder occurrences: [Occurrence]) {
        self.init(blocks: [OccurrenceBlock(asGiven: occurrences)], ordered: true)
    }

    private init(blocks: [OccurrenceBlock], ordered: Bool) {
        var sources: [OccurrenceSource] = []
        var rankOf: [ObjectIdentifier: Int32] = [:]
        // One block in order is never compared: no ranks needed.
        for block in blocks where !ordered {
            var previous: ObjectIdentifier?
            for occurrence in block {
                let id = ObjectIdentifier(occurrence.source)
                if id != previous && rankOf[id] == nil {
                    rankOf[id] = Int32(sources.count)
                    sources.append(occurrence.source)
                }
                previous = id
            }
        }
        // Comparing strings once per source, not once per pair of occurrences that start together.
        let order = sources.indices.sorted { a, b in
            let left = sources[a]
            let right = sources[b]
            if left.component.uid != right.component.uid { return left.component.uid < right.component.uid }
            if left.calendar != right.calendar { return left.calendar < right.calendar }
            return a < b
        }
        for (position, index) in order.enumerated() { rankOf[ObjectIdentifier(sources[index])] = Int32(position) }
        self.rankOf = rankOf
        self.blocks = blocks
        remaining = 0
        next = Array(repeating: 0, count: blocks.count)
        heap = []
        heap.reserveCapacity(blocks.count)
        for index in self.blocks.indices where !self.blocks[index].isEmpty {
            if !ordered && !self.blocks[index].isOneSourceInOrder { putInOrder(index) }
            remaining += self.blocks[index].count
            let first = self.blocks[index][0]
            heap.append(
                Head(self.blocks[index].span(at: 0), rank: rankOf[ObjectIdentifier(first.source)] ?? 0, block: index))
        }
        for position in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: position) }
    }

    /// The first occurrence of each source, in the order the blocks were given: what is rendered once per item.
    public var firstOfEachSource: [Occurrence] {
        var firsts: [Occurrence] = []
        var seen = Set<ObjectIdentifier>()
        for block in blocks {
            for occurrence in block where seen.insert(ObjectIdentifier(occurrence.source)).inserted {
                firsts.append(occurrence)
            }
        }
        return firsts
    }

    /// Appends the next `limit` occurrences (fewer at the end) to `output`; a used-up block is let go at once.
    public mutating func take(_ limit: Int, into output: inout [Occurrence]) {
        var left = min(limit, remaining)
        remaining -= left
        while left > 0 {
            let block = heap[0].block
            if heap.count == 1 {
                // The last block: the rest of it in one copy.
                let end = next[block] + left
                output += blocks[block][next[block]..<end]
                next[block] = end
                if end == blocks[block].count { blocks[block] = OccurrenceBlock([]) }
                return
            }
            let position = next[block]
            output.append(blocks[block][position])
            next[block] = position + 1
            left -= 1
            if position + 1 == blocks[block].count {
                blocks[block] = OccurrenceBlock([])
                heap[0] = heap.removeLast()
            } else {
                let rank =
                    blocks[block].sameSource(position, position + 1)
                    ? heap[0].rank : rankOf[ObjectIdentifier(blocks[block][position + 1].source)] ?? 0
                heap[0] = Head(blocks[block].span(at: position + 1), rank: rank, block: block)
            }
            siftDown()
        }
    }

    /// Every occurrence left, in order.
    public mutating func all() -> [Occurrence] {
        var output: [Occurrence] = []
        output.reserveCapacity(remaining)
        take(remaining, into: &output)
        return output
    }

    /// A block's next occurrence as the order compares it: start, then its source's rank, then end, then the
    /// earlier block (as the occurrences were made).
    private struct Head {
        var start: Int64
        var end: Int64
        var rank: Int32
        var block32: Int32
        var block: Int { Int(block32) }

        init(_ span: (start: Int64, end: Int64), rank: Int32, block: Int) {
            start = span.start
            end = span.end
            self.rank = rank
            block32 = Int32(block)
        }

        static func < (a: Head, b: Head) -> Bool {
            if a.start != b.start { return a.start < b.start }
            if a.rank != b.rank { return a.rank < b.rank }
            if a.end != b.end { return a.end < b.end }
            return a.block32 < b.block32
        }
    }

    /// Moves the top entry down to its place.
    private mutating func siftDown(from start: Int = 0) {
        let count = heap.count
        guard count > 1 else { return }
        heap.withUnsafeMutableBufferPointer { heap in
            let moving = heap[start]
            var parent = start
            while true {
                let left = 2 * parent + 1
                guard left < count else { break }
                var child = left
                if left + 1 < count && heap[left + 1] < heap[left] { child = left + 1 }
                guard heap[child] < moving else { break }
                heap[parent] = heap[child]
                parent = child
            }
            heap[parent] = moving
        }
    }

    /// Puts one block in the scan's order: start, then source rank, then end, then as made.
    private mutating func putInOrder(_ index: Int) {
        let block = blocks[index]
        let rankOf = rankOf
        let rank = { (occurrence: Occurrence) in rankOf[ObjectIdentifier(occurrence.source)]! }
        let source = block[0].source
        var inOrder = true
        for position in block.indices.dropFirst() {
            let (previous, occurrence) = (block[position - 1], block[position])
            if occurrence.source !== source {
                inOrder = false
                break
            }
            if previous.start.secondsSinceEpoch > occurrence.start.secondsSinceEpoch
                || previous.start == occurrence.start
                    && previous.end.secondsSinceEpoch > occurrence.end.secondsSinceEpoch
            {
                inOrder = false
                break
            }
        }
        if inOrder { return }
        let order = block.indices.sorted { a, b in
            let (left, right) = (block[a], block[b])
            if left.start != right.start { return left.start.secondsSinceEpoch < right.start.secondsSinceEpoch }
            let (leftRank, rightRank) = (rank(left), rank(right))
            if leftRank != rightRank { return leftRank < rightRank }
            if left.end != right.end { return left.end.secondsSinceEpoch < right.end.secondsSinceEpoch }
            return a < b
        }
        blocks[index] = OccurrenceBlock(order.map { block[$0] })
    }
}
