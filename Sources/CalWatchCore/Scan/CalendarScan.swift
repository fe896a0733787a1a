import Foundation

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
    ///
    /// Many small files (a vdir) are read on all cores: each file is parsed and expanded on its own, and the
    /// results are joined in source order, so the output is the same as a sequential run.
    public func run(standardInput: () -> [UInt8] = CalendarReader.readStandardInput) -> Result {
        var (merge, result) = runMerging(standardInput: standardInput)
        result.occurrences = merge.all()
        return result
    }

    /// `run` with the occurrences left in `merge`, to be taken in order as they are written (`result.occurrences`
    /// is empty): a large calendar's scan then never holds one sorted array of them all.
    public func runMerging(standardInput: () -> [UInt8] = CalendarReader.readStandardInput)
        -> (merge: OccurrenceMerge, result: Result)
    {
        let (sources, failures) = SourceDiscovery.sources(for: paths)
        let emptyDirectories = SourceDiscovery.directoriesWithoutCalendars(paths, sources: sources)
        let input: [UInt8] = sources.contains { $0.path == "-" } ? standardInput() : []
        var problems = failures.map { CalendarProblem(severity: .error, path: $0.path, message: $0.reason) }
        problems += emptyDirectories.map {
            CalendarProblem(
                severity: .warning, path: $0,
                message: "no calendar files here (.ics items, Radicale items or a CalDAV .xml export)")
        }
        var blocks: [OccurrenceBlock] = []
        var files: [String] = []
        var failed = failures.count

        var runs = ParallelRuns.map(sources) { run in
            var result = RunResult()
            for source in run {
                read(
                    source, input: input, failed: &result.failed, problems: &result.problems,
                    into: &result.blocks, files: &result.files)
            }
            return result
        }
        blocks.reserveCapacity(runs.reduce(0) { $0 + $1.blocks.count })
        for index in runs.indices {
            // Taken out of the list, so that each run's blocks are let go as soon as they are appended.
            let result = runs[index]
            runs[index] = RunResult()
            blocks += result.blocks
            problems += result.problems
            failed += result.failed
            files += result.files
        }
        problems += DuplicateItems.resolve(&blocks, files: files)
        let result = Result(
            occurrences: [], problems: problems, sourceCount: sources.count + failures.count,
            failedSourceCount: failed)
        return (OccurrenceMerge(blocks: blocks), result)
    }

    /// What one run of sources gave.
    private struct RunResult: Sendable {
        var blocks: [OccurrenceBlock] = []
        var problems: [CalendarProblem] = []
        var failed = 0
        /// The file each block came from.
        var files: [String] = []
    }

    /// Reads and expands one source into a block per item; `files` learns the file of each.
    private func read(
        _ source: CalendarSource, input: [UInt8], failed: inout Int, problems: inout [CalendarProblem],
        into blocks: inout [OccurrenceBlock], files: inout [String]
    ) {
        let read = CalendarReader.read(source, standardInput: { input })
        if read.failed { failed += 1 }
        problems += read.problems
        problems += Self.expand(read.calendars, of: source, options: options) { item in
            guard !item.isEmpty else { return }
            blocks.append(OccurrenceBlock(item))
            files.append(source.path)
        }
    }

    /// Expands the calendars read from one source; returns the problems found, with file and line.
    public static func expand(
        _ calendars: [CalendarReader.ReadCalendar], of source: CalendarSource, options: ExpansionOptions,
        into occurrences: inout [Occurrence]
    ) -> [CalendarProblem] {
        expand(calendars, of: source, options: options) { occurrences += $0 }
    }

    /// Expands the calendars read from one source, handing `item` each item's occurrences; returns the problems
    /// found, with file and line.
    static func expand(
        _ calendars: [CalendarReader.ReadCalendar], of source: CalendarSource, options: ExpansionOptions,
        item: ([Occurrence]) -> Void
    ) -> [CalendarProblem] {
        var problems: [CalendarProblem] = []
        for calendar in calendars {
            let expansionProblems = OccurrenceExpander.expand(
                calendar.calendar, calendarName: calendar.name, scope: source.scope, options: options, item: item)
            if !expansionProblems.isEmpty {
                problems += locate(expansionProblems, origin: calendar.origin, source: source)
            }
        }
        return problems
    }

    /// Adds the path and, where the UID can be found in the file, the line.
    private static func locate(_ problems: [CalendarProblem], origin: String, source: CalendarSource)
        -> [CalendarProblem]
    {
        let needsSearch = problems.contains { $0.line == nil && $0.uid != nil }
        let bytes =
            !needsSearch || source.path == "-" || source.format != .iCalendar
            ? nil : try? CalendarReader.readFile(source.path)
        return problems.map { problem in
            var located = problem
            located.path = origin
            if located.line == nil, let bytes, let uid = problem.uid {
                located.line = SourceLines.line(ofUID: uid, in: bytes)
            }
            return located
        }
    }
}
