@_exported public import CalWatchCore

/// A scan of one fuzzed input, the way `calwatch scan` treats a file: read, expanded over a week, and its first
/// thousand occurrences classified. The step budgets are small, so their paths run often (calwatch's own budgets
/// are tested by the unit tests): the fuzzer seeks out rules that start long ago and use a whole budget, and with
/// calwatch's, instrumented, it ran 25 inputs a second instead of 700.
public enum FuzzedCalendar {
    /// Built once: its airport and airline tables are the slow part of a classifier.
    static let classifier = Classifier()
    static let options = ExpansionOptions(
        window: InstantWindow(
            start: Instant(secondsSinceEpoch: 1_803_859_200),  // 2027-03-01T00:00:00Z, the samples' week
            end: Instant(secondsSinceEpoch: 1_804_464_000)),  // 2027-03-08T00:00:00Z
        defaultZone: TimeZoneDatabase.rules(named: "Europe/Berlin") ?? .utc, includeTodos: true,
        lookBehind: 86_400, lookAhead: 86_400, maxIterationsPerRule: 2_000, maxIterationsPerCalendar: 10_000)

    public static func scan(_ bytes: [UInt8], format: CalendarSource.Format) {
        let source = CalendarSource(path: "fuzz", format: format, fallbackName: "fuzz")
        let read = CalendarReader.read(source, bytes: bytes)
        var occurrences: [Occurrence] = []
        _ = CalendarScan.expand(read.calendars, of: source, options: options, into: &occurrences)
        for occurrence in occurrences.prefix(1_000) {
            _ = classifier.facts(for: occurrence)
        }
        // As the daemon does when a file is read again: a classifier kept for a million inputs would hold them all.
        classifier.forget(occurrences.prefix(1_000).map(\.source))
    }
}
