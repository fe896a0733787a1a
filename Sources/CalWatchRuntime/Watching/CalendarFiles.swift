public import CalWatchCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The calendar files under the configured paths as the daemon holds them: each file read once per version.
///
/// A file is looked at again only when its size, modification time or inode changed, and parsed again only when
/// its content did. A file caught half-written (no closing `END:VCALENDAR`, or no calendar at all) is not used
/// at once: it is looked at again after `settle`, and only if it is still the same then is it reported, once;
/// the version read before stays in effect. A new file that never completes is used as far as it reads, as
/// `scan` would.
public final class CalendarFiles {
    /// What a look at the files changed.
    public struct Changes: Sendable {
        /// Files whose calendars in effect changed (new files too), with the group their occurrences go under.
        public var changed:
            [(source: CalendarSource, origin: PlanningLoop.Origin, calendars: [CalendarReader.ReadCalendar])] = []
        /// Files gone, or no longer items.
        public var removed: [(path: String, origin: PlanningLoop.Origin)] = []
        /// Problems not reported before.
        public var problems: [CalendarProblem] = []
        /// Files caught incomplete, to be looked at again after `settle`.
        public var unsettled: [String] = []
        /// Files read and parsed by this look (the rest were unchanged).
        public var parsed = 0

        public var isEmpty: Bool { changed.isEmpty && removed.isEmpty }
    }

    /// What identifies a version of a file without reading it.
    struct Stamp: Equatable, Sendable {
        var size: Int64
        var modified: Int64
        var inode: UInt64
        var device: UInt64
    }

    private struct Entry: Sendable {
        /// What the file shares with the others of its folder as a source (`CalendarFiles.shared`).
        var shared: Int32
        var origin: PlanningLoop.Origin
        /// The file could not be read, and that was reported (it is tried again at every look).
        var unreadable = false
        /// Of the version in effect (or of the incomplete one last seen, while it settles).
        var stamp: Stamp?
        var content: EventID?
        /// The calendars in effect; `nil` while nothing usable has been read.
        var held: Held?
        /// What is known of versions not in effect, which few files have: kept apart, so that the others do not
        /// carry its room.
        private var doubts: Boxed<Doubts>?

        private struct Doubts: Sendable {
            var unsettled: EventID?
            var reported: EventID?
        }

        init(shared: Int32, origin: PlanningLoop.Origin) {
            self.shared = shared
            self.origin = origin
        }

        /// Content seen incomplete once, waiting to settle.
        var unsettled: EventID? {
            get { doubts?.value.unsettled }
            set { change { $0.unsettled = newValue } }
        }
        /// Content whose problems were reported (`nil` when it had none).
        var reported: EventID? {
            get { doubts?.value.reported }
            set { change { $0.reported = newValue } }
        }

        private mutating func change(_ body: (inout Doubts) -> Void) {
            var changed = doubts?.value ?? Doubts()
            body(&changed)
            doubts = changed.unsettled == nil && changed.reported == nil ? nil : Boxed(changed)
        }
    }

    /// A file's calendars as held between reads. The usual item, one calendar of one component without calendar
    /// properties of its own, is held without the two arrays around the component (190 bytes an item);
    /// `calendars(of:)` builds them again for the moment they are needed. Of an iCalendar file, `CalendarReader`
    /// takes the name, colour and origin from the source, so they are built again from it.
    private enum Held: Sendable {
        case item(CalendarComponent, timeZones: [String: TimeZoneDefinition])
        case calendars([CalendarReader.ReadCalendar])

        init(_ calendars: [CalendarReader.ReadCalendar], of source: CalendarSource) {
            self = .calendars(calendars)
            guard source.format == .iCalendar, calendars.count == 1, let only = calendars.first?.calendar,
                only.components.count == 1, only.name == nil, only.defaultTimeZone == nil, only.problems.isEmpty
            else { return }
            self = .item(only.components[0], timeZones: only.timeZones)
        }

        func calendars(of source: CalendarSource) -> [CalendarReader.ReadCalendar] {
            switch self {
            case .calendars(let calendars):
                return calendars
            case .item(let component, let timeZones):
                var calendar = ParsedCalendar()
                calendar.components = [component]
                calendar.timeZones = timeZones
                return [
                    CalendarReader.ReadCalendar(
                        name: CalendarReader.name(of: calendar, in: source), color: source.collectionColor,
                        calendar: calendar, origin: source.path)
                ]
            }
        }
    }

    /// The configured calendar paths.
    public private(set) var roots: [String]
    /// Whose calendar each root is, in a fleet (`CalendarSource.scope`); roots not named have none.
    public private(set) var scopes: [String: String]
    /// How long a half-written file is given before it counts as broken.
    public let settle: Duration
    /// The folders the last full look searched: what a watcher follows.
    public private(set) var directories: [String] = []
    /// Boxed, so that the table keeps a word per file rather than the whole entry in each of its spare slots and
    /// again while it grows (61 MB at the peak of a first sync of 100,000 files; boxed, 28).
    private var entries: [FileKey: Boxed<Entry>] = [:]
    /// The folders files were found in, each path (with its final slash) held once: `FileKey.folder` is its index.
    private var folders: [String] = []
    private var folderNumbers: [String: Int32] = [:]
    /// What the files of a folder have in common as sources (format, collection name and colour, scope), with the
    /// folder as the path, each held once: `Entry.shared` is its index. Neither table shrinks: they gain a row per
    /// folder and per change of a collection's name or colour, a few hundred bytes each.
    private var shared: [CalendarSource] = []
    private var sharedNumbers: [CalendarSource: Int32] = [:]
    private var nextOrigin: PlanningLoop.Origin = 1
    /// Path problems (a configured path missing) reported and not yet resolved.
    private var reportedFailures: Set<String> = []

    public init(roots: [String], scopes: [String: String] = [:], settle: Duration = .seconds(2)) {
        self.roots = roots
        self.scopes = scopes
        self.settle = settle
    }

    /// Follows other roots from now on (a fleet's watcher took or gave calendars): the next `rescan` reads the
    /// files of the new ones and reports those of roots gone as removed; files of the roots kept are not read
    /// again.
    public func follow(roots: [String], scopes: [String: String]) {
        self.roots = roots
        self.scopes = scopes
    }

    /// `source` with the scope of the root it lies under: the path and its parents looked up in `scopes`, so a
    /// fleet's watcher of hundreds of calendars pays a few lookups per file, not one comparison per root.
    private func scoped(_ source: CalendarSource) -> CalendarSource {
        guard !scopes.isEmpty else { return source }
        var scoped = source
        var path = Substring(source.path)
        while !path.isEmpty {
            if let scope = scopes[String(path)] ?? scopes[path + "/"] {
                scoped.scope = scope
                break
            }
            guard let slash = path.lastIndex(of: "/") else { break }
            path = path[..<slash]
        }
        return scoped
    }

    /// Where a file is: its folder (`folders`) and its name there. Files are filed by it rather than by their path,
    /// so that the daemon keeps each folder's path once, not once per file (13 MB for a first sync of 100,000
    /// files), and a name of up to 15 bytes in the key itself.
    private struct FileKey: Hashable {
        var folder: Int32
        var name: String
    }

    /// Where `source` is filed: its key, and the number of what it shares with the other files of its folder
    /// (`shared`); the folder and what it shares are numbered if they are new.
    private func filing(_ source: CalendarSource) -> (key: FileKey, shared: Int32) {
        let (folder, name) = Self.split(source.path)
        let number = Self.number(folder, in: &folders, &folderNumbers)
        var common = source
        common.path = folders[Int(number)]
        return (FileKey(folder: number, name: name), Self.number(common, in: &shared, &sharedNumbers))
    }

    /// `value`'s index in `list`, appended if it is new.
    private static func number<Value: Hashable>(
        _ value: Value, in list: inout [Value], _ numbers: inout [Value: Int32]
    ) -> Int32 {
        if let number = numbers[value] { return number }
        let number = Int32(list.count)
        list.append(value)
        numbers[value] = number
        return number
    }

    /// The key of the file at `path`, if its folder is known.
    private func key(_ path: String) -> FileKey? {
        let (folder, name) = Self.split(path)
        return folderNumbers[folder].map { FileKey(folder: $0, name: name) }
    }

    /// The folder (with its final slash, so that the path is rebuilt exactly) and the name of a path.
    private static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("", path) }
        let end = path.utf8.index(after: slash)
        return (String(path[..<end]), String(path[end...]))
    }

    private func path(of key: FileKey) -> String { String(path: folders[Int(key.folder)], key.name) }

    /// The source of a file held.
    private func source(of key: FileKey, _ entry: Entry) -> CalendarSource {
        var source = shared[Int(entry.shared)]
        source.path = String(path: source.path, key.name)
        return source
    }

    /// How many files are held.
    public var count: Int { entries.count }

    /// The sources and their calendars in effect, for re-expanding everything (a new window or zone).
    public var all: [(source: CalendarSource, origin: PlanningLoop.Origin, calendars: [CalendarReader.ReadCalendar])] {
        entries.map { (source(of: $0.key, $0.value.value), $0.value.value) }.sorted { $0.0.path < $1.0.path }
            .compactMap { source, entry in entry.held.map { (source, entry.origin, $0.calendars(of: source)) } }
    }

    /// Looks at every file under the roots: at start, after the watcher lost events, and as a safety net.
    public func rescan() -> Changes {
        var changes = Changes()
        let survey = SourceDiscovery.survey(roots)
        directories = survey.directories
        let failures = Set(survey.failures.map(\.description))
        for failure in survey.failures where !reportedFailures.contains(failure.description) {
            changes.problems.append(CalendarProblem(severity: .error, path: failure.path, message: failure.reason))
        }
        reportedFailures = failures
        let sources = survey.sources.filter { $0.path != "-" }
        look(at: sources, into: &changes)
        let seen = Set(sources.lazy.map(\.path))
        // What lies under a folder that cannot be listed now (or a file that is no longer one) is not known to be
        // gone: the last version read stays in effect, as it does for a file that stops parsing.
        let unreadable = survey.failures.map(\.path)
        for path in entries.keys.map(path(of:)).sorted() where !seen.contains(path) {
            guard !unreadable.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) else { continue }
            forget(path, into: &changes)
        }
        return changes
    }

    /// Looks at some files a watcher named: changed, created, renamed or deleted.
    public func refresh(_ paths: some Sequence<String>) -> Changes {
        var changes = Changes()
        var sources: [CalendarSource] = []
        for path in Set(paths).sorted() {
            if let source = SourceDiscovery.item(at: path, under: roots) {
                sources.append(source)
            } else {
                forget(path, into: &changes)
            }
        }
        look(at: sources, into: &changes)
        return changes
    }

    private func forget(_ path: String, into changes: inout Changes) {
        guard let key = key(path), let entry = entries.removeValue(forKey: key)?.value else { return }
        if entry.held != nil { changes.removed.append((path, entry.origin)) }
    }

    /// Looks at files: each is read and parsed on its own, on all cores when there are many (a vdir at start, or
    /// rewritten whole by a sync), and what they gave is then taken in in order. Many files are looked at a batch
    /// at a time, so that what is read but not yet taken in stays small (a batch, not 100,000 files).
    private func look(at sources: [CalendarSource], into changes: inout Changes) {
        for batch in stride(from: 0, to: sources.count, by: Self.batch) {
            let looks = sources[batch..<min(batch + Self.batch, sources.count)].map { source in
                let source = scoped(source)
                let (key, shared) = filing(source)
                let known = entries[key]?.value
                return (source: source, key: key, shared: shared, known: known, same: known?.shared == shared)
            }
            let loads = ParallelRuns.map(looks) { run in
                run.map { Self.load($0.source, known: $0.known, sameSource: $0.same) }
            }
            for (look, loaded) in zip(looks, loads.joined()) {
                take(loaded, of: look.source, key: look.key, shared: look.shared, into: &changes)
            }
        }
    }

    /// Files read before they are taken in.
    private static let batch = 4096

    /// What looking at one file found.
    private enum Loaded: Sendable {
        /// The file is gone.
        case gone
        /// Its stamp (and source) is that of the version in effect.
        case unchanged
        /// It could not be read.
        case unreadable(reason: String)
        /// It was read, and its content is that of the version in effect.
        case sameContent(Stamp)
        /// It was read and parsed.
        case parsed(Parsed)
    }

    /// A version of a file read and parsed.
    private struct Parsed: Sendable {
        var stamp: Stamp
        var content: EventID
        var read: CalendarReader.Result
        /// Whether it reads to its end (a file being written may not yet).
        var complete: Bool
    }

    /// Reads and parses a file unless `known` says it is the version in effect (`sameSource`: it was held as a
    /// file of this source); touches nothing shared, so that many files are loaded at once.
    private static func load(_ source: CalendarSource, known: Entry?, sameSource: Bool) -> Loaded {
        let path = source.path
        guard let stamp = stamp(path) else { return .gone }
        if sameSource && known?.stamp == stamp && known?.unsettled == nil { return .unchanged }
        let bytes: [UInt8]
        do {
            bytes = try CalendarReader.readFile(path)
        } catch {
            // Gone between the stat and the read: the watcher tells of the delete.
            if (error as? CalendarReader.POSIXFailure)?.code == ENOENT { return .gone }
            return .unreadable(reason: "\(error)")
        }
        var hasher = EventID.Hasher()
        hasher.feed(bytes: bytes)
        let content = hasher.id
        if sameSource && content == known?.content && known?.held != nil { return .sameContent(stamp) }
        let read = CalendarReader.read(source, bytes: bytes)
        let complete = !read.failed && (source.format != .iCalendar || endsCalendar(bytes))
        return .parsed(Parsed(stamp: stamp, content: content, read: read, complete: complete))
    }

    /// Takes in what looking at one file found: its calendars in effect, and its problems once.
    private func take(
        _ loaded: Loaded, of source: CalendarSource, key: FileKey, shared: Int32, into changes: inout Changes
    ) {
        let path = source.path
        var entry: Entry
        if let known = entries[key]?.value {
            entry = known
        } else {
            entry = Entry(shared: shared, origin: nextOrigin)
            nextOrigin += 1
        }
        let parsed: Parsed
        switch loaded {
        case .gone:
            forget(path, into: &changes)
            return
        case .unchanged:
            return
        case .unreadable(let reason):
            if !entry.unreadable {
                var problem = CalendarProblem(severity: .error, path: path, message: "cannot read the file (\(reason))")
                if entry.held != nil { problem.message += "; the version read before stays in effect" }
                changes.problems.append(problem)
                entry.unreadable = true
            }
            entries[key] = Boxed(entry)
            return
        case .sameContent(let sameStamp):
            entry.unreadable = false
            entry.stamp = sameStamp
            entry.unsettled = nil
            entries[key] = Boxed(entry)
            return
        case .parsed(let version):
            parsed = version
        }
        let (content, read) = (parsed.content, parsed.read)
        entry.unreadable = false
        entry.stamp = parsed.stamp
        entry.shared = shared
        changes.parsed += 1
        if !parsed.complete {
            guard entry.unsettled == content else {
                // Perhaps still being written: looked at again once it has had time to settle.
                entry.unsettled = content
                entry.stamp = nil
                entries[key] = Boxed(entry)
                changes.unsettled.append(path)
                return
            }
            entry.unsettled = nil
            if entry.held != nil {
                if entry.reported != content {
                    entry.reported = content
                    let problems = read.problems.isEmpty ? [Self.incomplete(path)] : read.problems
                    changes.problems += problems.map { problem in
                        var kept = problem
                        kept.message += "; the version read before stays in effect until the file is repaired"
                        return kept
                    }
                }
                entries[key] = Boxed(entry)
                return
            }
        }
        entry.unsettled = nil
        entry.content = content
        entry.held = Held(read.calendars, of: source)
        if entry.reported != content {
            entry.reported = read.problems.isEmpty ? nil : content
            changes.problems += read.problems
        }
        entries[key] = Boxed(entry)
        changes.changed.append((source, entry.origin, read.calendars))
    }

    /// Whether the text ends with `END:VCALENDAR` (and white space): what a file written to the end has.
    static func endsCalendar(_ bytes: [UInt8]) -> Bool {
        var end = bytes.count
        while end > 0, [0x20, 0x09, 0x0d, 0x0a, 0x00].contains(bytes[end - 1]) { end -= 1 }
        let tail = Array("END:VCALENDAR".utf8)
        guard end >= tail.count else { return false }
        return zip(bytes[(end - tail.count)..<end], tail).allSatisfy { a, b in a == b || a == b + 0x20 }
    }

    private static func incomplete(_ path: String) -> CalendarProblem {
        CalendarProblem(
            severity: .error, path: path,
            message: "the file ends before END:VCALENDAR (cut off, or still being written)")
    }

    static func stamp(_ path: String) -> Stamp? {
        var status = stat()
        // Only a path that is gone has no stamp; one that is now a pipe or a folder is read, fails, and is reported
        // with the version read before kept, as garbage written over a good file is.
        guard stat(path, &status) == 0 else { return nil }
        return Stamp(
            size: Int64(status.st_size),
            modified: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec),
            inode: UInt64(status.st_ino), device: UInt64(status.st_dev))
    }
}
