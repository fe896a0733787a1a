public import CalWatchCore
import Foundation

/// `calendars: - url: https://…`: a subscribed ICS feed. A secret it needs is in its address
/// (`https://user:password@…`, or the secret path a "secret address" has).
public struct ICSFeedSettings: SourceDriver {
    public static let type = "url"
    public static let title = "an ICS feed"
    public static let keys: [String] = []
    public static let schemes = ["https", "http", "webcal"]
    public static let example = "webcal://example.org/calendar.ics"

    public var address: String
    /// Whose calendar it is, when the daemon holds several people's (`ICSFeed.scope`); never from config.yml.
    public var scope: String?

    public init(address: String, scope: String? = nil) {
        self.address = address
        self.scope = scope
    }

    public init?(address: String, entry: ConfigurationSection) {
        self.init(address: address)
    }

    /// The address fetched (`webcal://` is `https://`), which names the cache folder.
    public var identity: String {
        (ICSFeed(address: address)?.url.absoluteString ?? address) + (scope.map { "\n" + $0 } ?? "")
    }

    public func open(_ settings: SourceSettings, root: String, fetcher: FeedFetcher) -> (any RemoteCalendar)? {
        guard
            let feed = ICSFeed(
                address: address, name: settings.name, every: .seconds(settings.every), scope: scope)
        else {
            return nil
        }
        return FeedCalendar(feed: feed, cache: FeedCache(root: root, feed: feed), fetcher: fetcher)
    }
}
