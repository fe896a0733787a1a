public import CalWatchCore
import Foundation

/// Asks a routing engine how long a way takes, through its documented HTTP API: OSRM's route service
/// (`GET /route/v1/{profile}/{lon},{lat};{lon},{lat}`, the answer's `routes[0].duration`) or Valhalla's
/// (`POST /route` with the two locations and a costing, the answer's `trip.summary.time`). The engine is a server
/// like any other: the same limits on time and bytes as feeds, and an answer that cannot be a way's length
/// (negative, over a day) is refused rather than believed.
public enum RoutingClient {
    /// The longest way believed, in seconds.
    static let longest: Int64 = 86_400

    /// The way's length in seconds, or why there is none.
    static func seconds(
        _ key: RouteCache.Key, routing: TravelSettings.Routing, deadline: Duration = .seconds(10)
    ) async -> Result<Int64, HTTPClient.Failure> {
        guard let request = request(key, routing: routing) else {
            return .failure(.init(reason: "the routing address is not usable"))
        }
        return await send(request, deadline: deadline).flatMap { seconds(in: $0, engine: routing.engine) }
    }

    /// What a one-shot command's asking came to.
    public struct Asked: Sendable {
        public var answered = 0
        /// Ways not asked: the budget was spent.
        public var unasked = 0
        /// Why the engine gave no way, as it last said.
        public var failure: String?
    }

    /// Asks the engine, one after another, the ways `cache` wants, at most `budget` of them: what a one-shot
    /// command (`replay`, `why`, `explain`, `next`) does before planning, since no service asks for it.
    public static func answerWanted(
        in cache: RouteCache, routing: TravelSettings.Routing, budget: Int, now: Instant
    ) async -> Asked {
        var asked = Asked()
        let wanted = cache.takeWanted()
        for (index, key) in wanted.enumerated() {
            guard index < budget else {
                asked.unasked = wanted.count - index
                break
            }
            switch await seconds(key, routing: routing) {
            case .success(let seconds):
                cache.store(seconds, for: key, at: now)
                asked.answered += 1
            case .failure(let failure):
                cache.unanswered(key)
                asked.failure = failure.reason
            }
        }
        return asked
    }

    /// One exchange with the engine: a way's answer is small, so a megabyte is more than enough.
    private static func send(_ request: HTTPClient.Request, deadline: Duration) async -> Result<
        HTTPClient.Answer, HTTPClient.Failure
    > {
        var limits = HTTPClient.Limits()
        limits.deadline = deadline
        limits.largest = 1 << 20
        return await HTTPClient.send(request, limits: limits)
    }

    /// Why the engine cannot be asked, or `nil` when it answers in its own shape (a way, or a refusal of one): what
    /// `calwatch check` says of `travel.routing`.
    public static func unreachable(_ routing: TravelSettings.Routing) async -> String? {
        let point = GeoPoint(latitude: 0, longitude: 0)!
        let key = RouteCache.Key(origin: point, destination: point, mode: .driving, at: Instant(secondsSinceEpoch: 0))
        guard let request = request(key, routing: routing) else { return "not a usable address" }
        switch await send(request, deadline: .seconds(10)) {
        case .failure(let failure): return failure.reason
        case .success(let answer):
            let document = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any]
            let shaped =
                routing.engine == .osrm
                ? document?["code"] is String : (document?["trip"] != nil || document?["error_code"] != nil)
            return shaped ? nil : "HTTP \(answer.status), not an answer of \(routing.engine.rawValue)'s API"
        }
    }

    /// The request for `key`, in the engine's form.
    static func request(_ key: RouteCache.Key, routing: TravelSettings.Routing) -> HTTPClient.Request? {
        var base = routing.url
        while base.hasSuffix("/") { base.removeLast() }
        let from = key.origin
        let to = key.destination
        switch routing.engine {
        case .osrm:
            let profile = ["driving": "car", "cycling": "bike", "walking": "foot"][key.mode.rawValue] ?? "car"
            let points =
                "\(GeoPoint.text(from.longitude)),\(GeoPoint.text(from.latitude));"
                + "\(GeoPoint.text(to.longitude)),\(GeoPoint.text(to.latitude))"
            return URL(string: "\(base)/route/v1/\(profile)/\(points)?overview=false&steps=false").map {
                HTTPClient.Request(url: $0)
            }
        case .valhalla:
            let costing =
                ["driving": "auto", "cycling": "bicycle", "walking": "pedestrian"][key.mode.rawValue] ?? "auto"
            let body = ValhallaRoute(
                locations: [
                    .init(lat: from.latitude, lon: from.longitude), .init(lat: to.latitude, lon: to.longitude),
                ],
                costing: costing)
            guard let url = URL(string: "\(base)/route"), let data = try? JSONEncoder().encode(body) else { return nil }
            return HTTPClient.Request(
                method: "POST", url: url, headers: ["Content-Type": "application/json"], body: data)
        }
    }

    /// Valhalla's `/route` request (https://valhalla.github.io/valhalla/api/turn-by-turn/api-reference/).
    struct ValhallaRoute: Encodable {
        struct Location: Encodable {
            var lat: Double
            var lon: Double
        }

        var locations: [Location]
        var costing: String
    }

    /// The seconds an answer gives, or why it gives none (the engine's own code and message where it sends one).
    static func seconds(in answer: HTTPClient.Answer, engine: TravelSettings.Routing.Engine) -> Result<
        Int64, HTTPClient.Failure
    > {
        let document = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any]
        guard (200..<300).contains(answer.status), let document else {
            let said = [document?["code"], document?["message"], document?["error"]].compactMap { $0 as? String }
            return .failure(
                .init(
                    reason: "HTTP \(answer.status)" + (said.isEmpty ? "" : ": " + said.joined(separator: ", "))))
        }
        let duration: Double?
        switch engine {
        case .osrm:
            guard document["code"] as? String == "Ok" else {
                return .failure(.init(reason: "\(document["code"] as? String ?? "no code"): no route"))
            }
            duration = ((document["routes"] as? [[String: Any]])?.first?["duration"] as? NSNumber)?.doubleValue
        case .valhalla:
            let trip = document["trip"] as? [String: Any]
            duration = ((trip?["summary"] as? [String: Any])?["time"] as? NSNumber)?.doubleValue
        }
        guard let duration, duration.isFinite else { return .failure(.init(reason: "an answer without a duration")) }
        guard duration >= 0, duration <= Double(longest) else {
            return .failure(.init(reason: "an absurd duration, \(duration) s; not believed"))
        }
        return .success(Int64(duration.rounded(.up)))
    }
}
