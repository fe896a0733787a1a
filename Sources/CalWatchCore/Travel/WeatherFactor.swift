import Foundation

/// How much longer weather makes a drive: the Highway Capacity Manual 2010's capacity reductions for weather
/// (Exhibit 10-15, as FHWA-HOP-13-042 Appendix A, Table 33 reproduces it), the average reduction of the row the
/// forecast falls in, read as a travel-time factor 1 / (1 − reduction); and for low visibility the 12% speed
/// reduction measured on the Twin Cities freeways (Iowa State University, lib.dr.iastate.edu/rtd/18916). Conditions
/// come together (rain in the cold); the largest applies, not their product. For driving only: the studies are of
/// motor traffic, and a bicycle or a walk is not slowed by a capacity.
public struct WeatherFactor: Sendable, Hashable {
    /// The percentage added to the way's time.
    public var percent: Int
    /// What the forecast said and where the number comes from: "4.0 mm/h rain: HCM 2010 Exhibit 10-15, -7.24%
    /// capacity".
    public var reason: String

    /// A row of a table: the condition holds from `above` (exclusive) in its unit, with an average reduction.
    private struct Row {
        var above: Double
        var reduction: Double
        var range: String
    }

    /// Exhibit 10-15's rain rows, by in/h.
    private static let rain = [
        Row(above: 0.25, reduction: 14.13, range: "> 0.25 in/h"),
        Row(above: 0.10, reduction: 7.24, range: "0.10–0.25 in/h"),
        Row(above: 0, reduction: 2.01, range: "≤ 0.10 in/h"),
    ]
    /// Its snow rows, by in/h.
    private static let snow = [
        Row(above: 0.50, reduction: 22.43, range: "> 0.50 in/h"),
        Row(above: 0.10, reduction: 11.04, range: "0.10–0.50 in/h"),
        Row(above: 0.05, reduction: 8.66, range: "0.05–0.10 in/h"),
        Row(above: 0, reduction: 4.29, range: "≤ 0.05 in/h"),
    ]

    /// The factor for a drive in `conditions`; `nil` when the weather slows nothing (dry, mild, clear).
    public static func of(_ conditions: WeatherCache.Conditions) -> WeatherFactor? {
        var found: [(reduction: Double, reason: String)] = []
        let hcm = "HCM 2010 Exhibit 10-15"
        let inchesOfRain = conditions.rain / 25.4
        if conditions.rain >= 0.1, let row = rain.first(where: { inchesOfRain > $0.above }) {
            found.append(
                (
                    row.reduction,
                    "\(decimal(conditions.rain)) mm/h rain: \(hcm), rain \(row.range), −\(decimal(row.reduction, 2))% capacity"
                ))
        }
        let inchesOfSnow = conditions.snowfall / 2.54
        if conditions.snowfall >= 0.05, let row = snow.first(where: { inchesOfSnow > $0.above }) {
            found.append(
                (
                    row.reduction,
                    "\(decimal(conditions.snowfall)) cm/h snow: \(hcm), snow \(row.range), −\(decimal(row.reduction, 2))% capacity"
                ))
        }
        let fahrenheit = conditions.temperature * 9 / 5 + 32
        if fahrenheit < -4 {
            found.append((8.45, "\(decimal(conditions.temperature)) °C: \(hcm), below −4 °F, −8.45% capacity"))
        } else if fahrenheit < 34 {
            found.append((1.50, "\(decimal(conditions.temperature)) °C: \(hcm), −4 to 34 °F, −1.50% capacity"))
        } else if fahrenheit < 50 {
            found.append((1.07, "\(decimal(conditions.temperature)) °C: \(hcm), 34 to 50 °F, −1.07% capacity"))
        }
        if let visibility = conditions.visibility, visibility < 400 {
            found.append(
                (12, "\(Int(visibility)) m visibility: Twin Cities freeways (Iowa State), below 0.25 mi, −12% speed"))
        }
        guard let worst = found.max(by: { $0.reduction < $1.reduction }) else { return nil }
        let percent = Int((100 / (1 - worst.reduction / 100) - 100).rounded(.up))
        return WeatherFactor(percent: percent, reason: worst.reason)
    }

    /// `seconds` with the factor applied.
    public func applied(to seconds: Int64) -> Int64 { seconds + (seconds * Int64(percent) + 99) / 100 }

    /// One or `places` decimals, as a forecast is read.
    private static func decimal(_ value: Double, _ places: Int = 1) -> String {
        String(format: "%.\(places)f", value)
    }
}
