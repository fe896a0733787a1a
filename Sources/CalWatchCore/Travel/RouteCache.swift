/// The routing engine's answers, shared between planning (which reads them, and asks for those it lacks) and the
/// service that asks the engine: planning stays a pure function of what is here at the time.
///
/// Answers are kept per origin, destination, mode and hour of departure, since an engine with traffic answers
/// differently at rush hour.
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
    }

    private struct State {
        var answers: [Key: Int64] = [:]
        var wanted: [Key] = []
        /// Wanted, or taken and not answered yet: not wanted again meanwhile (planning asks for one way many times).
        var wantedSet: Set<Key> = []
        var bell: (@Sendable () -> Void)?
    }
    private let state = Locked(State())

    public init() {}

    /// The engine's answer for `key` in seconds; `nil` when there is none yet, after which `key` is wanted.
    public func seconds(for key: Key) -> Int64? {
        let (answer, bell) = state.withLock { state -> (Int64?, (@Sendable () -> Void)?) in
            if let answer = state.answers[key] { return (answer, nil) }
            guard state.wantedSet.insert(key).inserted else { return (nil, nil) }
            state.wanted.append(key)
            return (nil, state.bell)
        }
        bell?()
        return answer
    }

    /// The keys planning asked for and found no answer for, oldest first. Each stays unwanted until it is answered
    /// (`store`), given back, or found unanswerable (`unanswered`).
    public func takeWanted() -> [Key] {
        state.withLock { state in
            defer { state.wanted = [] }
            return state.wanted
        }
    }

    /// Puts keys taken but not asked yet back, without ringing: the service asks them when it may.
    public func giveBack(_ keys: [Key]) {
        state.withLock { $0.wanted += keys }
    }

    /// Keeps an answer.
    public func store(_ seconds: Int64, for key: Key) {
        state.withLock { state in
            state.answers[key] = seconds
            state.wantedSet.remove(key)
        }
    }

    /// The engine gave no answer for `key`: planning may ask for it again (at its next change).
    public func unanswered(_ key: Key) {
        _ = state.withLock { $0.wantedSet.remove(key) }
    }

    /// Called (on the asking thread) whenever a key becomes wanted: the service that asks the engine waits on it.
    public func onWanted(_ bell: @escaping @Sendable () -> Void) {
        state.withLock { $0.bell = bell }
    }
}
