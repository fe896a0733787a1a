import CalWatchCore
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
