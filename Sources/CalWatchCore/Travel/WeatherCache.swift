/// The weather forecast for the ways' places and hours (`travel.weather`), shared like `RouteCache` between planning
/// (which reads it, and asks for what it lacks) and the service that asks the forecast. Kept per tenth of a degree
/// (about 11 km) and hour: a forecast is no finer than that, and one answer serves every way nearby. Not kept on
/// disk (a forecast ages); answers more than a day past are dropped.
public final class WeatherCache: Sendable {
    /// A place and an hour of the forecast.
    public struct Key: Hashable, Sendable {
        /// Tenths of a degree.
        public var latitude: Int
        public var longitude: Int
        /// Seconds since the epoch / 3600.
        public var hour: Int64

        public init(_ point: GeoPoint, at instant: Instant) {
            latitude = Int((point.latitude * 10).rounded())
            longitude = Int((point.longitude * 10).rounded())
            hour = instant.secondsSinceEpoch / 3600
        }

        /// The place's point, as the forecast is asked for it.
        public var point: GeoPoint {
            GeoPoint(latitude: Double(latitude) / 10, longitude: Double(longitude) / 10)
                ?? GeoPoint(latitude: 0, longitude: 0)!
        }

        /// The hour's start.
        public var start: Instant { Instant(secondsSinceEpoch: hour * 3600) }
    }

    /// The forecast for one hour at one place, in the units Open-Meteo answers in by default.
    public struct Conditions: Sendable, Hashable {
        /// Rain and showers in the hour, mm (a rate in mm/h).
        public var rain: Double
        /// Snowfall in the hour, cm.
        public var snowfall: Double
        /// Air temperature 2 m above the ground, °C.
        public var temperature: Double
        /// Visibility, m; `nil` where the model gives none.
        public var visibility: Double?

        public init(rain: Double, snowfall: Double, temperature: Double, visibility: Double? = nil) {
            self.rain = rain
            self.snowfall = snowfall
            self.temperature = temperature
            self.visibility = visibility
        }
    }

    private struct State {
        var answers: [Key: Conditions] = [:]
        var wanted = WantedKeys<Key>()
    }
    private let state = Locked(State())

    public init() {}

    /// The forecast for `key`; `nil` when there is none yet (it is then wanted).
    public func conditions(for key: Key) -> Conditions? {
        let (answer, bell) = state.withLock { state -> (Conditions?, (@Sendable () -> Void)?) in
            if let answer = state.answers[key] { return (answer, nil) }
            return (nil, state.wanted.want(key))
        }
        bell?()
        return answer
    }

    /// The keys wanted, oldest first.
    public func takeWanted() -> [Key] { state.withLock { $0.wanted.take() } }

    /// Puts keys taken but not asked yet back, without ringing.
    public func giveBack(_ keys: [Key]) { state.withLock { $0.wanted.giveBack(keys) } }

    /// Keeps the forecast's hours for a place (one answer covers several), dropping hours more than a day before
    /// `now`; returns whether anything changed.
    @discardableResult public func store(_ hours: [Key: Conditions], at now: Instant) -> Bool {
        state.withLock { state in
            var changed = false
            for (key, conditions) in hours {
                state.wanted.done(key)
                if state.answers.updateValue(conditions, forKey: key) != conditions { changed = true }
            }
            let oldest = now.secondsSinceEpoch / 3600 - 24
            state.answers = state.answers.filter { $0.key.hour >= oldest }
            return changed
        }
    }

    /// The forecast could not be had for `key`: planning may want it again (the way keeps no weather meanwhile).
    public func unanswered(_ key: Key) { state.withLock { $0.wanted.done(key) } }

    /// Called whenever a key becomes wanted.
    public func onWanted(_ bell: @escaping @Sendable () -> Void) { state.withLock { $0.wanted.bell = bell } }
}
