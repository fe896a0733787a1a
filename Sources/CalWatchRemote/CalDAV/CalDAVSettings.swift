public import CalWatchCore

/// `calendars: - caldav: https://…`: a CalDAV server root, principal or collection, with the account to sign in as
/// and where its password comes from.
public struct CalDAVSettings: SourceDriver {
    public static let type = "caldav"
    public static let title = "CalDAV"
    public static let keys = ["username", "passwordCommand"]
    public static let schemes = ["https", "http"]
    public static let example = "https://cloud.example.org/remote.php/dav/"

    public var address: String
    public var username: String?
    /// The program that prints the password, run when signing in.
    public var passwordCommand: [String]?
    /// A file whose first line is the password (a systemd credential a fleet's row names), read when signing in,
    /// where no `passwordCommand` is given.
    public var passwordFile: String?
    /// Whose calendar it is, when the daemon holds several people's (a fleet's calendar name): one account kept
    /// for two people is two copies, each read in its own scope. Never from config.yml.
    public var scope: String?

    public init(
        address: String, username: String? = nil, passwordCommand: [String]? = nil, passwordFile: String? = nil,
        scope: String? = nil
    ) {
        self.address = address
        self.username = username
        self.passwordCommand = passwordCommand
        self.passwordFile = passwordFile
        self.scope = scope
    }

    public init?(address: String, entry: ConfigurationSection) {
        self.init(address: address)
        username = entry["username"]?.string()
        passwordCommand = entry["passwordCommand"]?.argv(
            example: "[pass, show, nextcloud]",
            empty: "name the program that prints the password, such as [pass, show, nextcloud]")
    }

    /// The address without credentials and the user signing in, which name the cache folder.
    public var identity: String { CalDAVAccount(self)?.identity ?? address }

    public func open(_ settings: SourceSettings, root: String, fetcher: FeedFetcher) -> (any RemoteCalendar)? {
        CalDAVAccount(self, name: settings.name, every: settings.every).map { CalDAVClient(account: $0, root: root) }
    }
}
