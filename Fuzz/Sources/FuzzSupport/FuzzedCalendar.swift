@_exported public import CalWatchCore

/// A scan of one fuzzed input, the way `calwatch scan` treats a file: read, expanded over a year around a fixed
/// day, and every occurrence classified.
public enum FuzzedCalendar {
    /// Built once: its airport and airline tables are the slow part of a classifier.
    static let classifier = Classifier()
    static let options = ExpansionOptions(
        window: InstantWindow(
            start: Instant(secondsSinceEpoch: 1_767_225_600),  // 2026-01-01T00:00:00Z
            end: Instant(secondsSinceEpoch: 1_798_761_600)),  // 2027-01-01T00:00:00Z
        defaultZone: TimeZoneDatabase.rules(named: "Europe/Berlin") ?? .utc, includeTodos: true,
        lookBehind: 86_400, lookAhead: 86_400)

    public static func scan(_ bytes: [UInt8], format: CalendarSource.Format) {
        let source = CalendarSource(path: "fuzz", format: format, fallbackName: "fuzz")
        let read = CalendarReader.read(source, bytes: bytes)
        var occurrences: [Occurrence] = []
        _ = CalendarScan.expand(read.calendars, of: source, options: options, into: &occurrences)
        for occurrence in occurrences.prefix(1_000) {
            _ = classifier.facts(for: occurrence)
        }
    }
}
