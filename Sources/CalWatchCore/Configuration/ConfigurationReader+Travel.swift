import Foundation
import Yams

/// `places:`, `travel:` and `flights:`: when to leave, and for where.
extension ConfigurationReader {
    /// `places:`: each a name, and any of its point (`at: { lat, lon }`), LOCATION patterns (`match`), a fixed
    /// travel time and the hours the user is there.
    func readPlaces(_ node: Node) -> [PlaceSettings] {
        var places: [PlaceSettings] = []
        for (index, entry) in list(node, at: "places", single: false).enumerated() {
            let at = "places[\(index)]"
            guard
                let fields = mapping(entry.node, at: at, known: ["name", "at", "match", "travelTime", "hours", "prep"])
            else { continue }
            guard let (_, nameNode) = fields["name"], let name = string(nameNode, at: at + ".name"),
                !name.trimmingCharacters(in: .whitespaces).isEmpty, name.count <= 200
            else {
                note(entry.node, at, "needs a name of 1 to 200 characters, such as Home or Office")
                continue
            }
            var place = PlaceSettings(name: name)
            for (key, (_, value)) in fields {
                let path = at + "." + key
                switch key {
                case "at":
                    guard let point = mapping(value, at: path, known: ["lat", "lon"]) else { break }
                    let degrees = ["lat", "lon"].map { key in
                        point[key].flatMap { string($0.1, at: path + "." + key) }.flatMap(Double.init)
                    }
                    if let latitude = degrees[0], let longitude = degrees[1],
                        let geo = GeoPoint(latitude: latitude, longitude: longitude)
                    {
                        place.at = geo
                    } else {
                        note(
                            value, path,
                            "should be { lat: 52.5208, lon: 13.4094 }: degrees, lat -90 to 90, lon -180 to 180")
                    }
                case "match":
                    place.match = list(value, at: path).compactMap { string($0.node, at: $0.key) }.filter {
                        !$0.isEmpty
                    }
                case "travelTime": place.travelTime = duration(value, at: path, atMost: Limits.flightLead)
                case "prep": place.prep = duration(value, at: path, atMost: Limits.prep)
                case "hours":
                    guard let text = string(value, at: path) else { break }
                    let ends = text.split(separator: "-").map { String($0).trimmingCharacters(in: .whitespaces) }
                    // `24:00` ends a span at midnight (ISO 8601 and OpenStreetMap's opening hours allow it), so
                    // `00:00-24:00` is always.
                    if ends.count == 2, let from = Self.minutes(ends[0]),
                        let to = ends[1] == "24:00" ? 24 * 60 : Self.minutes(ends[1]), from != to
                    {
                        place.hours = .init(from: from, to: to)
                    } else {
                        note(
                            value, path,
                            "'\(text)' is not a span of clock hours; write it like 18:00-08:00, or 00:00-24:00 for "
                                + "always")
                    }
                default: break
                }
            }
            places.append(place)
        }
        return places
    }

    /// `10%` or a duration, added to a travel time.
    func buffer(_ node: Node, at path: String) -> TravelSettings.Buffer? {
        guard let text = string(node, at: path) else { return nil }
        if text.hasSuffix("%"), let percent = Int(text.dropLast()), (0...200).contains(percent) {
            return .percent(percent)
        }
        return duration(node, at: path, atMost: Limits.flightLead).map { .seconds($0) }
    }

    /// `travel:`: the mode, a buffer (`10%` or a duration) on a routing engine's answers, and the engine.
    func readTravel(_ node: Node, into travel: inout TravelSettings) {
        guard
            let keys = mapping(
                node, at: "travel",
                known: [
                    "mode", "buffer", "fromPreviousWithin", "replanAfter", "routing", "geocoder", "prep", "estimate",
                    "weather",
                ])
        else { return }
        for (key, (_, value)) in keys {
            let path = "travel." + key
            switch key {
            case "mode": if let mode = choice(value, at: path, of: TravelSettings.Mode.self) { travel.mode = mode }
            case "buffer": if let buffer = buffer(value, at: path) { travel.buffer = buffer }
            case "geocoder":
                guard let fields = mapping(value, at: path, known: ["url", "userAgent", "cache"]) else { break }
                guard let (_, urlNode) = fields["url"], let url = string(urlNode, at: path + ".url") else {
                    note(
                        value, path,
                        "needs the url of a Nominatim instance, such as https://nominatim.openstreetmap.org")
                    break
                }
                guard isWebAddress(url, node: urlNode, at: path + ".url") else { break }
                guard let (_, agentNode) = fields["userAgent"], let agent = string(agentNode, at: path + ".userAgent"),
                    agent.contains(where: \.isLetter), agent.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 32 })
                else {
                    note(
                        value, path + ".userAgent",
                        "is needed: a geocoder is asked with a User-Agent naming you, as Nominatim's usage policy asks, "
                            + "such as userAgent: \"calwatch (you@example.com)\"")
                    break
                }
                var geocoder = TravelSettings.Geocoder(url: url, userAgent: agent)
                if let (_, cacheNode) = fields["cache"] {
                    geocoder.cachePath = self.path(cacheNode, at: path + ".cache")
                }
                travel.geocoder = geocoder
            case "fromPreviousWithin":
                if let seconds = duration(value, at: path, atMost: 86_400) { travel.fromPreviousWithin = seconds }
            case "prep": travel.prep = duration(value, at: path, atMost: Limits.prep)
            case "weather":
                guard let fields = mapping(value, at: path, known: ["provider", "url", "requestsPerHour"]) else {
                    break
                }
                var weather = TravelSettings.Weather()
                if let (_, node) = fields["provider"],
                    let provider = choice(node, at: path + ".provider", of: TravelSettings.Weather.Provider.self)
                {
                    weather.provider = provider
                }
                if let (_, node) = fields["url"], let url = string(node, at: path + ".url") {
                    guard isWebAddress(url, node: node, at: path + ".url") else { break }
                    weather.url = url
                }
                if let (_, node) = fields["requestsPerHour"] {
                    guard let count = integer(node, at: path + ".requestsPerHour", in: 1...3600) else { break }
                    weather.requestsPerHour = count
                }
                travel.weather = weather
            case "estimate":
                guard let fields = mapping(value, at: path, known: ["margin"]) else { break }
                if let (_, node) = fields["margin"], let margin = buffer(node, at: path + ".margin") {
                    travel.estimateMargin = margin
                }
            case "replanAfter":
                if let seconds = duration(value, at: path, atMost: 86_400) { travel.replanAfter = seconds }
            case "routing":
                guard
                    let fields = mapping(
                        value, at: path, known: ["engine", "url", "requestsPerHour", "askAgainBefore"])
                else { break }
                guard let (_, engineNode) = fields["engine"],
                    let engine = choice(engineNode, at: path + ".engine", of: TravelSettings.Routing.Engine.self),
                    let (_, urlNode) = fields["url"], let url = string(urlNode, at: path + ".url")
                else {
                    note(value, path, "needs an engine (osrm or valhalla) and its url, such as http://127.0.0.1:5000")
                    break
                }
                guard isWebAddress(url, node: urlNode, at: path + ".url") else { break }
                var routing = TravelSettings.Routing(engine: engine, url: url)
                if let (_, budget) = fields["requestsPerHour"],
                    let count = integer(budget, at: path + ".requestsPerHour")
                {
                    if (1...3600).contains(count) {
                        routing.requestsPerHour = count
                    } else {
                        note(budget, path + ".requestsPerHour", "should be 1 to 3600")
                    }
                }
                if let (_, again) = fields["askAgainBefore"],
                    let seconds = duration(again, at: path + ".askAgainBefore", atMost: 86_400)
                {
                    routing.askAgainBefore = seconds
                }
                travel.routing = routing
            default: break
            }
        }
    }

    /// Whether `url` is an http or https address with a host; noted at `path` when it is not.
    func isWebAddress(_ url: String, node: Node, at path: String) -> Bool {
        if let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
            parsed.host != nil
        {
            return true
        }
        note(node, path, "'\(url)' is not an http or https address")
        return false
    }

    /// `HH:MM` as minutes after midnight, `nil` when it is not a time of day.
    static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, parts[1].count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]),
            (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        return hour * 60 + minute
    }

    func readFlights(_ node: Node, into flights: inout FlightLeads) {
        guard let keys = mapping(node, at: "flights", known: ["airportLead", "travelTime", "prep", "status"]) else {
            return
        }
        for (key, (_, value)) in keys {
            switch key {
            case "airportLead":
                guard let leads = mapping(value, at: "flights.airportLead", known: ["domestic", "international"])
                else { break }
                for (scope, (_, leadNode)) in leads {
                    guard
                        let seconds = duration(leadNode, at: "flights.airportLead." + scope, atMost: Limits.flightLead)
                    else { continue }
                    if scope == "domestic" { flights.domestic = seconds } else { flights.international = seconds }
                }
            case "travelTime":
                if let seconds = duration(value, at: "flights.travelTime", atMost: Limits.flightLead) {
                    flights.travelTime = seconds
                }
            case "prep": flights.prep = duration(value, at: "flights.prep", atMost: Limits.prep)
            case "status": flights.status = flightStatus(value)
            default: break
            }
        }
    }

    /// `flights.status: {provider: aerodatabox, keyFile: ~/.config/calwatch/aerodatabox.key, budget: 300/month}`.
    private func flightStatus(_ node: Node) -> FlightStatusSettings? {
        let path = "flights.status"
        guard let fields = mapping(node, at: path, known: ["provider", "keyFile", "url", "budget"]) else { return nil }
        guard let (_, providerNode) = fields["provider"],
            let provider = choice(providerNode, at: path + ".provider", of: FlightStatusSettings.Provider.self)
        else {
            note(node, path, "needs a provider: aerodatabox, aeroapi or aviationstack")
            return nil
        }
        var settings = FlightStatusSettings(provider: provider)
        if let (_, keyNode) = fields["keyFile"] {
            settings.keyFile = self.path(keyNode, at: path + ".keyFile")
        } else {
            note(node, path, "needs keyFile: the file holding the \(provider.name) key")
        }
        if let (_, urlNode) = fields["url"], let url = string(urlNode, at: path + ".url"),
            isWebAddress(url, node: urlNode, at: path + ".url")
        {
            settings.url = url
        }
        if let (_, budgetNode) = fields["budget"], let text = string(budgetNode, at: path + ".budget") {
            // `300/month`, as the services write their plans, or the number alone.
            let number = text.hasSuffix("/month") ? String(text.dropLast(6)) : text
            if let count = Int(number.trimmingCharacters(in: .whitespaces)), (1...1_000_000).contains(count) {
                settings.budget = count
            } else {
                note(budgetNode, path + ".budget", "'\(text)' is not a number of requests a month, such as 300/month")
            }
        }
        return settings
    }
}
