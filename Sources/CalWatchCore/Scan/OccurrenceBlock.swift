/// One item's occurrences, held in as few bytes as they allow: most of what a scan of a large calendar holds.
///
/// Nearly every item is one source whose instances are either a series' (each recurrence ID is its start) or a
/// single event's (no recurrence ID): those keep a start and a length per occurrence, 12 bytes instead of 40.
/// Anything else (an override moved, a length beyond 68 years) is kept as it came.
public struct OccurrenceBlock: RandomAccessCollection, Sendable {
    /// The one source of a compact block (`nil` when the occurrences are kept as they came, in `plain`).
    private var source: OccurrenceSource?
    /// In a compact block, whether each recurrence ID is the start (a series) or there is none (a single event).
    private var idIsStart = false
    private var starts: [Int64] = []
    private var lengths: [Int32] = []
    private var plain: [Occurrence] = []

    /// The occurrences in the order given; a single source's are put in order of start, then end.
    public init(_ occurrences: [Occurrence]) {
        if !compact(occurrences) {
            // At its own size: `occurrences` may be a buffer reused for every item.
            plain.reserveCapacity(occurrences.count)
            plain += occurrences
        }
    }

    /// The occurrences exactly as given, in the array given (occurrences already in the scan's order).
    public init(asGiven occurrences: [Occurrence]) {
        plain = occurrences
    }

    /// Keeps `occurrences` compact when they allow it; `false` when they do not.
    private mutating func compact(_ occurrences: [Occurrence]) -> Bool {
        guard let first = occurrences.first else { return false }
        let source = first.source
        let idIsStart = first.recurrenceID != nil
        var inOrder = true
        for (index, occurrence) in occurrences.enumerated() {
            guard occurrence.source === source,
                idIsStart
                    ? occurrence.recurrenceID == .instant(occurrence.start) : occurrence.recurrenceID == nil,
                Int32(exactly: occurrence.end.secondsSinceEpoch - occurrence.start.secondsSinceEpoch) != nil
            else { return false }
            if index > 0 {
                let previous = occurrences[index - 1]
                if (previous.start.secondsSinceEpoch, previous.end.secondsSinceEpoch)
                    > (occurrence.start.secondsSinceEpoch, occurrence.end.secondsSinceEpoch)
                {
                    inOrder = false
                }
            }
        }
        // One source: occurrences equal in start and end are equal in all, so any sort gives the same order.
        let ordered =
            inOrder
            ? occurrences
            : occurrences.sorted {
                ($0.start.secondsSinceEpoch, $0.end.secondsSinceEpoch)
                    < ($1.start.secondsSinceEpoch, $1.end.secondsSinceEpoch)
            }
        self.source = source
        self.idIsStart = idIsStart
        starts.reserveCapacity(ordered.count)
        lengths.reserveCapacity(ordered.count)
        for occurrence in ordered {
            starts.append(occurrence.start.secondsSinceEpoch)
            lengths.append(Int32(occurrence.end.secondsSinceEpoch - occurrence.start.secondsSinceEpoch))
        }
        return true
    }

    /// Whether every occurrence is of one source, in order of start, then end: then nothing need be put in order.
    public var isOneSourceInOrder: Bool { source != nil }

    public var startIndex: Int { 0 }
    public var endIndex: Int { source == nil ? plain.count : starts.count }

    public subscript(position: Int) -> Occurrence {
        guard let source else { return plain[position] }
        let start = Instant(secondsSinceEpoch: starts[position])
        return Occurrence(
            source: source, recurrenceID: idIsStart ? .instant(start) : nil, start: start,
            end: start.adding(seconds: Int64(lengths[position])))
    }

    /// The start and end of the occurrence at `position`, without making it.
    func span(at position: Int) -> (start: Int64, end: Int64) {
        guard source != nil else {
            return (plain[position].start.secondsSinceEpoch, plain[position].end.secondsSinceEpoch)
        }
        return (starts[position], starts[position] + Int64(lengths[position]))
    }

    /// Whether the occurrences at two positions have one source (always, in a compact block).
    func sameSource(_ a: Int, _ b: Int) -> Bool {
        source != nil || plain[a].source === plain[b].source
    }

    /// Keeps the occurrences `shouldBeRemoved` turns down.
    public mutating func removeAll(where shouldBeRemoved: (Occurrence) -> Bool) {
        let kept = filter { !shouldBeRemoved($0) }
        if kept.count != count { self = OccurrenceBlock(kept) }
    }
}
