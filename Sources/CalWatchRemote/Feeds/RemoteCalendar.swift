public import CalWatchCore
import CalWatchRuntime
public import Foundation

/// A calendar on a server, whatever it speaks (an ICS feed, a CalDAV account), kept in a folder of the cache that
/// the rest of calwatch reads like any vdir.
public protocol RemoteCalendar: Sendable {
    /// The cache folder read as a calendar folder: a feed's holds one `calendar.ics`, an account's one folder per
    /// collection.
    var folder: String { get }
    /// The address as messages show it, without a user or password.
    var shownURL: String { get }
    /// Time between polls.
    var every: Duration { get }
    /// Whether a copy from an earlier fetch is there to read.
    var hasCopy: Bool { get }
    /// Requests sent and bytes received so far, where a poll may send several (a CalDAV account's).
    var traffic: (requests: Int, bytes: Int)? { get }
    /// Fetches once: what changed is in the folder when this returns.
    func fetch() async -> FeedFetcher.Outcome
    /// When the account's sign-in was last written (its token file's time), for a calendar signed in to: a poller
    /// waiting after a failure asks again as soon as it changes (`calwatch account add`), not hours later.
    var signedIn: Date? { get }
    /// The last fetch's lapsed sign-in, for a calendar signed in to: only signing in again helps.
    var signInNeeded: AccountNotice? { get }
    /// `signInNeeded` made ready to send, with a way to sign in again where the account offers one (a device code,
    /// whose sign-in is then waited for). Asked only by the daemon's poller, whose notices reach the sinks.
    func signInNotice() async -> AccountNotice?
}

extension RemoteCalendar {
    public var traffic: (requests: Int, bytes: Int)? { nil }
    public var signedIn: Date? { nil }
    public var signInNeeded: AccountNotice? { nil }
    public func signInNotice() async -> AccountNotice? { signInNeeded }
}

/// How a kind of calendar on a server is fetched: the `SourceKind` of a `calendars:` entry made into the
/// `RemoteCalendar` that keeps its cache folder. Each kind lives beside its client (`Feeds/`, `CalDAV/`).
public protocol SourceDriver: SourceKind {
    /// The calendar `settings` (of this kind) name, kept under `root`; `nil` for an address that cannot be used
    /// (the configuration reader has said why).
    func open(_ settings: SourceSettings, root: String, fetcher: FeedFetcher) -> (any RemoteCalendar)?
}

extension SourceSettings {
    /// Its calendar, when its kind is one this program fetches.
    public func open(root: String = FeedCache.root(), fetcher: FeedFetcher = FeedFetcher()) -> (any RemoteCalendar)? {
        (kind as? any SourceDriver)?.open(self, root: root, fetcher: fetcher)
    }
}

extension SourceKinds {
    /// ICS feeds, CalDAV accounts and accounts signed in to (`accounts:`).
    public static let remote = SourceKinds([ICSFeedSettings.self, CalDAVSettings.self, AccountSettings.self])
}

/// One ICS feed and its cache folder.
public struct FeedCalendar: RemoteCalendar {
    public let feed: ICSFeed
    let cache: FeedCache
    let fetcher: FeedFetcher

    public var folder: String { cache.folder }
    public var shownURL: String { feed.shownURL }
    public var every: Duration { feed.every }
    public var hasCopy: Bool { FileManager.default.fileExists(atPath: cache.calendarPath) }

    public func fetch() async -> FeedFetcher.Outcome {
        let outcome = await fetcher.fetch(feed, into: cache)
        switch outcome {
        case .changed: break  // named as it was stored
        case .unchanged, .failed: if hasCopy { try? FeedSync.nameKept(feed, in: cache) }
        }
        return outcome
    }
}
