public import CalWatchCore
import Foundation

/// What a running daemon knows for its local server (`calwatch next`, the day, the event stream): the occurrences its
/// watch holds, classified as it plans them, the zone and window it read them in, and its journal. Readable from any
/// thread while the watch goes on.
///
/// The answer is the one `next` would work out by reading the calendars itself: the same occurrences (those of the
/// window `next` would expand), the same classification, what was dismissed in the journal, the options it would
/// take from the configuration. When the daemon cannot promise that (another configuration, a window it does not
/// hold, its first read not done) it says why and `next` reads the calendars itself.
public final class NextSource: Sendable {
    /// Why the daemon does not answer.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// The zone and window of what is held, set once the first read is done.
    private struct Held: Sendable {
        var zone: ZoneRules
        var window: InstantWindow
    }

    private let held = Locked<Held?>(nil)
    /// The configuration as the daemon read it (before the watch adapted it).
    private let configuration: Configuration
    /// Its file's real path, for askers that name the file instead of a digest (the `calwatch` front).
    private let file: String?
    /// The digests worked out for such askers, by their environment and the file as it was then.
    private let digests = Locked<[DigestKey: String]>([:])
    private let occurrences: WatchedOccurrences
    private let facts: @Sendable (Occurrence) -> OccurrenceFacts
    private let journal: JournalStore

    init(
        configuration: Configuration, occurrences: WatchedOccurrences,
        facts: @escaping @Sendable (Occurrence) -> OccurrenceFacts, journal: JournalStore
    ) {
        self.configuration = configuration
        file = configuration.file.flatMap(ConfigurationLoader.realPath)
        self.occurrences = occurrences
        self.facts = facts
        self.journal = journal
    }

    /// The watch has read every file, expanded by `expansion` in `zone`.
    func read(zone: ZoneRules, expansion: ExpansionOptions) {
        held.withLock { $0 = Held(zone: zone, window: expansion.expansionWindow) }
    }

    /// The status at `now` as `calwatch next` shows it with these options (`kinds`, `calendars`, `horizon`; the
    /// rest comes from the configuration), for a `next` whose configuration was `readFrom` (`nil`: any asker that
    /// takes the daemon's own, such as a widget).
    public func status(
        readFrom: String?, kinds: Set<OccurrenceFacts.Kind>?, calendars: [String]?, horizon: Int64, at now: Instant
    ) async throws -> Result<NextUp, Refusal> {
        guard !configuration.fleet else { return .failure(Refusal(description: "a fleet's watcher")) }
        guard readFrom == nil || readFrom == configuration.readFrom else {
            return .failure(Refusal(description: "it reads another configuration"))
        }
        guard let held = held.withLock({ $0 }) else {
            return .failure(Refusal(description: "it has not read the calendars yet"))
        }
        var options = NextUp.Options(configuration, kinds: kinds, calendars: calendars, horizon: horizon)
        // The window `next` expands: what is shown is chosen from it, as `next` alone would.
        let window = InstantWindow(start: now.adding(seconds: -options.lookBehind), end: now.adding(seconds: horizon))
        // Only what has not ended counts, unless the trip's flights are looked back for.
        let needed = options.day.travelZone ? window.start : now
        guard held.window.start <= needed, window.end <= held.window.end else {
            return .failure(Refusal(description: "it holds \(held.window.start)..\(held.window.end)"))
        }
        options.dismissed = try await journal.dismissed(at: now)
        let all = occurrences.inEffect { window.overlaps(start: $0, end: $1) }
        return .success(NextUp(all, facts: facts, options: options, now: now, zone: held.zone))
    }

    /// The digest (`Configuration.readFrom`) a `calwatch next` reading the configuration file at `path` in
    /// `environment` (the variables its paths name, and `HOME`) would have, without calendars or a zone on its
    /// command line; `nil` when `path` is not this daemon's own file, which is all it ever reads for an asker.
    ///
    /// The file is read again, since the asker may resolve its paths elsewhere; what that gave is kept until the
    /// file changes, for at most 16 environments.
    public func readFrom(file path: String, environment: [String: String]) -> String? {
        guard let file, path == file else { return nil }
        var status = stat()
        guard stat(file, &status) == 0 else { return nil }
        let key = DigestKey(
            environment: environment,
            file: [
                Int64(status.st_dev), Int64(status.st_ino), Int64(status.st_size), Int64(status.st_mtim.tv_sec),
                Int64(status.st_mtim.tv_nsec),
            ])
        if let known = digests.withLock({ $0[key] }) { return known }
        guard
            var read = try? ConfigurationLoader.load(
                path: file, environment: environment, sinks: nil, sources: configuration.sourceKinds)
        else {
            return nil
        }
        read.settleReadFrom()
        digests.withLock {
            if $0.count >= 16 { $0.removeAll() }
            $0[key] = read.readFrom
        }
        return read.readFrom
    }

    private struct DigestKey: Hashable {
        var environment: [String: String]
        var file: [Int64]
    }

    /// The zone the calendars were read in; `nil` until the first read is done.
    public var zone: ZoneRules? { held.withLock { $0?.zone } }

    /// The sheet of `date` (in the daemon's zone) at `now`, from what the watch holds: a day it does not hold in
    /// full (beyond its horizon) is refused.
    public func day(_ date: CalendarDate, at now: Instant) async throws -> Result<DaySheet, Refusal> {
        guard let held = held.withLock({ $0 }) else {
            return .failure(Refusal(description: "it has not read the calendars yet"))
        }
        let start = held.zone.instant(for: LocalDateTime(date: date))
        let end = held.zone.instant(for: LocalDateTime(date: date.adding(days: 1)))
        guard held.window.start <= start, end <= held.window.end else {
            return .failure(Refusal(description: "it holds \(held.window.start)..\(held.window.end)"))
        }
        let answered = DaySheet.Answered.from(try await journal.answerEvents(at: now).map(\.event))
        let all = occurrences.inEffect { $0 < end && $1 >= start }
        return .success(
            DaySheet(date: date, occurrences: all, facts: facts, answered: answered, now: now, zone: held.zone))
    }

    /// The journal's events after `sequence`, at most `limit`, each as the sinks get it (its occurrence as the
    /// calendars have it now): what the event stream sends.
    public func entries(after sequence: Int64, limit: Int) async throws -> [JournalStore.Entry] {
        try await journal.events(after: sequence, limit: limit).map(occurrences.entry)
    }

    /// The journal's last sequence: where a stream without `Last-Event-ID` begins.
    public func lastSequence() async throws -> Int64 { try await journal.lastSequence() }
}
