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

    public init() {}
}
