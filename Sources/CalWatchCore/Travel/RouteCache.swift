public import Foundation

/// The routing engine's answers, shared between planning (which reads them, and asks for those it lacks) and the
/// service that asks the engine: planning stays a pure function of what is here at the time.
///
/// Answers are kept per origin, destination, mode and hour of departure, since an engine with traffic answers
/// differently at rush hour. A way with no answer for its hour yet is given the nearest hour's answer meanwhile (the
/// last the engine said, if it is down now), and a way answered well ahead is asked again as its hour nears.
public final class RouteCache: Sendable {
    /// One way, at one hour.
    public struct Key: Hashable, Sendable {
        public var origin: GeoPoint
        public var destination: GeoPoint
        public var mode: TravelSettings.Mode
        /// The hour of the departure (seconds since the epoch / 3600).
        public var hour: Int64

        public init(origin: GeoPoint, destination: GeoPoint, mode: TravelSettings.Mode, at instant: Instant) {
            self.origin = origin
            self.destination = destination
            self.mode = mode
            hour = instant.secondsSinceEpoch / 3600
        }

        /// The start of the departure's hour.
        public var departure: Instant { Instant(secondsSinceEpoch: hour * 3600) }

        /// The way, whatever the hour.
        struct Way: Hashable {
            var origin: GeoPoint
            var destination: GeoPoint
            var mode: TravelSettings.Mode
        }
        var way: Way { Way(origin: origin, destination: destination, mode: mode) }
    }

    /// What storing an answer did.
    public enum Stored: Sendable, Equatable {
        /// The way's first answer for its hour.
        case new
        /// A new answer that differs from the last by more than the threshold: the time to leave moves.
        case moved(from: Int64)
        /// A new answer within the threshold of the last: the last is kept, nothing is planned again.
        case kept
    }

    private struct Answer {
        var seconds: Int64
        /// When the engine gave it.
        var asked: Instant
    }

    /// A way the engine gave no answer for: asked again at `at`, later after each failure.
    private struct Retry {
        var at: Instant
        var failures: Int
    }

    private struct State {
        var answers: [Key: Answer] = [:]
        var retries: [Key: Retry] = [:]
        /// The hours answered for each way, for the nearest answer while a way's own hour has none.
        var hours: [Key.Way: Set<Int64>] = [:]
        var wanted = WantedKeys<Key>()
        /// Every answer by way and hour of the week, kept on disk: the estimate when there is no answer now.
        var history = RouteHistory()
        /// Counts the answers recorded, so a saver knows whether there is anything new to write.
        var recorded = 0
    }
    private let state = Locked(State())

    public init() {}

    /// A cache whose history a file holds (`encodedHistory` wrote it); an unreadable file gives no history.
    public convenience init(history data: Data) {
        self.init()
        state.withLock { $0.history = RouteHistory(data: data) }
    }

    /// The engine's answer for `key` in seconds, else the nearest hour's for the same way; `nil` when there is
    /// none. Without an answer for its own hour, `key` becomes wanted.
    public func seconds(for key: Key) -> Int64? { answer(for: key)?.seconds }

    /// `seconds(for:)`, and whether the answer is for the key's own hour (`exact`) or the nearest hour's.
    public func answer(for key: Key) -> (seconds: Int64, exact: Bool)? {
        let (answer, bell) = state.withLock { state -> ((Int64, Bool)?, (@Sendable () -> Void)?) in
            if let answer = state.answers[key] { return ((answer.seconds, true), nil) }
            let nearest = state.hours[key.way]?.min { abs($0 - key.hour) < abs($1 - key.hour) }
            let fallback = nearest.flatMap { hour in state.answers[Key(key, hour: hour)]?.seconds }
            return (fallback.map { ($0, false) }, state.wanted.want(key))
        }
        bell?()
        return answer
    }

    /// The way's usual time at the key's hour of the week (`RouteHistory`), with how many answers it is of.
    public func usual(for key: Key) -> (seconds: Int64, answers: Int)? {
        state.withLock { $0.history.usual(for: key) }
    }

    /// The history as a file keeps it, and how many answers it has recorded in all (to tell whether it changed).
    public func encodedHistory() -> (data: Data, recorded: Int) {
        state.withLock { ($0.history.encoded(), $0.recorded) }
    }

    /// The keys planning asked for and found no answer for, oldest first. Each stays unwanted until it is answered
    /// (`store`), given back, or found unanswerable (`unanswered`).
    public func takeWanted() -> [Key] {
        state.withLock { $0.wanted.take() }
    }

    /// Puts keys taken but not asked yet back, without ringing: the service asks them when it may.
    public func giveBack(_ keys: [Key]) {
        state.withLock { $0.wanted.giveBack(keys) }
    }

    /// Keeps an answer the engine gave at `now`. An answer for a way already answered replaces the last only when
    /// it differs by more than `threshold` seconds.
    @discardableResult public func store(
        _ seconds: Int64, for key: Key, at now: Instant = Instant(secondsSinceEpoch: 0), threshold: Int64 = 0
    ) -> Stored {
        state.withLock { state in
            state.wanted.done(key)
            state.retries[key] = nil
            state.history.record(seconds, for: key)
            state.recorded += 1
            guard let last = state.answers[key] else {
                state.answers[key] = Answer(seconds: seconds, asked: now)
                state.hours[key.way, default: []].insert(key.hour)
                return .new
            }
            guard abs(seconds - last.seconds) > threshold else {
                state.answers[key]!.asked = now
                return .kept
            }
            state.answers[key] = Answer(seconds: seconds, asked: now)
            return .moved(from: last.seconds)
        }
    }

    /// The engine gave no answer for `key` at `now` (down, busy, too slow): it is asked again 30 s later, then
    /// after twice as long each time, up to 15 minutes (`takeDueAgain`), unless planning asks first.
    public func unanswered(_ key: Key, at now: Instant = Instant(secondsSinceEpoch: 0)) {
        state.withLock { state in
            state.wanted.done(key)
            let failures = (state.retries[key]?.failures ?? 0) + 1
            let wait = min(Int64(30) << min(failures - 1, 5), 900)
            state.retries[key] = Retry(at: now.adding(seconds: wait), failures: failures)
        }
    }

    /// Ways answered earlier than `before` ahead of their departure whose departure is now at most `before` away
    /// (and not yet an hour past): asked again, since traffic near the time can differ from the forecast. Each is
    /// taken once per answer (`store` or `unanswered` notes it asked); answers more than a day past are dropped.
    /// With them, the ways the engine failed on whose retry has come.
    public func takeDueAgain(at now: Instant, before: Int64) -> [Key] {
        state.withLock { state in
            var due: [Key] = []
            for (key, retry) in state.retries where retry.at <= now && !state.wanted.isPending(key) {
                state.wanted.asking(key)
                due.append(key)
            }
            guard before > 0 else { return due }
            for (key, answer) in state.answers {
                let departure = key.departure.secondsSinceEpoch
                if departure < now.secondsSinceEpoch - 86_400 {
                    state.answers[key] = nil
                    state.hours[key.way]?.remove(key.hour)
                    if state.hours[key.way]?.isEmpty == true { state.hours[key.way] = nil }
                    continue
                }
                guard departure - now.secondsSinceEpoch <= before, departure + 3600 > now.secondsSinceEpoch,
                    departure - answer.asked.secondsSinceEpoch > before, !state.wanted.isPending(key)
                else { continue }
                state.wanted.asking(key)
                // Asked now as far as the next call is concerned: a failure keeps the last answer, not asked again.
                state.answers[key]!.asked = now
                due.append(key)
            }
            return due.sorted { $0.hour < $1.hour }
        }
    }

    /// When `takeDueAgain` will next have something (`nil`: nothing is waiting to be asked again).
    public func nextDueAgain(before: Int64) -> Instant? {
        state.withLock { state in
            let retry = state.retries.values.map(\.at.secondsSinceEpoch).min()
            let again =
                before > 0
                ? state.answers.compactMap { key, answer -> Int64? in
                    let departure = key.departure.secondsSinceEpoch
                    return departure - answer.asked.secondsSinceEpoch > before ? departure - before : nil
                }.min() : nil
            return [retry, again].compactMap { $0 }.min().map(Instant.init(secondsSinceEpoch:))
        }
    }

    /// Called (on the asking thread) whenever a key becomes wanted: the service that asks the engine waits on it.
    public func onWanted(_ bell: @escaping @Sendable () -> Void) {
        state.withLock { $0.wanted.bell = bell }
    }
}

extension RouteCache.Key {
    /// The same way at another hour.
    fileprivate init(_ key: Self, hour: Int64) {
        self = key
        self.hour = hour
    }
}
