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
    /// Whose calendar it is, when the daemon holds several people's (a fleet's calendar name): one address kept
    /// for two people is two copies, each read in its own scope.
    public var scope: String?

    /// `nil` for an address that is not http, https or webcal.
    public init?(address: String, name: String? = nil, every: Duration = .seconds(600), scope: String? = nil) {
        var text = address.trimmingCharacters(in: .whitespaces)
        if text.lowercased().hasPrefix("webcal://") { text = "https://" + text.dropFirst(9) }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else { return nil }
        self.url = url
        self.name = name
        self.every = every
        self.scope = scope
    }

    /// The address as messages show it: without a user or password (a secret path stays: it is the feed's name).
    public var shownURL: String { url.shown }

    /// The feed's folder in the cache: the first 16 hex digits of the SHA-256 of its address (and scope).
    public var cacheName: String {
        String(SHA256.hex(Array((url.absoluteString + (scope.map { "\n" + $0 } ?? "")).utf8)).prefix(16))
    }
}
