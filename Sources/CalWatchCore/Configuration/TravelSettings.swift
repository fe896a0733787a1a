/// How calwatch works out the way to an event that has no travel time of its own (`travel:` in config.yml): the
/// mode, a buffer on a routing engine's answer, and the engine.
public struct TravelSettings: Sendable, Hashable {
    /// How the user gets there.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        case driving, cycling, walking
    }

    /// Added to a routing engine's answer: a share of it, or a fixed time.
    public enum Buffer: Sendable, Hashable {
        case percent(Int)
        case seconds(Int64)

        /// `seconds` with the buffer added.
        public func applied(to seconds: Int64) -> Int64 {
            switch self {
            case .percent(let percent): seconds + (seconds * Int64(percent) + 99) / 100
            case .seconds(let extra): seconds + extra
            }
        }
    }

    /// A routing engine speaking OSRM's HTTP API (`/route/v1/{profile}/…`) or Valhalla's `/route`.
    public struct Routing: Sendable, Hashable {
        public enum Engine: String, Sendable, Hashable, CaseIterable {
            case osrm, valhalla
        }

        public var engine: Engine
        /// The engine's base address, `http://127.0.0.1:5000`.
        public var url: String
        /// The most requests a watcher sends in an hour; what is left waits for the next hour.
        public var requestsPerHour = 60
        /// How long before the time to leave a way answered earlier is asked again (an engine with traffic answers
        /// differently at rush hour); 0: never.
        public var askAgainBefore: Int64 = 3600

        public init(engine: Engine, url: String) {
            self.engine = engine
            self.url = url
        }

        /// The address without a password, for every message and log.
        public var shownURL: String { ConnectionString(url).redacted }
    }

    /// A geocoder speaking Nominatim's search API (`GET /search?q=…&format=jsonv2`), for a LOCATION that is only an
    /// address: off unless configured, at most one request a second, with the User-Agent the public instance's
    /// usage policy asks for, and its answers kept on disk.
    public struct Geocoder: Sendable, Hashable {
        /// The instance's base address, `https://nominatim.openstreetmap.org`.
        public var url: String
        /// Names the application and a contact, `calwatch/1.0 (you@example.com)`.
        public var userAgent: String
        /// Where answers are kept between runs (`geocoder.json` beside the journal unless given).
        public var cachePath: String?

        public init(url: String, userAgent: String) {
            self.url = url
            self.userAgent = userAgent
        }

        /// The address without a password, for every message and log.
        public var shownURL: String { ConnectionString(url).redacted }
    }

    /// A weather forecast speaking Open-Meteo's API (`GET /v1/forecast`; self-hostable, no key): the hour's rain,
    /// snow, temperature and visibility where the way goes make a drive longer (`WeatherFactor`).
    public struct Weather: Sendable, Hashable {
        public enum Provider: String, Sendable, Hashable, CaseIterable {
            case openMeteo = "open-meteo"
        }

        public var provider: Provider = .openMeteo
        /// The service's base address, `https://api.open-meteo.com`.
        public var url = "https://api.open-meteo.com"
        /// The most requests a watcher sends in an hour.
        public var requestsPerHour = 60

        public init() {}

        /// The address without a password, for every message and log.
        public var shownURL: String { ConnectionString(url).redacted }
    }

    public var mode: Mode = .driving
    public var buffer: Buffer = .percent(0)
    /// The way to an event starts at the place of the event before it when that ends at most this long before (on
    /// the same day).
    public var fromPreviousWithin: Int64 = 3 * 3600
    /// An engine's new answer for a way moves the time to leave, and the reminders counted from it, only when it
    /// differs from the last by more than this: a minute's difference is not worth new reminders.
    public var replanAfter: Int64 = 300
    /// Added to an estimate made without the engine (the way's usual time, or the straight line): 20%, as the
    /// flight app's fallback does.
    public var estimateMargin: Buffer = .percent(20)

    /// Typical speeds over the straight line between two points (km/h), for a way the engine never answered: road
    /// speeds in town divided by a detour factor of about 1.3 (driving 40 km/h, cycling 18 km/h, walking 5.5 km/h).
    public static func straightLineSpeed(_ mode: Mode) -> Double {
        switch mode {
        case .driving: 30
        case .cycling: 14
        case .walking: 4.2
        }
    }

    /// Time to get ready before leaving for anything with a time to leave, unless its rule, place or
    /// `flights.prep` says; `nil`: none.
    public var prep: Int64?
    /// `nil`: no engine; only travel times the calendar or `places:` give.
    public var routing: Routing?
    /// `nil`: no forecast; the weather moves nothing (the default).
    public var weather: Weather?
    /// `nil`: no geocoder; a LOCATION is placed by `places:` only.
    public var geocoder: Geocoder?

    public init() {}
}

/// Printed by reflection like every setting: without a password written in the engine's address.
extension TravelSettings.Routing: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "Routing(\(engine.rawValue), \(shownURL))" }
    public var debugDescription: String { description }
}

extension TravelSettings.Geocoder: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "Geocoder(\(shownURL), \(userAgent))" }
    public var debugDescription: String { description }
}
