/// What to expand and how far.
public struct ExpansionOptions: Sendable {
    /// The occurrences wanted: those overlapping `[start, end)`.
    public var window: InstantWindow
    /// The zone for floating and all-day values.
    public var defaultZone: ZoneRules
    /// Whether VTODOs with a DUE time become occurrences (at the instant they are due).
    public var includeTodos: Bool
    /// Extra time to expand before the window, so that alarms *after* an occurrence can still fall inside it.
    public var lookBehind: Int64
    /// Extra time to expand after the window, so that alarms *before* an occurrence can still fall inside it.
    public var lookAhead: Int64
    /// At most this many instances of one series inside the window; a rule producing more is cut with a warning.
    public var maxInstancesPerSeries: Int
    /// At most this many steps of one rule's iterator (an open-ended FREQ=SECONDLY rule never exhausts memory or time).
    public var maxIterationsPerRule: Int
    /// At most this many steps for all the rules of one calendar together: two hundred rules that each use their
    /// whole budget took 49 s; the rules after it are not stepped (their series show DTSTART), with one warning.
    public var maxIterationsPerCalendar: Int

    /// Creates options with the defaults for everything but the window and zone.
    public init(
        window: InstantWindow, defaultZone: ZoneRules, includeTodos: Bool = false, lookBehind: Int64 = 0,
        lookAhead: Int64 = 0, maxInstancesPerSeries: Int = 100_000, maxIterationsPerRule: Int = 5_000_000,
        maxIterationsPerCalendar: Int = 20_000_000
    ) {
        self.window = window
        self.defaultZone = defaultZone
        self.includeTodos = includeTodos
        self.lookBehind = lookBehind
        self.lookAhead = lookAhead
        self.maxInstancesPerSeries = maxInstancesPerSeries
        self.maxIterationsPerRule = maxIterationsPerRule
        self.maxIterationsPerCalendar = maxIterationsPerCalendar
    }

    /// The window widened by the look-behind and look-ahead.
    public var expansionWindow: InstantWindow {
        InstantWindow(start: window.start.adding(seconds: -lookBehind), end: window.end.adding(seconds: lookAhead))
    }
}
