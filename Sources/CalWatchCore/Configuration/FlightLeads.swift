import Foundation

/// Leave-by for a flight: departure − airport lead − travel time (docs/design.md §4).
public struct FlightLeads: Sendable, Hashable {
    /// Seconds to be at the airport before a domestic departure.
    public var domestic: Int64 = 7200
    /// Seconds to be at the airport before an international departure.
    public var international: Int64 = 10_800
    /// Seconds to get to the airport.
    public var travelTime: Int64 = 2700
    /// Time to get ready before leaving for the airport (seconds), unless the flight's rule says.
    public var prep: Int64?
    /// The flight-status service asked about each flight (`flights.status`); `nil`: the calendar's times stand.
    public var status: FlightStatusSettings?

    public init() {}
}

/// `flights.status`: a flight-status service asked about each detected flight from a day before it leaves, within a
/// monthly budget of requests (the services' free tiers are small).
public struct FlightStatusSettings: Sendable, Hashable {
    public enum Provider: String, Sendable, Hashable, CaseIterable {
        case aerodatabox, aeroapi, aviationstack

        /// The service's address as its documentation gives it.
        public var defaultURL: String {
            switch self {
            case .aerodatabox: "https://aerodatabox.p.rapidapi.com"
            case .aeroapi: "https://aeroapi.flightaware.com/aeroapi"
            case .aviationstack: "https://api.aviationstack.com"
            }
        }

        /// Its name as its documentation writes it.
        public var name: String {
            switch self {
            case .aerodatabox: "AeroDataBox"
            case .aeroapi: "AeroAPI"
            case .aviationstack: "aviationstack"
            }
        }
    }

    public var provider: Provider
    /// The file holding the service's key, read whenever it is needed (a key replaced takes effect at once); never
    /// written anywhere.
    public var keyFile: String?
    public var url: String
    /// The most requests a month (UTC), counted across restarts.
    public var budget = 300

    public init(provider: Provider, keyFile: String? = nil, url: String? = nil) {
        self.provider = provider
        self.keyFile = keyFile
        self.url = url ?? provider.defaultURL
    }

    /// The address without a password, for every message and log.
    public var shownURL: String { ConnectionString(url).redacted }
}
