import CalWatchCore

/// The occurrences in the window by file, and by key for joining an event a sink reads back from the journal to its
/// occurrence again.
final class WatchedOccurrences: Sendable {
    private struct Held {
        var byKey: [OccurrenceKey: Occurrence] = [:]
        var byOrigin: [PlanningLoop.Origin: [Occurrence]] = [:]
        /// The files holding each key: one invitation can be in two calendars (see `OccurrenceKey`).
        var holders: [OccurrenceKey: [PlanningLoop.Origin]] = [:]
        /// Occurrences deleted from the calendars before they ended, as last read: the `removed` end of a running
        /// live activity, and any event a lagging sink reads back from the journal afterwards, still say what went
        /// away (summary, place, meeting, flight). Kept a day past their end, as long as the events are of use.
        var departed: [OccurrenceKey: Occurrence] = [:]
    }
    private let held = Locked(Held())
    private let facts: @Sendable (Occurrence) -> PlanningFacts

    init(facts: @escaping @Sendable (Occurrence) -> PlanningFacts) {
        self.facts = facts
    }

    var count: Int { held.withLock { $0.byKey.count } }

    /// Replaces one file's occurrences. Returns the items it held before, for the classifier to forget, and the
    /// occurrences of other files that take over a key this file no longer holds (the same invitation in another
    /// calendar), for the planning loop to admit again under their own file.
    func replace(_ origin: PlanningLoop.Origin, with occurrences: [Occurrence], at now: Instant) -> (
        forgotten: [OccurrenceSource], takenOver: [PlanningLoop.Origin: [Occurrence]]
    ) {
        held.withLock { held in
            let old = held.byOrigin.removeValue(forKey: origin) ?? []
            var orphaned: [OccurrenceKey] = []
            let staleBefore = now.adding(seconds: -86_400)
            if !held.departed.isEmpty { held.departed = held.departed.filter { $0.value.end >= staleBefore } }
            for occurrence in old {
                let key = OccurrenceKey(occurrence)
                if occurrence.end >= staleBefore { held.departed[key] = occurrence }
                held.byKey[key] = nil
                held.holders[key]?.removeAll { $0 == origin }
                if held.holders[key]?.isEmpty ?? true { held.holders[key] = nil } else { orphaned.append(key) }
            }
            for occurrence in occurrences {
                let key = OccurrenceKey(occurrence)
                held.byKey[key] = occurrence
                held.departed[key] = nil
                if held.holders[key]?.contains(origin) != true { held.holders[key, default: []].append(origin) }
            }
            if !occurrences.isEmpty { held.byOrigin[origin] = occurrences }
            var takenOver: [PlanningLoop.Origin: [Occurrence]] = [:]
            for key in orphaned where held.byKey[key] == nil {
                guard let other = held.holders[key]?.last,
                    let occurrence = held.byOrigin[other]?.first(where: { OccurrenceKey($0) == key })
                else { continue }
                held.byKey[key] = occurrence
                held.departed[key] = nil
                takenOver[other, default: []].append(occurrence)
            }
            var seen = Set<ObjectIdentifier>()
            return (old.map(\.source).filter { seen.insert(ObjectIdentifier($0)).inserted }, takenOver)
        }
    }

    /// An event planned without its occurrence (a `removed` end) with the occurrence as last read and its facts.
    @Sendable func lastKnown(_ emitted: PlanningLoop.Emitted) -> PlanningLoop.Emitted {
        guard emitted.occurrence == nil, let departed = held.withLock({ $0.departed[emitted.event.key] }) else {
            return emitted
        }
        var known = emitted
        known.occurrence = departed
        known.facts = facts(departed)
        return known
    }

    /// Every file's occurrences, less those of a key another file holds (planned under that file).
    var all: [PlanningLoop.Origin: [Occurrence]] {
        held.withLock { held in
            held.byOrigin.mapValues { occurrences in
                occurrences.filter { held.byKey[OccurrenceKey($0)]?.source === $0.source }
            }
        }
    }

    /// The occurrence held under `key`.
    func occurrence(for key: OccurrenceKey) -> Occurrence? { held.withLock { $0.byKey[key] } }

    /// The key of the occurrence a subject names (`UID/START`, START its RECURRENCE-ID or start in UTC).
    func key(forSubject subject: String) -> OccurrenceKey? {
        held.withLock { held in held.byKey.first { $0.value.isNamed(bySubject: subject) }?.key }
    }

    /// The key of a UID's occurrence running at `now`, else its next one.
    func key(forUID uid: String, at now: Instant) -> OccurrenceKey? {
        held.withLock { held in
            let mine = held.byKey.filter { $0.key.uid == uid && $0.value.end > now }
            return (mine.first { $0.value.start <= now } ?? mine.min { $0.value.start < $1.value.start })?.key
        }
    }

    @Sendable func entry(_ journaled: JournalStore.Journaled) -> JournalStore.Entry {
        let occurrence = held.withLock { held in
            let key = journaled.event.key
            // A sink that reads an event back after its occurrence was deleted (it lagged behind) still gets its facts.
            return held.byKey[key] ?? held.departed[key]
        }
        return JournalStore.Entry(journaled, occurrence: occurrence, facts: facts)
    }
}
