import Foundation

/// What the routing engine said about each way before, by hour of the week: the estimate when the engine has no
/// answer for a way now (down, over its budget, not asked yet). The last few answers of each hour are kept and their
/// median taken, so one jam does not become the usual time. Kept on disk between runs (`encoded`, `init(data:)`),
/// bounded in ways and in answers per hour.
struct RouteHistory: Sendable {
    /// Answers kept per way and hour of the week.
    static let answersPerHour = 5
    /// Ways kept: the oldest answered are dropped first.
    static let largest = 2_000

    /// A way's answers by hour of the week (0: Thursday 00:00 UTC, the epoch's weekday), oldest first.
    private var ways: [RouteCache.Key.Way: [Int: [Int64]]] = [:]
    /// Ways in the order last answered.
    private var order: [RouteCache.Key.Way] = []

    init() {}

    /// The hour of the week of an hour since the epoch.
    static func hourOfWeek(_ hour: Int64) -> Int { Int(hour % 168) }

    mutating func record(_ seconds: Int64, for key: RouteCache.Key) {
        let way = key.way
        var hours = ways[way] ?? [:]
        var answers = hours[Self.hourOfWeek(key.hour), default: []]
        answers.append(seconds)
        hours[Self.hourOfWeek(key.hour)] = Array(answers.suffix(Self.answersPerHour))
        ways[way] = hours
        order.removeAll { $0 == way }
        order.append(way)
        if order.count > Self.largest {
            for old in order.prefix(order.count - Self.largest) { ways[old] = nil }
            order.removeFirst(order.count - Self.largest)
        }
    }

    /// The median of the way's answers at its hour of the week, else at the nearest hour of the week that has any,
    /// with how many answers it is of; `nil` for a way never answered.
    func usual(for key: RouteCache.Key) -> (seconds: Int64, answers: Int)? {
        guard let hours = ways[key.way], !hours.isEmpty else { return nil }
        let wanted = Self.hourOfWeek(key.hour)
        func distance(_ hour: Int) -> Int { min(abs(hour - wanted), 168 - abs(hour - wanted)) }
        guard let nearest = hours.keys.min(by: { (distance($0), $0) < (distance($1), $1) }),
            let answers = hours[nearest], !answers.isEmpty
        else { return nil }
        let sorted = answers.sorted()
        let median =
            sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        return (median, answers.count)
    }

    private struct Entry: Codable {
        var from: [Double]
        var to: [Double]
        var mode: String
        /// Hour of the week → answers in seconds.
        var hours: [String: [Int64]]
    }

    /// The history a file holds; an unreadable file (or entry) gives nothing for it.
    init(data: Data) {
        guard let entries = try? JSONDecoder().decode([Entry].self, from: data) else { return }
        for entry in entries.suffix(Self.largest) {
            guard entry.from.count == 2, entry.to.count == 2,
                let origin = GeoPoint(latitude: entry.from[0], longitude: entry.from[1]),
                let destination = GeoPoint(latitude: entry.to[0], longitude: entry.to[1]),
                let mode = TravelSettings.Mode(rawValue: entry.mode)
            else { continue }
            let way = RouteCache.Key.Way(origin: origin, destination: destination, mode: mode)
            var hours: [Int: [Int64]] = [:]
            for (hour, answers) in entry.hours {
                guard let hour = Int(hour), (0..<168).contains(hour) else { continue }
                let valid = answers.filter { (0...2 * 86_400).contains($0) }.suffix(Self.answersPerHour)
                if !valid.isEmpty { hours[hour] = Array(valid) }
            }
            guard !hours.isEmpty, ways.updateValue(hours, forKey: way) == nil else { continue }
            order.append(way)
        }
    }

    /// The history as a file keeps it, the ways oldest first.
    func encoded() -> Data {
        let entries = order.compactMap { way -> Entry? in
            guard let hours = ways[way] else { return nil }
            return Entry(
                from: [way.origin.latitude, way.origin.longitude],
                to: [way.destination.latitude, way.destination.longitude], mode: way.mode.rawValue,
                hours: Dictionary(uniqueKeysWithValues: hours.map { (String($0.key), $0.value) }))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(entries)) ?? Data("[]".utf8)
    }
}
