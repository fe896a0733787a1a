import CalWatchCore

/// The occurrences in the window by file, and by key for joining an event a sink reads back from the journal to its
/// occurrence again.
final class WatchedOccurrences: Sendable {
    private struct Held {
        /// Where the occurrence in effect under each key is, with the files that hold the key: one invitation can be
        /// in two calendars (see `OccurrenceKey`).
        var byKey: [Digest: Slot] = [:]
        var byOrigin: [PlanningLoop.Origin: [Occurrence]] = [:]
        /// The files after `Slot.firstHolder` that hold a key, in the order they took it (rare: the same invitation
        /// in several calendars).
        var otherHolders: [Digest: [PlanningLoop.Origin]] = [:]
        /// Occurrences deleted from the calendars before they ended, as last read: the `removed` end of a running
        /// live activity, and any event a lagging sink reads back from the journal afterwards, still say what went
        /// away (summary, place, meeting, flight). Kept a day past their end, as long as the events are of use.
        var departed: [OccurrenceKey: Occurrence] = [:]

        func occurrence(in slot: Slot) -> Occurrence? {
            slot.inEffect.flatMap { byOrigin[$0.origin]?[Int($0.index)] }
        }

        func holds(_ origin: PlanningLoop.Origin, _ digest: Digest, _ slot: Slot) -> Bool {
            slot.firstHolder == origin || otherHolders[digest]?.contains(origin) == true
        }
    }

    /// An occurrence's key as 128 bits of the process's keyed hash (two seeds): filed by its whole `OccurrenceKey`
    /// (64 bytes, the calendar's name that equality ignores among them), the table of a first sync of 100,000 items
    /// took 33 MB, and twice that while it grew. The hash's key is random per process, so no calendar can be
    /// written to make two keys collide.
    private struct Digest: Hashable {
        let first: Int
        let second: Int

        init(_ key: OccurrenceKey) {
            var first = Hasher()
            first.combine(UInt8(1))
            key.hash(into: &first)
            var second = Hasher()
            second.combine(UInt8(2))
            key.hash(into: &second)
            (self.first, self.second) = (first.finalize(), second.finalize())
        }

        init(_ occurrence: Occurrence) { self.init(OccurrenceKey(occurrence)) }

        func hash(into hasher: inout Hasher) { hasher.combine(first) }
    }

    /// One key: where its occurrence in effect is, and the first file that took it. The occurrence itself stays in
    /// its file's array (`byOrigin`), so that a slot is 16 bytes, not 68: the table keeps 2.6 slots per key after
    /// it grows (8 MB rather than 22 for 100,000 keys).
    private struct Slot {
        /// The file whose occurrence is in effect and its index there; `nil` only while a file's occurrences are
        /// being replaced.
        var inEffect: (origin: PlanningLoop.Origin, index: Int32)?
        var firstHolder: PlanningLoop.Origin
    }

    private let held = Locked(Held())
    private let facts: @Sendable (Occurrence) -> OccurrenceFacts

    init(facts: @escaping @Sendable (Occurrence) -> OccurrenceFacts) {
        self.facts = facts
    }

    var count: Int { held.withLock { $0.byKey.count } }

    /// Whether none of these files' occurrences are held.
    func holdNone(of origins: some Sequence<PlanningLoop.Origin>) -> Bool {
        held.withLock { held in origins.allSatisfy { held.byOrigin[$0] == nil } }
    }

    /// Makes room for `count` more keys at once (all the files read at start), instead of growing step by step.
    func reserve(adding count: Int) {
        held.withLock { $0.byKey.reserveCapacity($0.byKey.count + count) }
    }

    /// Replaces one file's occurrences. Returns the occurrences of other files that take over a key this file no
    /// longer holds (the same invitation in another calendar), for the planning loop to admit again under their own
    /// file.
    func replace(_ origin: PlanningLoop.Origin, with occurrences: [Occurrence], at now: Instant)
        -> [PlanningLoop.Origin: [Occurrence]]
    {
        held.withLock { held in
            let old = held.byOrigin.removeValue(forKey: origin) ?? []
            var orphaned: [Digest] = []
            let staleBefore = now.adding(seconds: -86_400)
            if !held.departed.isEmpty { held.departed = held.departed.filter { $0.value.end >= staleBefore } }
            for occurrence in old {
                let key = OccurrenceKey(occurrence)
                if occurrence.end >= staleBefore { held.departed[key] = occurrence }
                let digest = Digest(key)
                guard var slot = held.byKey.removeValue(forKey: digest) else { continue }
                if var others = held.otherHolders.removeValue(forKey: digest) {
                    if slot.firstHolder == origin { slot.firstHolder = others.removeFirst() }
                    others.removeAll { $0 == origin }
                    if !others.isEmpty { held.otherHolders[digest] = others }
                } else if slot.firstHolder == origin {
                    continue
                }
                slot.inEffect = nil
                held.byKey[digest] = slot
                orphaned.append(digest)
            }
            for (index, occurrence) in occurrences.enumerated() {
                let key = OccurrenceKey(occurrence)
                if !held.departed.isEmpty { held.departed[key] = nil }
                let digest = Digest(key)
                let inEffect = (origin, Int32(index))
                if let slot = held.byKey.index(forKey: digest) {
                    held.byKey.values[slot].inEffect = inEffect
                    if !held.holds(origin, digest, held.byKey.values[slot]) {
                        held.otherHolders[digest, default: []].append(origin)
                    }
                } else {
                    held.byKey[digest] = Slot(inEffect: inEffect, firstHolder: origin)
                }
            }
            if !occurrences.isEmpty { held.byOrigin[origin] = occurrences }
            var takenOver: [PlanningLoop.Origin: [Occurrence]] = [:]
            for digest in orphaned {
                guard let slot = held.byKey[digest], slot.inEffect == nil else { continue }
                let other = held.otherHolders[digest]?.last ?? slot.firstHolder
                guard let theirs = held.byOrigin[other], let index = theirs.firstIndex(where: { Digest($0) == digest })
                else {
                    // No file holds it after all.
                    held.byKey[digest] = nil
                    held.otherHolders[digest] = nil
                    continue
                }
                held.byKey[digest]?.inEffect = (other, Int32(index))
                held.departed[OccurrenceKey(theirs[index])] = nil
                takenOver[other, default: []].append(theirs[index])
            }
            return takenOver
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
            Dictionary(
                uniqueKeysWithValues: held.byOrigin.map { origin, occurrences in
                    let inEffect = occurrences.indices.filter { index in
                        guard let slot = held.byKey[Digest(occurrences[index])]?.inEffect else { return false }
                        return slot.origin == origin && Int(slot.index) == index
                    }
                    return (origin, inEffect.map { occurrences[$0] })
                })
        }
    }

    /// The occurrences in effect whose start and end `includes` takes (a window's test, asked first and of the
    /// times alone: a key's digest is worked out, and an occurrence copied, only for those it takes), file by file
    /// in the order of their origin. What the local server answers `next` and the day from: `all` took 15 ms over
    /// 45,000 occurrences, this 3 ms for the thousands around now.
    func inEffect(where includes: (_ start: Instant, _ end: Instant) -> Bool) -> [Occurrence] {
        held.withLock { held in
            held.byOrigin.compactMap { origin, occurrences -> (PlanningLoop.Origin, [Occurrence])? in
                let taken = occurrences.indices.filter { index in
                    guard includes(occurrences[index].start, occurrences[index].end),
                        let slot = held.byKey[Digest(occurrences[index])]?.inEffect
                    else { return false }
                    return slot.origin == origin && Int(slot.index) == index
                }
                return taken.isEmpty ? nil : (origin, taken.map { occurrences[$0] })
            }.sorted { $0.0 < $1.0 }.flatMap(\.1)
        }
    }

    /// The occurrence held under `key`.
    func occurrence(for key: OccurrenceKey) -> Occurrence? {
        held.withLock { held in held.byKey[Digest(key)].flatMap(held.occurrence(in:)) }
    }

    /// The key of the occurrence a subject names (`UID/START`, START its RECURRENCE-ID or start in UTC).
    func key(forSubject subject: String) -> OccurrenceKey? {
        held.withLock { held in
            held.byKey.values.lazy.compactMap(held.occurrence(in:)).first { $0.isNamed(bySubject: subject) }.map(
                OccurrenceKey.init)
        }
    }

    /// The key of a UID's occurrence running at `now`, else its next one.
    func key(forUID uid: String, at now: Instant) -> OccurrenceKey? {
        held.withLock { held in
            let mine = held.byKey.values.compactMap { slot in
                held.occurrence(in: slot).flatMap { $0.uid == uid && $0.end > now ? $0 : nil }
            }
            return (mine.first { $0.start <= now } ?? mine.min { $0.start < $1.start }).map(OccurrenceKey.init)
        }
    }

    @Sendable func entry(_ journaled: JournalStore.Journaled) -> JournalStore.Entry {
        let occurrence = held.withLock { held in
            let key = journaled.event.key
            // A sink that reads an event back after its occurrence was deleted (it lagged behind) still gets its facts.
            return held.byKey[Digest(key)].flatMap(held.occurrence(in:)) ?? held.departed[key]
        }
        return JournalStore.Entry(journaled, occurrence: occurrence, facts: facts)
    }
}
