import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The path of a fixture shipped with the tests.
func fixture(_ name: String) -> String {
    Bundle.module.url(forResource: "Fixtures", withExtension: nil)!.appendingPathComponent(name).path
}

/// An instant from ISO 8601 text in UTC (`2025-03-24T08:30:00Z`).
func utc(_ text: String) -> Instant {
    try! TimeArgument.parse(text, zone: .utc, now: Instant(secondsSinceEpoch: 0))
}

/// Scans paths over a window and returns the result; the zone defaults to Europe/Berlin.
func scan(
    _ paths: [String], from: String, to: String, zone: String = "Europe/Berlin", todos: Bool = false,
    lookAround: Int64 = 0, standardInput: [UInt8] = []
) -> CalendarScan.Result {
    let rules = TimeZoneDatabase.rules(named: zone)!
    let window = InstantWindow(
        start: try! TimeArgument.parse(from, zone: rules, now: Instant(secondsSinceEpoch: 0)),
        end: try! TimeArgument.parse(to, zone: rules, now: Instant(secondsSinceEpoch: 0)))
    let options = ExpansionOptions(
        window: window, defaultZone: rules, includeTodos: todos, lookBehind: lookAround, lookAhead: lookAround)
    return CalendarScan(paths: paths, options: options).run(standardInput: { standardInput })
}

/// `uid start end` lines, the comparison a user (or another implementation) would make.
func triples(_ result: CalendarScan.Result, uid: String? = nil) -> [String] {
    result.occurrences.filter { uid == nil || $0.uid == uid }.map { "\($0.uid) \($0.start) \($0.end)" }
}

/// The starts of one UID's occurrences.
func starts(_ result: CalendarScan.Result, uid: String) -> [String] {
    result.occurrences.filter { $0.uid == uid }.map { $0.start.description }
}
