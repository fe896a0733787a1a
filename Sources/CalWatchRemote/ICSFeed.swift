public import CalWatchCore
import CalWatchRuntime
public import Foundation

/// A subscribed ICS feed (`calendars: - url: …`): a calendar published at an address ("secret address in iCal
/// format", `webcal://…`), fetched into calwatch's cache, where everything else reads it like a file.
public struct ICSFeed: Sendable, Hashable {
    /// `http` or `https`; `webcal://` is `https://`.
    public var url: URL
    /// The calendar's name; the feed's own `X-WR-CALNAME` or the address's host when `nil`.
    public var name: String?
    /// Time between polls.
    public var every: Duration

    /// `nil` for an address that is not http, https or webcal.
    public init?(address: String, name: String? = nil, every: Duration = .seconds(600)) {
        var text = address.trimmingCharacters(in: .whitespaces)
        if text.lowercased().hasPrefix("webcal://") { text = "https://" + text.dropFirst(9) }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else { return nil }
        self.url = url
        self.name = name
        self.every = every
    }

    /// The address as messages show it: without a user or password (a secret path stays: it is the feed's name).
    public var shownURL: String { url.shown }

    /// The feed's folder in the cache: the first 16 hex digits of its address's SHA-256.
    public var cacheName: String { String(SHA256.hex(Array(url.absoluteString.utf8)).prefix(16)) }
}

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
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.cache/calwatch"
    }

    public func record() -> Record? {
        guard let data = FileManager.default.contents(atPath: recordPath) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(Record.self, from: data)
    }

    /// Keeps a new copy: the calendar first, then the record, each written beside and renamed into place, so a
    /// reader (and inotify) sees the whole file or the old one.
    public func store(_ calendar: [UInt8]?, record: Record) throws {
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if let calendar { try Self.replace(calendarPath, with: Data(calendar)) }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try Self.replace(recordPath, with: try encoder.encode(record))
    }

    /// Private: only the user reads a calendar's copy.
    static func replace(_ path: String, with data: Data) throws {
        try AtomicFile.replace(path, with: data, mode: 0o600)
    }
}

/// One conditional GET of a feed (ETag, Last-Modified), within `HTTPClient`'s limits. What comes back is checked
/// before it replaces the copy kept: a truncated body, an HTML sign-in page or an error status leaves the last good
/// copy in effect.
public struct FeedFetcher: Sendable {
    /// How a fetch ended.
    public enum Outcome: Sendable, Equatable {
        /// 304, or a 200 with the same calendar: nothing to read again.
        case unchanged
        /// A new calendar, stored in the cache.
        case changed(bytes: Int)
        /// Nothing stored; the reason worded for the user, and how long the server asked to wait (`Retry-After`).
        case failed(String, retryAfter: Duration?)

        /// One word for logs: `unchanged`, `changed`, `failed`.
        public var word: String {
            switch self {
            case .unchanged: "unchanged"
            case .changed: "changed"
            case .failed: "failed"
            }
        }
    }

    /// The most a feed may send (a year of a busy calendar is a few megabytes).
    public var largest = 32 << 20
    /// The most redirects followed.
    public var redirects = 5
    /// How long a request may take in all.
    public var timeout: Duration = .seconds(30)

    public init() {}

    public func fetch(_ feed: ICSFeed, into cache: FeedCache, now: Date = Date()) async -> Outcome {
        let kept = cache.record()
        var request = HTTPClient.Request(url: feed.url, headers: ["Accept": "text/calendar, */*;q=0.5"])
        // Only when the copy is still there: a conditional GET must have something to fall back on.
        if let kept, kept.url == feed.shownURL, FileManager.default.fileExists(atPath: cache.calendarPath) {
            if let etag = kept.etag { request.headers["If-None-Match"] = etag }
            if let modified = kept.lastModified { request.headers["If-Modified-Since"] = modified }
        }
        let conditional = request.headers.keys.contains { $0.hasPrefix("If-") }
        let limits = HTTPClient.Limits(deadline: timeout, largest: largest, redirects: redirects)
        let response: HTTPClient.Answer
        switch await HTTPClient.send(request, limits: limits) {
        case .success(let answer): response = answer
        case .failure(let failure): return .failed("\(feed.shownURL): \(failure.reason)", retryAfter: nil)
        }
        let retryAfter = Self.retryAfter(response.headers["retry-after"], now: now)
        switch response.status {
        case 304 where conditional:
            return .unchanged
        case 304:
            // A conditional answer to a request that was not conditional: nothing to read, nothing kept.
            return .failed(
                "\(feed.shownURL): HTTP 304 (not modified) though calwatch keeps no copy yet; the server's cache is "
                    + "wrong, tried again later", retryAfter: retryAfter)
        case 200:
            break
        case 401, 403:
            return .failed(Self.refusal(feed, status: response.status), retryAfter: retryAfter)
        case 404, 410:
            return .failed(
                "\(feed.shownURL): HTTP \(response.status): no calendar at this address any more",
                retryAfter: retryAfter)
        default:
            return .failed("\(feed.shownURL): HTTP \(response.status)", retryAfter: retryAfter)
        }
        let bytes = [UInt8](response.body)
        if let problem = Self.problem(bytes) { return .failed("\(feed.shownURL): \(problem)", retryAfter: nil) }
        let digest = SHA256.hex(bytes)
        var record = FeedCache.Record(
            url: feed.shownURL, etag: response.headers["etag"], lastModified: response.headers["last-modified"],
            sha256: digest, bytes: bytes.count,
            fetched: now)
        let same = kept?.sha256 == digest && FileManager.default.fileExists(atPath: cache.calendarPath)
        do {
            try cache.store(same ? nil : bytes, record: record)
        } catch {
            return .failed("cannot keep \(feed.shownURL) in \(cache.folder): \(error)", retryAfter: nil)
        }
        record.bytes = bytes.count
        return same ? .unchanged : .changed(bytes: bytes.count)
    }

    private static func refusal(_ feed: ICSFeed, status: Int = 401) -> String {
        "\(feed.shownURL): HTTP \(status): the address is no longer valid or needs signing in; copy the calendar's "
            + "secret address again"
    }

    /// Why a 200's body is not a calendar to keep: an HTML page (a sign-in page for an expired address), or a
    /// calendar cut off before its end.
    static func problem(_ bytes: [UInt8]) -> String? {
        let head = String(decoding: bytes.prefix(512), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard head.uppercased().hasPrefix("BEGIN:VCALENDAR") || head.hasPrefix("\u{FEFF}BEGIN:VCALENDAR") else {
            let kind = head.lowercased().hasPrefix("<") ? "an HTML page (a sign-in page?)" : "not iCalendar data"
            return "the server sent \(kind) instead of a calendar; the copy kept stays in use"
        }
        let tail = String(decoding: bytes.suffix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard tail.uppercased().hasSuffix("END:VCALENDAR") else {
            return "the calendar was cut off before END:VCALENDAR (\(bytes.count) bytes came); the copy kept stays "
                + "in use"
        }
        if let line = htmlLine(bytes) {
            return "the server sent an HTML page inside BEGIN:VCALENDAR (line \(line)); the copy kept stays in use"
        }
        return nil
    }

    /// The number of the first line that opens an HTML document (`<!DOCTYPE`, `<html`, `<head`, `<body`): no
    /// content line of a calendar starts with `<`, and a folded one starts with a space.
    static func htmlLine(_ bytes: [UInt8]) -> Int? {
        let openers = ["<!doctype", "<html", "<head", "<body"].map { Array($0.utf8) }
        var line = 1
        var start = 0
        while start < bytes.count {
            if bytes[start] == UInt8(ascii: "<") {
                let head = bytes[start..<min(bytes.count, start + 9)].map { $0 | 0x20 }
                if openers.contains(where: { head.starts(with: $0) }) { return line }
            }
            guard let end = bytes[start...].firstIndex(of: 10) else { break }
            start = end + 1
            line += 1
        }
        return nil
    }

    /// `Retry-After` as seconds or an HTTP date.
    static func retryAfter(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .seconds(max(0, Int(date.timeIntervalSince(now).rounded(.up))))
    }

}

/// When to poll a feed next: every `every`, spread by up to a tenth either way so that many feeds (and many
/// calwatch instances) do not ask at the same second; after failures, `every` doubled per failure in a row, up to
/// six hours; never sooner than a server's `Retry-After`. Pure, so it is tested without a clock.
public struct FeedSchedule: Sendable, Equatable {
    public var every: Duration
    /// Failures in a row.
    public private(set) var failures = 0
    public static let longest: Duration = .seconds(6 * 3600)

    public init(every: Duration) {
        self.every = every
    }

    /// The wait after a fetch that ended as `outcome`; `jitter` in -1...1 (random in the daemon, fixed in tests).
    public mutating func next(after outcome: FeedFetcher.Outcome, jitter: Double) -> Duration {
        var wait: Duration
        switch outcome {
        case .unchanged, .changed:
            failures = 0
            wait = every
        case .failed(_, let retryAfter):
            failures += 1
            wait = min(every * (1 << min(failures, 16)), max(every, Self.longest))
            if let retryAfter { wait = max(wait, min(retryAfter, Self.longest * 4)) }
        }
        return wait + wait * (max(-1, min(1, jitter)) / 10)
    }
}

/// Calendars on servers made into folders the rest of calwatch reads like any vdir collection: each feed's cache
/// folder holds `calendar.ics` and a `displayname` (the configured name, else the feed's `X-WR-CALNAME`, else its
/// host); each CalDAV account's, a folder per collection.
public enum FeedSync {
    /// What one fetch of every feed gave: the folders to read (a feed that failed but has a copy still counts),
    /// and the failures worded for the user.
    public struct Result: Sendable {
        public var folders: [String] = []
        public var problems: [String] = []
        /// Each folder's feed as the user named it: `Team (https://example.org/team.ics)`.
        public var shown: [String: String] = [:]
        /// The feeds and accounts that failed, as the user named them, with why.
        public var failed: [(shown: String, reason: String)] = []
    }

    /// Fetches each feed once, at most four at a time.
    public static func fetch(
        _ feeds: [FeedSettings], root: String = FeedCache.root(), fetcher: FeedFetcher = FeedFetcher()
    ) async -> Result {
        // Each feed's place in the list, its folder when there is something to read, its problem, its address.
        typealias Fetched = (index: Int, folder: String?, problem: String?, address: String)
        return await withTaskGroup(of: Fetched.self) { group in
            var found: [Fetched] = []
            for (index, settings) in feeds.enumerated() {
                if index >= 4, let done = await group.next() { found.append(done) }
                group.addTask {
                    guard let remote = RemoteCalendar(settings, root: root, fetcher: fetcher) else {
                        return (
                            index, nil, "\(settings.shownAddress): not an http, https or webcal address",
                            settings.shownAddress
                        )
                    }
                    guard case .failed(let reason, _) = await remote.fetch() else {
                        return (index, remote.folder, nil, remote.shownURL)
                    }
                    return remote.hasCopy
                        ? (index, remote.folder, reason + " (its copy from before is read)", remote.shownURL)
                        : (index, nil, reason, remote.shownURL)
                }
            }
            for await done in group { found.append(done) }
            var result = Result()
            for fetched in found.sorted(by: { $0.index < $1.index }) {
                if let folder = fetched.folder {
                    result.folders.append(folder)
                    result.shown[folder] =
                        feeds[fetched.index].name.map { "\($0) (\(fetched.address))" } ?? fetched.address
                }
                if let problem = fetched.problem {
                    result.problems.append(problem)
                    let name = feeds[fetched.index].name.map { "\($0) (\(fetched.address))" } ?? fetched.address
                    result.failed.append((name, problem))
                }
            }
            return result
        }
    }

    /// The value of an `X-WR-CALNAME` line, with or without parameters (Radicale writes
    /// `X-WR-CALNAME;VALUE=TEXT:Work`), its text escapes undone.
    static func calendarName(_ line: Substring) -> String? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let property = line[..<colon].split(separator: ";", maxSplits: 1).first ?? ""
        guard property.uppercased() == "X-WR-CALNAME" else { return nil }
        return String(line[line.index(after: colon)...]).replacingOccurrences(of: "\\,", with: ",")
            .replacingOccurrences(of: "\\;", with: ";").replacingOccurrences(of: "\\\\", with: "\\")
            .trimmingCharacters(in: .whitespaces)
    }

    /// Writes the collection's `displayname` when it differs.
    /// The feed's own name is looked for only in a calendar just stored, or when there is no name yet: an
    /// unchanged feed's poll reads nothing.
    static func name(_ feed: ICSFeed, in cache: FeedCache, calendarChanged: Bool = true) throws {
        let path = cache.folder + "/displayname"
        if feed.name == nil && !calendarChanged && FileManager.default.fileExists(atPath: path) { return }
        var name = feed.name
        if name == nil, let handle = FileHandle(forReadingAtPath: cache.calendarPath) {
            defer { try? handle.close() }
            let head = String(decoding: (try? handle.read(upToCount: 16_384)) ?? Data(), as: UTF8.self)
            name = head.split(whereSeparator: \.isNewline).lazy.compactMap(calendarName).first
        }
        let text = CalendarReader.calendarName((name?.isEmpty == false ? name : nil) ?? feed.url.host ?? "feed")
        if (try? String(contentsOfFile: path, encoding: .utf8)) != text {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }
}
