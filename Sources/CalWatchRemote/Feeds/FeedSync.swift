public import CalWatchCore
import CalWatchRuntime
public import Foundation

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

    /// Fetches each feed once, at most four at a time. With `freshAt`, a calendar whose server was asked less than
    /// its `every:` before that instant (by the daemon's poller or an earlier command) is read from its copy without
    /// asking: `calwatch next` in a status bar every few seconds costs its servers nothing more than the daemon would.
    public static func fetch(
        _ feeds: [SourceSettings], root: String = FeedCache.root(), fetcher: FeedFetcher = FeedFetcher(),
        freshAt: Date? = nil
    ) async -> Result {
        // Each feed's place in the list, its folder when there is something to read, its problem, its address.
        typealias Fetched = (index: Int, folder: String?, problem: String?, address: String)
        return await withTaskGroup(of: Fetched.self) { group in
            var found: [Fetched] = []
            for (index, settings) in feeds.enumerated() {
                if index >= 4, let done = await group.next() { found.append(done) }
                group.addTask {
                    guard let remote = settings.open(root: root, fetcher: fetcher) else {
                        return (
                            index, nil, "\(settings.shownAddress): not an http, https or webcal address",
                            settings.shownAddress
                        )
                    }
                    if let now = freshAt, remote.hasCopy, let asked = asked(remote),
                        asked <= now, now.timeIntervalSince(asked) < Double(settings.every)
                    {
                        return (index, remote.folder, nil, remote.shownURL)
                    }
                    let outcome = await remote.fetch()
                    noteAsked(remote)
                    guard case .failed(let reason, _) = outcome else {
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

    /// When a calendar's server was last asked by any calwatch: the modification time of `<folder>.asked`, beside
    /// the cache folder and outside what the watcher follows.
    static func asked(_ remote: any RemoteCalendar) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: remote.folder + ".asked"))?[.modificationDate] as? Date
    }

    /// Notes that the server was asked now (whatever it answered: a failing server is not asked more often).
    static func noteAsked(_ remote: any RemoteCalendar) {
        let path = remote.folder + ".asked"
        if !FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) {
            try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: path)
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

    /// The collection's name: the configured one, else the feed's `X-WR-CALNAME` (looked for in the calendar's
    /// first 16 KiB), else its host.
    static func displayName(_ feed: ICSFeed, calendar: some Collection<UInt8>) -> String {
        var name = feed.name
        if name == nil {
            let head = String(decoding: calendar.prefix(16_384), as: UTF8.self)
            name = head.split(whereSeparator: \.isNewline).lazy.compactMap(calendarName).first
        }
        return CalendarReader.calendarName((name?.isEmpty == false ? name : nil) ?? feed.url.host ?? "feed")
    }

    /// Names the copy kept when the feed did not change (a new fetch names its calendar as it stores it,
    /// `FeedCache.store`): its name is written when the configured one changed or there is none yet, so an
    /// unchanged feed's poll reads nothing.
    static func nameKept(_ feed: ICSFeed, in cache: FeedCache) throws {
        let path = cache.folder + "/displayname"
        if feed.name == nil && FileManager.default.fileExists(atPath: path) { return }
        let head = FileHandle(forReadingAtPath: cache.calendarPath).map { handle in
            defer { try? handle.close() }
            return (try? handle.read(upToCount: 16_384)) ?? Data()
        }
        try FeedCache.keepName(displayName(feed, calendar: head ?? Data()), in: cache.folder)
    }
}
