public import Foundation

/// A geocoder's answers by LOCATION text, shared like `RouteCache` between planning (which reads them and asks for
/// those it lacks) and the service that asks the geocoder; kept on disk between runs (`encoded`, `init(data:)`) so
/// an address is asked once, not once per start. "No such place" is an answer too, and kept.
public final class GeocodeCache: Sendable {
    /// The most addresses kept: a calendar of strangers' text must not grow the file without end.
    static let largest = 10_000

    private struct State {
        /// A point, or `nil` for an address the geocoder does not know.
        var answers: [String: GeoPoint?] = [:]
        /// In the order stored, to drop the oldest past `largest`.
        var order: [String] = []
        var wanted = WantedKeys<String>()
    }
    private let state = Locked(State())

    public init() {}

    /// The answers a file holds (`encoded` wrote it); an unreadable file gives an empty cache.
    public convenience init(data: Data) {
        self.init()
        guard let entries = try? JSONDecoder().decode([Entry].self, from: data) else { return }
        state.withLock { state in
            for entry in entries.suffix(Self.largest) {
                let point = entry.lat.flatMap { lat in entry.lon.flatMap { GeoPoint(latitude: lat, longitude: $0) } }
                if state.answers.updateValue(point, forKey: entry.q) == nil { state.order.append(entry.q) }
            }
        }
    }

    private struct Entry: Codable {
        var q: String
        var lat: Double?
        var lon: Double?
    }

    /// The answers, oldest first, as a file keeps them.
    public func encoded() -> Data {
        let entries = state.withLock { state in
            state.order.map { query in
                let point = state.answers[query] ?? nil
                return Entry(q: query, lat: point?.latitude, lon: point?.longitude)
            }
        }
        return (try? JSONEncoder().encode(entries)) ?? Data("[]".utf8)
    }

    /// The text a LOCATION is asked and kept by: its first line, spaces collapsed, at most 200 scalars; `nil` for
    /// one that is not an address (a link, a mail address, a meeting service, "online").
    public static func query(_ location: String) -> String? {
        let query = TravelTimes.oneLine(location).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let lower = query.lowercased()
        guard query.count >= 3, query.contains(where: \.isLetter), !lower.contains("://"), !lower.contains("www."),
            !lower.contains("@"), !notPlaces.contains(lower)
        else { return nil }
        return services.contains { lower.contains($0) } ? nil : query
    }

    /// The meeting services' names and hosts: a LOCATION naming one is not an address. Made once, not per call
    /// (planning asks for every occurrence with a LOCATION and no point).
    static let services = MeetingProvider.all.flatMap { $0.names + $0.hosts }

    /// LOCATIONs that say there is no place.
    static let notPlaces: Set<String> = [
        "online", "virtual", "remote", "tbd", "tba", "n/a", "phone", "call", "video call", "conference call",
        "telephone", "anywhere", "home office",
    ]

    /// The point for `location`: `nil` when it is not an address, the geocoder does not know it, or it has not
    /// been asked yet (then it is wanted, if `asking`).
    public func point(for location: String, asking: Bool = true) -> GeoPoint? {
        guard let query = Self.query(location) else { return nil }
        let (point, bell) = state.withLock { state -> (GeoPoint?, (@Sendable () -> Void)?) in
            if let answer = state.answers[query] { return (answer, nil) }
            return (nil, asking ? state.wanted.want(query) : nil)
        }
        bell?()
        return point
    }

    /// The addresses wanted, oldest first.
    public func takeWanted() -> [String] { state.withLock { $0.wanted.take() } }

    /// Puts addresses taken but not asked yet back, without ringing.
    public func giveBack(_ queries: [String]) { state.withLock { $0.wanted.giveBack(queries) } }

    /// Keeps the geocoder's answer for `query` (`nil`: no such place).
    public func store(_ point: GeoPoint?, for query: String) {
        state.withLock { state in
            state.wanted.done(query)
            if state.answers.updateValue(point, forKey: query) == nil { state.order.append(query) }
            if state.order.count > Self.largest {
                for old in state.order.prefix(state.order.count - Self.largest) { state.answers[old] = nil }
                state.order.removeFirst(state.order.count - Self.largest)
            }
        }
    }

    /// The geocoder could not be asked about `query` (down, refused): planning may want it again.
    public func unanswered(_ query: String) { state.withLock { $0.wanted.done(query) } }

    /// Called whenever an address becomes wanted.
    public func onWanted(_ bell: @escaping @Sendable () -> Void) { state.withLock { $0.wanted.bell = bell } }
}
