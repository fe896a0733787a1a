/// Reads every source under some paths and expands them into one sorted list of occurrences.
///
/// A file that does not parse is reported and skipped; every other file is still read.
public struct CalendarScan: Sendable {
    /// The result of a scan.
    public struct Result: Sendable {
        /// Occurrences sorted by start, then uid, then calendar.
        public var occurrences: [Occurrence]
        /// Problems in reading order: errors lose data, warnings do not.
        public var problems: [CalendarProblem]
        /// How many sources were found and how many gave no calendar data.
        public var sourceCount: Int
        public var failedSourceCount: Int

        /// Whether nothing at all could be read (exit code 65).
        public var nothingReadable: Bool { sourceCount == 0 || failedSourceCount == sourceCount }
    }

    public var paths: [String]
    public var options: ExpansionOptions

    /// Creates a scan of some paths with expansion options.
    public init(paths: [String], options: ExpansionOptions) {
        self.paths = paths
        self.options = options
    }

    /// Runs the scan.
    public func run(standardInput: () -> [UInt8] = CalendarReader.readStandardInput) -> Result {
        let (sources, failures) = SourceDiscovery.sources(for: paths)
        var problems = failures.map { CalendarProblem(severity: .error, path: $0.path, message: $0.reason) }
        var occurrences: [Occurrence] = []
        var failed = failures.count
        for source in sources {
            let read = CalendarReader.read(source, standardInput: standardInput)
            if read.failed { failed += 1 }
            problems += read.problems
            for calendar in read.calendars {
                let (found, expansionProblems) = OccurrenceExpander.expand(
                    calendar.calendar, calendarName: calendar.name, options: options)
                occurrences += found
                if !expansionProblems.isEmpty {
                    problems += Self.locate(expansionProblems, origin: calendar.origin, source: source)
                }
            }
        }
        occurrences.sort(by: Self.scanOrder)
        return Result(
            occurrences: occurrences, problems: problems, sourceCount: sources.count + failures.count,
            failedSourceCount: failed)
    }

    /// Start, then uid, then calendar, then recurrence id: a total order, so output is reproducible.
    static func scanOrder(_ a: Occurrence, _ b: Occurrence) -> Bool {
        if a.start != b.start { return a.start < b.start }
        if a.uid != b.uid { return a.uid < b.uid }
        if a.calendar != b.calendar { return a.calendar < b.calendar }
        if a.end != b.end { return a.end < b.end }
        return (a.recurrenceID?.description ?? "") < (b.recurrenceID?.description ?? "")
    }

    /// Adds the path and, where the UID can be found in the file, the line.
    private static func locate(_ problems: [CalendarProblem], origin: String, source: CalendarSource) -> [CalendarProblem] {
        let bytes = source.path == "-" || source.format != .iCalendar ? nil : try? CalendarReader.readFile(source.path)
        return problems.map { problem in
            var located = problem
            located.path = origin
            if let bytes, let uid = problem.uid { located.line = SourceLines.line(ofUID: uid, in: bytes) }
            return located
        }
    }
}
