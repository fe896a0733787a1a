import CalWatchCore
import CalWatchPostgres
import CalWatchRuntime
import Foundation

/// calwatch's release and the data it carries, as `calwatch --version` prints them.
enum CalwatchVersion {
    /// The release. The Makefile reads this line for the Debian package's version: keep it one string literal.
    static let release = "0.1.0"

    /// The release, then each data table with its version, licence and size, and the libraries
    /// it runs with: what a bug report needs to say which airports or zone rules calwatch knew.
    static var report: String {
        let rows = [
            ("airports", "\(AirportDatabase.dataSource), \(AirportDatabase.shared.count) airports"),
            ("airlines", "\(AirlineTable.dataSource), \(AirlineTable.shared.count) designators"),
            ("flight decision", "\(FlightWeights.dataSource), \(FlightWeights.shared.count) weights"),
            ("time-zone names", "\(WindowsZones.dataSource), \(WindowsZones.count) Windows names"),
            ("time-zone rules", "tz \(TimeZone.timeZoneDataVersion), from the ICU data Foundation carries"),
            ("libical", LibICal.version),
            ("SQLite", SQLiteConnection.libraryVersion),
            ("libpq", PostgresConnection.libraryVersion),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        let lines = rows.map { name, value in
            "  " + name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value
        }
        return (["calwatch \(release)"] + lines).joined(separator: "\n")
    }
}
