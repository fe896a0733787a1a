/// The JSON shape of an occurrence printed by `calwatch scan` (docs/design.md §7).
public enum OccurrenceJSON {
    /// Writes occurrences as JSON Lines, handing `flush` about 64 KiB at a time, each with what `classifier`
    /// found (plain events without one).
    public static func writeLines(_ occurrences: [Occurrence], classifier: Classifier? = nil, flush: ([UInt8]) -> Void)
    {
        var merge = OccurrenceMerge(inOrder: occurrences)
        writeLines(&merge, classifier: classifier, flush: flush)
    }

    /// Writes the occurrences `merge` holds as JSON Lines, in its order, as they are merged.
    ///
    /// The fields that are the same for every occurrence of a component are rendered once per component, and what
    /// `classifier` kept about the component is let go once they are.
    public static func writeLines(
        _ merge: inout OccurrenceMerge, classifier: Classifier? = nil, flush: ([UInt8]) -> Void
    ) {
        // Each component's shared fields, classified and rendered once from its first occurrence, on all cores.
        var firsts = merge.firstOfEachSource
        // What the classifier works out goes into the fragments; its cache of every item need not stay.
        let rendered = ParallelRuns.map(firsts) { run in
            run.map { first in
                defer { classifier?.forget(CollectionOfOne(first.source)) }
                return Fragments(first, facts: classifier?.facts(for: first) ?? .event)
            }
        }
        var fragments: [ObjectIdentifier: Fragments] = [:]
        fragments.reserveCapacity(firsts.count)
        for (occurrence, shared) in zip(firsts, rendered.joined()) {
            fragments[ObjectIdentifier(occurrence.source)] = shared
        }
        firsts = []
        // Then the records: two stretches per core at a time taken from the merge, rendered at once and written in
        // order (the memory held is a few stretches, whatever the number of occurrences).
        let stretch = 512
        let round = stretch * 2 * ParallelRuns.workers
        var occurrences: [Occurrence] = []
        occurrences.reserveCapacity(round)
        while merge.remaining > 0 {
            occurrences.removeAll(keepingCapacity: true)
            merge.take(round, into: &occurrences)
            let taken = occurrences
            let starts = Array(stride(from: 0, to: taken.count, by: stretch))
            let buffers = ParallelRuns.map(starts, runLength: 1) { [fragments] starts in
                var writer = JSONLineWriter(capacity: stretch * 512)
                for start in starts {
                    for occurrence in taken[start..<min(start + stretch, taken.count)] {
                        let shared = fragments[ObjectIdentifier(occurrence.source)]!
                        let leaveBy = shared.flight.flatMap {
                            classifier?.leaveBy($0, departure: Classifier.departure(of: $0, on: occurrence))
                        }
                        write(occurrence, shared: shared, leaveBy: leaveBy, to: &writer)
                    }
                }
                return writer.bytes
            }
            for buffer in buffers { flush(buffer) }
        }
    }

    /// Appends one occurrence with its classification as a JSON Lines record, or (`newline: false`) as an object
    /// inside another.
    public static func write(
        _ occurrence: Occurrence, facts: OccurrenceFacts = .event, to writer: inout JSONLineWriter, newline: Bool = true
    ) {
        write(
            occurrence, shared: Fragments(occurrence, facts: facts), leaveBy: facts.leaveBy, to: &writer,
            newline: newline)
    }

    /// The rendered fields every occurrence of one component shares, in output order around the per-instance ones.
    /// A class: handed to each of the component's occurrences without copying (and retaining) its buffer.
    final class Fragments: Sendable {
        /// The four parts one after the other, in one buffer (a scan holds one per item of the calendar).
        private let bytes: [UInt8]
        private let headEnd: Int
        private let middleEnd: Int
        private let classifiedEnd: Int
        private let meetingEnd: Int
        /// A flight, written per occurrence: its departure and leave-by are the occurrence's.
        let flight: FlightFacts?

        /// The parts, in output order around the fields written per occurrence.
        enum Part {
            /// `"uid":…` (then `recurrenceId` follows).
            case head
            /// `"calendar":…,"summary":…` (then the times follow).
            case middle
            /// `"allDay":…` up to `"confidence":…` (then the flight follows).
            case classified
            /// `"meeting":…,"location":…` (closing the record).
            case tail
            /// `,"meeting":…` alone, comma first: an event's `data.meeting` is the occurrence's.
            case meeting
        }

        /// Appends one part. Through the buffer's memory, not a slice of it: a slice would take a reference to
        /// the buffer, and writers on every core share the fragments.
        func append(_ part: Part, to writer: inout JSONLineWriter) {
            let range =
                switch part {
                case .head: 0..<headEnd
                case .middle: headEnd..<middleEnd
                case .classified: middleEnd..<classifiedEnd
                case .tail: classifiedEnd..<bytes.count
                case .meeting: classifiedEnd..<meetingEnd
                }
            bytes.withUnsafeBufferPointer { writer.append(raw: UnsafeBufferPointer(rebasing: $0[range])) }
        }

        /// `facts` of any occurrence of the component: kind, confidence, flight and meeting are the component's
        /// (`.event`, with no confidence, when it was not classified).
        init(_ occurrence: Occurrence, facts: OccurrenceFacts) {
            // Each part after the first begins with its comma, as it follows a field written per occurrence.
            var writer = JSONLineWriter(capacity: 256)
            writer.field("uid", occurrence.uid)
            headEnd = writer.bytes.count
            writer.field("calendar", occurrence.calendar)
            writer.field("summary", occurrence.summary)
            middleEnd = writer.bytes.count
            writer.field("allDay", occurrence.allDay)
            writer.field("status", statusText(occurrence.status))
            writer.field("kind", facts.kind.rawValue)
            writer.field("confidence", facts.confidence.map { ($0 * 100).rounded() / 100 })
            classifiedEnd = writer.bytes.count
            flight = facts.flight
            ClassificationJSON.writeMeeting(facts.meeting, to: &writer)
            meetingEnd = writer.bytes.count
            writer.field("location", occurrence.location)
            bytes = writer.copiedBytes
        }
    }

    /// The `Fragments` of the components written lately and the objects of the occurrences written lately, for a
    /// writer of many events about the same occurrences (a live activity's minute updates): rendered once per
    /// component, occurrence and classification instead of once per event.
    struct FragmentCache {
        private var entries: [ObjectIdentifier: (source: OccurrenceSource, facts: OccurrenceFacts, shared: Fragments)] =
            [:]
        private var objects: [Identity: RenderedObject] = [:]
        /// Components kept; past this the cache starts again (a calendar's meetings of a day fit many times over).
        private let limit: Int
        /// Occurrences' objects kept (about a kilobyte each): the live activities running at once fit many times over.
        private var objectLimit: Int { limit / 4 }

        /// An occurrence's object as rendered, with what it was rendered from.
        private final class RenderedObject {
            /// Held, so that its identifier is not reused while cached.
            let source: OccurrenceSource
            let facts: OccurrenceFacts
            let shared: Fragments
            let bytes: [UInt8]

            init(source: OccurrenceSource, facts: OccurrenceFacts, shared: Fragments, bytes: [UInt8]) {
                self.source = source
                self.facts = facts
                self.shared = shared
                self.bytes = bytes
            }
        }

        /// What an occurrence's object is made of besides its component's fields and its facts.
        private struct Identity: Hashable {
            var source: ObjectIdentifier
            var recurrenceID: DateValueText?
            var start: Instant
            var end: Instant
        }

        init(limit: Int = 4096) { self.limit = limit }

        mutating func fragments(_ occurrence: Occurrence, facts: OccurrenceFacts) -> Fragments {
            guard limit > 0 else { return Fragments(occurrence, facts: facts) }
            let id = ObjectIdentifier(occurrence.source)
            // The source is held, so its identifier is not reused while cached; facts can change with a reload.
            if let cached = entries[id], cached.facts == facts { return cached.shared }
            let shared = Fragments(occurrence, facts: facts)
            if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
            entries[id] = (occurrence.source, facts, shared)
            return shared
        }

        /// Appends the occurrence's object as rendered the last time it was asked for with the same facts, or
        /// renders it.
        mutating func write(
            _ occurrence: Occurrence, facts: OccurrenceFacts, to writer: inout JSONLineWriter
        ) -> Fragments {
            guard objectLimit > 0 else {
                let shared = fragments(occurrence, facts: facts)
                OccurrenceJSON.write(occurrence, shared: shared, leaveBy: facts.leaveBy, to: &writer, newline: false)
                return shared
            }
            let identity = Identity(
                source: ObjectIdentifier(occurrence.source), recurrenceID: occurrence.recurrenceID,
                start: occurrence.start, end: occurrence.end)
            if let cached = objects[identity], cached.facts == facts {
                cached.bytes.withUnsafeBufferPointer { writer.append(raw: $0) }
                return cached.shared
            }
            let shared = fragments(occurrence, facts: facts)
            let first = writer.bytes.count
            OccurrenceJSON.write(occurrence, shared: shared, leaveBy: facts.leaveBy, to: &writer, newline: false)
            if objects.count >= objectLimit { objects.removeAll(keepingCapacity: true) }
            objects[identity] = RenderedObject(
                source: occurrence.source, facts: facts, shared: shared, bytes: Array(writer.bytes[first...]))
            return shared
        }
    }

    /// Appends one occurrence as an object inside another, from `cache` when it was written lately; returns its
    /// component's shared fields, for the fields of the event that repeat the occurrence's
    /// (`Fragments.Part.meeting`).
    @discardableResult
    static func write(
        _ occurrence: Occurrence, facts: OccurrenceFacts, cache: inout FragmentCache, to writer: inout JSONLineWriter
    ) -> Fragments {
        cache.write(occurrence, facts: facts, to: &writer)
    }

    private static func write(
        _ occurrence: Occurrence, shared: Fragments, leaveBy: Instant?, to writer: inout JSONLineWriter,
        newline: Bool = true
    ) {
        writer.beginObject()
        shared.append(.head, to: &writer)
        writer.field("recurrenceId", occurrence.recurrenceID)
        shared.append(.middle, to: &writer)
        writer.field("start", occurrence.start)
        writer.field("end", occurrence.end)
        writer.field(
            "startLocal", local: occurrence.startLocal, offset: occurrence.displayZone.offset(at: occurrence.start))
        writer.field("timeZone", occurrence.timeZone?.identifier)
        if let home = occurrence.source.homeZone {
            // On a trip: `startLocal` is where the user will be; this is the same instant at home.
            writer.field(
                "startHome", local: home.wallClock(at: occurrence.start), offset: home.offset(at: occurrence.start))
        }
        shared.append(.classified, to: &writer)
        ClassificationJSON.writeFlight(
            shared.flight,
            departure: shared.flight.map { Classifier.departure(of: $0, on: occurrence) } ?? occurrence.start,
            arrival: occurrence.end, leaveBy: leaveBy, to: &writer)
        shared.append(.tail, to: &writer)
        writer.endObject(newline: newline)
    }

    /// `confirmed`, `tentative`, `cancelled`, or `null` when the calendar says nothing (or something else).
    static func statusText(_ status: CalendarComponent.Status?) -> String? {
        switch status {
        case .confirmed: "confirmed"
        case .tentative: "tentative"
        case .cancelled: "cancelled"
        case .other, nil: nil
        }
    }
}

/// The JSON shape of an alarm trigger printed by `calwatch scan --alarms`.
public enum AlarmJSON {
    /// Writes triggers as JSON Lines, handing `flush` about 64 KiB at a time.
    public static func writeLines(_ triggers: [AlarmTrigger], flush: ([UInt8]) -> Void) {
        var writer = JSONLineWriter()
        for index in triggers.indices {
            write(triggers[index], to: &writer)
            if writer.bytes.count >= 1 << 16 {
                flush(writer.bytes)
                writer.reset()
            }
        }
        if !writer.bytes.isEmpty { flush(writer.bytes) }
    }

    /// Appends one trigger as a JSON Lines record.
    public static func write(_ trigger: AlarmTrigger, to writer: inout JSONLineWriter) {
        writer.beginObject()
        writer.field("uid", trigger.occurrence.uid)
        writer.field("recurrenceId", trigger.occurrence.recurrenceID)
        writer.field("calendar", trigger.occurrence.calendar)
        writer.field("summary", trigger.occurrence.summary)
        writer.field("trigger", trigger.trigger)
        writer.field("action", trigger.alarm.action)
        writer.field("repetition", trigger.repetition)
        writer.field("description", trigger.alarm.description)
        writer.field("occurrenceStart", trigger.occurrence.start)
        writer.field("allDay", trigger.occurrence.allDay)
        writer.endObject(newline: true)
    }
}
