import Foundation

/// A calendar on a server as `calendars:` names it: a subscribed ICS feed (`url:`) or a CalDAV account or
/// collection (`caldav:`).
public struct FeedSettings: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// One `.ics` file fetched whole (`https://…`, `http://…`, `webcal://…`).
        case ics
        /// A CalDAV server root, principal or collection, with the account to sign in as.
        case caldav(username: String?, passwordCommand: [String]?)
    }

    /// The address, as written.
    public var address: String
    public var kind: Kind = .ics
    /// The calendar's name in events and filters; the feed's own when `nil` (for CalDAV, each collection's).
    public var name: String?
    /// Seconds between polls.
    public var every: Int64 = 600
    /// A file whose first line is the CalDAV password (a systemd credential a fleet's row names), read when
    /// signing in, where no `passwordCommand` is given.
    public var passwordFile: String?

    public init(address: String, kind: Kind = .ics, name: String? = nil, every: Int64 = 600) {
        self.address = address
        self.kind = kind
        self.name = name
        self.every = every
    }

    /// The address without a password, for every message and log.
    public var shownAddress: String { ConnectionString(address).redacted }

    /// Whether the address is this machine (`localhost`, `127.0.0.1`, `[::1]`), which may be polled more often
    /// than once a minute.
    public var isLoopback: Bool {
        guard let host = URLComponents(string: address)?.host?.lowercased() else { return false }
        return ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host)
    }
}

/// Settings are printed whole by reflection (swift-service-lifecycle logs each service at debug level): without
/// their passwords.
extension FeedSettings: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "FeedSettings(\(shownAddress))" }
    public var debugDescription: String { description }
}
