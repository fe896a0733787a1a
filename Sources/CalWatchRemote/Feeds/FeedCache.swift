import CalWatchCore
import CalWatchRuntime
public import Foundation

/// The last good copy of a feed and what its server said of it, in `<cache>/feeds/<cacheName>/` (folder 0700,
/// files 0600: a private feed's events are private): `calendar.ics`, read by the rest of calwatch like any file,
/// and `feed.json`.
public struct FeedCache: Sendable {
    public let folder: String
    public var calendarPath: String { folder + "/calendar.ics" }
    private var recordPath: String { folder + "/feed.json" }

    /// What the server said of the copy kept.
    public struct Record: Codable, Sendable, Equatable {
        /// The address without credentials (a password in it stays out of the cache).
        public var url: String
        public var etag: String?
        public var lastModified: String?
        /// SHA-256 of the calendar's bytes, to tell a 200 with the same calendar from a change.
        public var sha256: String
        public var bytes: Int
        public var fetched: Date
    }

    public init(root: String, feed: ICSFeed) {
        folder = root + "/feeds/" + feed.cacheName
    }

    /// The cache root: `$XDG_CACHE_HOME/calwatch`, else `~/.cache/calwatch`.
    public static func root(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/calwatch" }
        return ConfigurationLoader.home(environment: environment) + "/.cache/calwatch"
    }

    public func record() -> Record? {
        guard let data = FileManager.default.contents(atPath: recordPath) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(Record.self, from: data)
    }

    /// Keeps a new copy: the collection's name, the calendar, then the record, each written beside and renamed into
    /// place, so a reader (and inotify) sees the whole file or the old one, and reads a new calendar under its name.
    public func store(_ calendar: [UInt8]?, named name: String?, record: Record) throws {
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if let name { try Self.keepName(name, in: folder) }
        if let calendar { try Self.replace(calendarPath, with: Data(calendar)) }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try Self.replace(recordPath, with: try encoder.encode(record))
    }

    /// Writes a collection's `displayname` when it differs.
    static func keepName(_ name: String, in folder: String) throws {
        let path = folder + "/displayname"
        if (try? String(contentsOfFile: path, encoding: .utf8)) != name { try replace(path, with: Data(name.utf8)) }
    }

    /// Private: only the user reads a calendar's copy. `durable: false` for the many items of a CalDAV copy, made
    /// durable together before the record that names them (`AtomicFile.syncFileSystem`).
    static func replace(_ path: String, with data: some ContiguousBytes, durable: Bool = true) throws {
        try AtomicFile.replace(path, with: data, mode: 0o600, durable: durable)
    }
}
