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
                if occurrences.isEmpty { occurrences = found } else { occurrences += found }
                if !expansionProblems.isEmpty {
                    problems += Self.locate(expansionProblems, origin: calendar.origin, source: source)
                }
            }
        }
        return Result(
            occurrences: Self.sorted(occurrences), problems: problems, sourceCount: sources.count + failures.count,
            failedSourceCount: failed)
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
        for occurrence in occurrences {
            let id = ObjectIdentifier(occurrence.source)
            if id != previous && rankOf[id] == nil {
                rankOf[id] = sources.count
                sources.append(occurrence.source)
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
        for (index, occurrence) in occurrences.enumerated() {
            let id = ObjectIdentifier(occurrence.source)
            if id != lastID {
                lastRank = rank[rankOf[id]!]
                lastID = id
            }
            keys.append((occurrence.start.secondsSinceEpoch, lastRank, occurrence.end.secondsSinceEpoch, index))
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
    private static func locate(_ problems: [CalendarProblem], origin: String, source: CalendarSource) -> [CalendarProblem] {
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
