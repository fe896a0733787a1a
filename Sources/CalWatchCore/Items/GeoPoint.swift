import Foundation

/// A point on the earth in degrees (WGS 84), as `GEO`, a `geo:` URI or `places:` give it.
public struct GeoPoint: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double

    /// A point, `nil` outside the ranges a latitude and a longitude can have.
    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The point halfway to `other` in degrees (near enough for the ways of a day).
    public func midpoint(to other: GeoPoint) -> GeoPoint {
        GeoPoint(latitude: (latitude + other.latitude) / 2, longitude: (longitude + other.longitude) / 2) ?? self
    }

    /// Great-circle distance in kilometres (a sphere of 6,371 km).
    public func kilometres(to other: GeoPoint) -> Double {
        Self.kilometres(latitude, longitude, other.latitude, other.longitude)
    }

    /// Great-circle distance in kilometres between two points given in degrees.
    static func kilometres(_ latitude1: Double, _ longitude1: Double, _ latitude2: Double, _ longitude2: Double)
        -> Double
    {
        let radians = Double.pi / 180
        let (a, b) = (latitude1 * radians, latitude2 * radians)
        let deltaLatitude = b - a
        let deltaLongitude = (longitude2 - longitude1) * radians
        let h =
            sin(deltaLatitude / 2) * sin(deltaLatitude / 2) + cos(a) * cos(b) * sin(deltaLongitude / 2)
            * sin(deltaLongitude / 2)
        return 2 * 6371 * asin(min(1, h.squareRoot()))
    }

    /// RFC 5545's `GEO` value, `52.5208;13.4094` (Google and Outlook write it so).
    public init?(icalGeo text: String) {
        let parts = text.split(separator: ";", omittingEmptySubsequences: false)
        guard parts.count == 2, let latitude = Self.degrees(parts[0]), let longitude = Self.degrees(parts[1]) else {
            return nil
        }
        self.init(latitude: latitude, longitude: longitude)
    }

    /// A `geo:` URI (RFC 5870), `geo:52.5208,13.4094` with perhaps an altitude and `;u=…` parameters after it, as
    /// Apple writes `X-APPLE-STRUCTURED-LOCATION`.
    public init?(geoURI text: String) {
        guard text.lowercased().hasPrefix("geo:") else { return nil }
        let coordinates = text.dropFirst(4).prefix { $0 != ";" }.split(separator: ",", omittingEmptySubsequences: false)
        guard coordinates.count == 2 || coordinates.count == 3, let latitude = Self.degrees(coordinates[0]),
            let longitude = Self.degrees(coordinates[1])
        else { return nil }
        self.init(latitude: latitude, longitude: longitude)
    }

    private static func degrees(_ text: Substring) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        // Plain decimal degrees only: no exponent, no `nan`, no hex, which Double's parser would take.
        guard !trimmed.isEmpty, trimmed.count <= 24,
            trimmed.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-" || $0 == "+") })
        else { return nil }
        return Double(trimmed)
    }

    /// At most six decimals (about 10 cm), without trailing zeros.
    package static func text(_ degrees: Double) -> String {
        var text = String((degrees * 1_000_000).rounded() / 1_000_000)
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }
}

extension GeoPoint: CustomStringConvertible {
    /// `52.53864,13.40956`, as a `geo:` URI writes it.
    public var description: String { "\(Self.text(latitude)),\(Self.text(longitude))" }
}
