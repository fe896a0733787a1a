public import CalWatchCore
import Foundation
public import Logging
public import ServiceLifecycle

/// Asks a forecast speaking Open-Meteo's API (`GET /v1/forecast`, https://open-meteo.com/en/docs) for the hours of a
/// day at a place: `hourly=rain,showers,snowfall,temperature_2m,visibility`, times as Unix seconds in GMT. One answer
/// fills the `WeatherCache` for that place's whole day. The service is a server like any other: the same limits on
/// time and bytes as feeds, and an answer in other units than asked for, or of another shape, is refused.
public enum WeatherClient {
    /// The hourly variables asked for, as `hourly_units` must name their units.
    static let units = [
        "rain": "mm", "showers": "mm", "snowfall": "cm", "temperature_2m": "°C", "visibility": "m",
    ]

    /// The request for the day (UTC) of `key` at its place.
    static func request(_ key: WeatherCache.Key, weather: TravelSettings.Weather) -> HTTPClient.Request? {
        var base = weather.url
        while base.hasSuffix("/") { base.removeLast() }
        let day = CalendarDate(daysSinceEpoch: key.hour / 24)
        let date = day.description
        let point = key.point
        let query =
            "latitude=\(GeoPoint.text(point.latitude))&longitude=\(GeoPoint.text(point.longitude))"
            + "&hourly=rain,showers,snowfall,temperature_2m,visibility&timeformat=unixtime&timezone=GMT"
            + "&start_date=\(date)&end_date=\(date)"
        return URL(string: "\(base)/v1/forecast?\(query)").map { HTTPClient.Request(url: $0) }
    }

    /// The day's hours at `key`'s place, or why there are none.
    static func day(
        _ key: WeatherCache.Key, weather: TravelSettings.Weather, deadline: Duration = .seconds(10)
    ) async -> Result<[WeatherCache.Key: WeatherCache.Conditions], HTTPClient.Failure> {
        guard let request = request(key, weather: weather) else {
            return .failure(.init(reason: "the weather address is not usable"))
        }
        var limits = HTTPClient.Limits()
        limits.deadline = deadline
        limits.largest = 1 << 20
        return await HTTPClient.send(request, limits: limits).flatMap { hours(in: $0, at: key) }
    }

    /// Open-Meteo's answer, as far as it is read: every hourly variable (`time` included, as Unix seconds) an array
    /// of numbers or nulls, and each one's unit.
    private struct Forecast: Decodable {
        var hourly: [String: [Double?]]
        var hourlyUnits: [String: String]

        enum CodingKeys: String, CodingKey {
            case hourly
            case hourlyUnits = "hourly_units"
        }
    }

    /// Open-Meteo's error: `{"error": true, "reason": …}`.
    private struct Refusal: Decodable {
        var reason: String
    }

    /// The hours an answer gives for `key`'s place.
    static func hours(in answer: HTTPClient.Answer, at key: WeatherCache.Key) -> Result<
        [WeatherCache.Key: WeatherCache.Conditions], HTTPClient.Failure
    > {
        guard (200..<300).contains(answer.status) else {
            let said = (try? JSONDecoder().decode(Refusal.self, from: answer.body)).map { ": " + $0.reason.prefix(200) }
            return .failure(.init(reason: "HTTP \(answer.status)\(said ?? "")"))
        }
        guard let forecast = try? JSONDecoder().decode(Forecast.self, from: answer.body),
            let times = forecast.hourly["time"], times.count <= 24 * 16
        else { return .failure(.init(reason: "an answer without hourly and hourly_units")) }
        for (variable, unit) in Self.units
        where forecast.hourly[variable] != nil && forecast.hourlyUnits[variable] != unit {
            return .failure(.init(reason: "\(variable) in \(forecast.hourlyUnits[variable] ?? "no unit"), not \(unit)"))
        }
        func value(_ variable: String, _ index: Int) -> Double? {
            guard let values = forecast.hourly[variable], index < values.count, let value = values[index],
                value.isFinite
            else { return nil }
            return value
        }
        /// An amount (rain, snow, visibility): not negative, at most `largest`.
        func amount(_ variable: String, _ index: Int, largest: Double) -> Double? {
            value(variable, index).map { min(max($0, 0), largest) }
        }
        var hours: [WeatherCache.Key: WeatherCache.Conditions] = [:]
        for index in times.indices {
            // Whole hours of this era only: a stranger's number never reaches an integer conversion that traps.
            guard let seconds = value("time", index), (0...1e11).contains(seconds),
                seconds.truncatingRemainder(dividingBy: 3600) == 0,
                let celsius = value("temperature_2m", index), (-90...60).contains(celsius)
            else { continue }
            var hour = key
            hour.hour = Int64(seconds) / 3600
            hours[hour] = WeatherCache.Conditions(
                rain: (amount("rain", index, largest: 500) ?? 0) + (amount("showers", index, largest: 500) ?? 0),
                snowfall: amount("snowfall", index, largest: 500) ?? 0, temperature: celsius,
                visibility: amount("visibility", index, largest: 1e6))
        }
        guard hours[key] != nil else { return .failure(.init(reason: "the answer has no forecast for that hour")) }
        return .success(hours)
    }

    /// Why the forecast cannot be had, or `nil` when it answers today's forecast for Berlin in its documented shape:
    /// what `calwatch check` says of `travel.weather`.
    public static func unreachable(_ weather: TravelSettings.Weather, now: Instant) async -> String? {
        let berlin = WeatherCache.Key(GeoPoint(latitude: 52.5, longitude: 13.4)!, at: now)
        switch await day(berlin, weather: weather) {
        case .success: return nil
        case .failure(let failure): return failure.reason
        }
    }

    /// Asks the forecast for what `cache` wants, a day per place and request, at most `budget` requests: what a
    /// one-shot command does before planning. Returns why the forecast gave no answer, as it last said.
    public static func answerWanted(
        in cache: WeatherCache, weather: TravelSettings.Weather, budget: Int, now: Instant
    ) async -> String? {
        var failure: String?
        var asked = 0
        var answered: Set<WeatherCache.Key> = []
        for key in cache.takeWanted() where !answered.contains(key) {
            guard asked < budget else {
                cache.unanswered(key)
                continue
            }
            asked += 1
            switch await day(key, weather: weather) {
            case .success(let hours):
                cache.store(hours, at: now)
                answered.formUnion(hours.keys)
            case .failure(let problem):
                cache.unanswered(key)
                failure = problem.reason
            }
        }
        return failure
    }
}

/// Asks the forecast for the places and hours planning wants (`WeatherCache`), a place's whole day per request,
/// within `requestsPerHour`, and says when answers came (`changed`), so the watch plans the ways again. A forecast
/// that fails is said once per change of state; ways go on without weather until it answers.
public final class WeatherPoller: Service {
    private let weather: TravelSettings.Weather
    private let cache: WeatherCache
    private let logger: Logger
    private let now: @Sendable () -> Instant
    private let changed: @Sendable () -> Void

    public init(
        weather: TravelSettings.Weather, cache: WeatherCache, logger: Logger,
        now: @escaping @Sendable () -> Instant = RoutePoller.wallClock, changed: @escaping @Sendable () -> Void
    ) {
        self.weather = weather
        self.cache = cache
        self.logger = logger
        self.now = now
        self.changed = changed
    }

    public func run() async throws {
        let (bells, bell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        cache.onWanted { bell.yield() }
        bell.yield()
        var budget = HourlyBudget(limit: weather.requestsPerHour)
        var failing: String?
        for await _ in bells.cancelOnGracefulShutdown() {
            var answered = false
            var keys = cache.takeWanted()[...]
            while let key = keys.popFirst() {
                if let wait = budget.wait() {
                    logger.warning(
                        "weather budget spent (\(weather.requestsPerHour) requests an hour); \(keys.count + 1) wait")
                    cache.giveBack([key] + keys)
                    // What came before the budget ran out is planned now, not after the wait.
                    if answered {
                        changed()
                        answered = false
                    }
                    guard (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: wait) })) != nil else {
                        return
                    }
                    keys = cache.takeWanted()[...]
                    continue
                }
                budget.spend()
                let result = await cancelWhenGracefulShutdown { await WeatherClient.day(key, weather: self.weather) }
                guard !Task.isShuttingDownGracefully else { return }
                switch result {
                case .success(let hours):
                    answered = cache.store(hours, at: now()) || answered
                    // The rest of that day at that place came with it.
                    keys = keys.filter { hours[$0] == nil }[...]
                    if failing != nil {
                        logger.notice(
                            "the weather forecast answers again", metadata: ["weather": "\(weather.shownURL)"])
                        failing = nil
                    }
                case .failure(let failure):
                    cache.unanswered(key)
                    if failing != failure.reason {
                        logger.warning(
                            "the weather forecast gave no answer: \(failure.reason); ways go on without weather",
                            metadata: ["weather": "\(weather.shownURL)"])
                        failing = failure.reason
                    }
                }
            }
            if answered { changed() }
        }
    }
}
