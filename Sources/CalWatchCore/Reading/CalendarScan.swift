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
        let (sources, failures) = SourceDiscovery.sources(for: paths)
        let emptyDirectories = SourceDiscovery.directoriesWithoutCalendars(paths, sources: sources)
        let input: [UInt8] = sources.contains { $0.path == "-" } ? standardInput() : []
        var problems = failures.map { CalendarProblem(severity: .error, path: $0.path, message: $0.reason) }
        problems += emptyDirectories.map {
            CalendarProblem(
                severity: .warning, path: $0,
                message: "no calendar files here (.ics items, Radicale items or a CalDAV .xml export)")
        }
        var occurrences: [Occurrence] = []
        var files: [ObjectIdentifier: String] = [:]
        var failed = failures.count

        var runs = ParallelRuns.map(sources) { run in
            var result = RunResult()
            for source in run {
                read(
                    source, input: input, failed: &result.failed, problems: &result.problems,
                    into: &result.occurrences, files: &result.files)
            }
            return result
        }
        if runs.count > 1 { occurrences.reserveCapacity(runs.reduce(0) { $0 + $1.occurrences.count }) }
        for index in runs.indices {
            // Taken out of the list, so that each run's occurrences are freed as soon as they are appended (a
            // single file's are taken over, not copied).
            let result = runs[index]
            runs[index] = RunResult()
            if runs.count == 1 { occurrences = result.occurrences } else { occurrences += result.occurrences }
            problems += result.problems
            failed += result.failed
            files.merge(result.files) { first, _ in first }
        }
        problems += DuplicateItems.resolve(&occurrences, files: files)
        return Result(
            occurrences: Self.sorted(occurrences), problems: problems, sourceCount: sources.count + failures.count,
            failedSourceCount: failed)
    }

    /// What one run of sources gave.
    private struct RunResult: Sendable {
        var occurrences: [Occurrence] = []
        var problems: [CalendarProblem] = []
        var failed = 0
        var files: [ObjectIdentifier: String] = [:]
    }

    /// Reads and expands one source; `files` learns which file each new occurrence source came from.
    private func read(
        _ source: CalendarSource, input: [UInt8], failed: inout Int, problems: inout [CalendarProblem],
        into occurrences: inout [Occurrence], files: inout [ObjectIdentifier: String]
    ) {
        let read = CalendarReader.read(source, standardInput: { input })
        if read.failed { failed += 1 }
        problems += read.problems
        let before = occurrences.count
        problems += Self.expand(read.calendars, of: source, options: options, into: &occurrences)
        var previous: ObjectIdentifier?
        for occurrence in occurrences[before...] {
            let id = ObjectIdentifier(occurrence.source)
            if id != previous { files[id] = source.path }
            previous = id
        }
    }

    /// Expands the calendars read from one source; returns the problems found, with file and line.
    public static func expand(
        _ calendars: [CalendarReader.ReadCalendar], of source: CalendarSource, options: ExpansionOptions,
        into occurrences: inout [Occurrence]
    ) -> [CalendarProblem] {
        var problems: [CalendarProblem] = []
        for calendar in calendars {
            let expansionProblems = OccurrenceExpander.expand(
                calendar.calendar, calendarName: calendar.name, scope: source.scope, options: options,
                into: &occurrences)
            if !expansionProblems.isEmpty {
                problems += locate(expansionProblems, origin: calendar.origin, source: source)
            }
        }
        return problems
    }

    /// Start, then uid, then calendar, then end, then recurrence id: a total order, so output is reproducible.
    ///
    /// Many occurrences share a start (every 09:00 meeting), so comparing their strings would dominate. Each
    /// distinct component is ranked once by (uid, calendar); occurrences are then sorted on integers and the
    /// permutation is applied in place, so no second array of occurrences exists at the peak.
    static func sorted(_ input: [Occurrence]) -> [Occurrence] {
        var occurrences = input
        var rankOf: [ObjectIdentifier: Int] = [:]
        var sources: [OccurrenceSource] = []
        var previous: ObjectIdentifier?
        for index in occurrences.indices {
            let id = ObjectIdentifier(occurrences[index].source)
            if id != previous && rankOf[id] == nil {
                rankOf[id] = sources.count
                sources.append(occurrences[index].source)
            }
            previous = id
        }
        let order = sources.indices.sorted { a, b in
            let left = sources[a]
            let right = sources[b]
            if left.component.uid != right.component.uid { return left.component.uid < right.component.uid }
            return left.calendar < right.calendar
        }
        var rank = [Int](repeating: 0, count: sources.count)
        for (position, index) in order.enumerated() { rank[index] = position }

        var keys: [(start: Int64, rank: Int, end: Int64, index: Int)] = []
        keys.reserveCapacity(occurrences.count)
        var lastID: ObjectIdentifier?
        var lastRank = 0
        for index in occurrences.indices {
            let id = ObjectIdentifier(occurrences[index].source)
            if id != lastID {
                lastRank = rank[rankOf[id]!]
                lastID = id
            }
            keys.append(
                (occurrences[index].start.secondsSinceEpoch, lastRank, occurrences[index].end.secondsSinceEpoch, index))
        }
        keys.sort { a, b in
            if a.start != b.start { return a.start < b.start }
            if a.rank != b.rank { return a.rank < b.rank }
            if a.end != b.end { return a.end < b.end }
            return a.index < b.index
        }
        var target = [Int](repeating: 0, count: keys.count)
        for (position, key) in keys.enumerated() { target[key.index] = position }
        for start in target.indices {
            while target[start] != start {
                let destination = target[start]
                occurrences.swapAt(start, destination)
                target.swapAt(start, destination)
            }
        }
        return occurrences
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
