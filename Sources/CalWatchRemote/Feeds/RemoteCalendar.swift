public import CalWatchCore
import CalWatchRuntime
import Foundation

/// A calendar on a server, whatever it speaks: an ICS feed or a CalDAV account, each kept in a folder of the cache
/// that the rest of calwatch reads like any vdir.
public enum RemoteCalendar: Sendable {
    case feed(ICSFeed, FeedCache, FeedFetcher)
    case caldav(CalDAVClient)

    /// `nil` for settings whose address cannot be used (the configuration reader has said why).
    public init?(_ settings: FeedSettings, root: String = FeedCache.root(), fetcher: FeedFetcher = FeedFetcher()) {
        switch settings.kind {
        case .ics:
            guard let feed = ICSFeed(address: settings.address, name: settings.name, every: .seconds(settings.every))
            else { return nil }
            self = .feed(feed, FeedCache(root: root, feed: feed), fetcher)
        case .caldav:
            guard let account = CalDAVAccount(settings) else { return nil }
            self = .caldav(CalDAVClient(account: account, root: root))
        }
    }

    /// The cache folder read as a calendar folder: a feed's holds one `calendar.ics`, an account's one folder per
    /// collection.
    public var folder: String {
        switch self {
        case .feed(_, let cache, _): cache.folder
        case .caldav(let client): client.folder
        }
    }

    public var shownURL: String {
        switch self {
        case .feed(let feed, _, _): feed.shownURL
        case .caldav(let client): client.account.shownURL
        }
    }

    public var every: Duration {
        switch self {
        case .feed(let feed, _, _): feed.every
        case .caldav(let client): client.account.every
        }
    }

    /// Whether a copy from an earlier fetch is there to read.
    public var hasCopy: Bool {
        switch self {
        case .feed(_, let cache, _): FileManager.default.fileExists(atPath: cache.calendarPath)
        case .caldav(let client): !client.loadState().collections.isEmpty
        }
    }

    /// Requests sent and bytes received so far, for a CalDAV account (a feed is one request a poll).
    public var traffic: (requests: Int, bytes: Int)? {
        guard case .caldav(let client) = self else { return nil }
        return (client.requests, client.bytesReceived)
    }

    /// Fetches once: what changed is in the folder when this returns.
    public func fetch() async -> FeedFetcher.Outcome {
        switch self {
        case .feed(let feed, let cache, let fetcher):
            let outcome = await fetcher.fetch(feed, into: cache)
            if case .changed = outcome {
                try? FeedSync.name(feed, in: cache)
            } else if hasCopy {
                try? FeedSync.name(feed, in: cache, calendarChanged: false)
            }
            return outcome
        case .caldav(let client):
            return await client.sync()
        }
    }
}
