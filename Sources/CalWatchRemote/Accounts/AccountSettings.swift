public import CalWatchCore
public import Foundation

/// `accounts: - name: work, provider: microsoft, clientId: …`: a calendar service signed in to with OAuth, whose
/// calendars are copied into calwatch's cache (`<cache>/accounts/<name>/<calendar>/`) and read like any vdir, named
/// `work/<calendar name>`. The tokens live apart from the configuration (`AccountTokens`), written by
/// `calwatch account add`.
public struct AccountSettings: SourceDriver {
    public static let type = "account"
    public static let title = "an account"
    public static let keys = ["provider", "clientId", "tenant", "calendars", "endpoints", "clientSecretFile"]
    public static let schemes = ["https", "http"]
    public static let example = "{name: work, provider: microsoft, clientId: 00000000-0000-0000-0000-000000000000}"

    public enum Provider: String, Sendable, Hashable, CaseIterable {
        case microsoft
        case google
    }

    /// The account's name: its calendars' prefix and its token file's name.
    public var name: String
    public var provider: Provider
    /// The application (client) id registered with the provider (docs/accounts.md says how).
    public var clientId: String
    /// Microsoft's directory: `common`, `organizations`, `consumers` or a tenant id.
    public var tenant: String
    /// The calendars read, by name or id; empty: every calendar of the user's.
    public var calendars: [String]
    /// Microsoft's sign-in service (`login`) and Graph (`graph`); another cloud's, or a stand-in's.
    public var login: URL
    public var graph: URL
    /// A file whose first line is the client secret (Google's desktop clients have one); a systemd credential.
    public var clientSecretFile: String?

    public var address: String { name }
    public var identity: String { "\(provider.rawValue)\n\(name)" }

    public init(
        name: String, provider: Provider = .microsoft, clientId: String, tenant: String = "common",
        calendars: [String] = [], login: URL = URL(string: "https://login.microsoftonline.com")!,
        graph: URL = URL(string: "https://graph.microsoft.com")!
    ) {
        self.name = name
        self.provider = provider
        self.clientId = clientId
        self.tenant = tenant
        self.calendars = calendars
        self.login = login
        self.graph = graph
    }

    public init?(address: String, entry: ConfigurationSection) {
        guard let provider = entry["provider"].map({ $0.choice(of: Provider.self) }) else {
            entry.note(
                "has no `provider:`; write `provider: microsoft` (Microsoft 365, Outlook.com) or `provider: google`")
            return nil
        }
        guard let provider else { return nil }
        guard provider == .microsoft else {
            entry.note(
                key: "provider",
                "google accounts are not read directly yet; read the calendar through its secret address in iCal "
                    + "format as a feed (`calendars: - url: https://calendar.google.com/calendar/ical/…/basic.ics`)")
            return nil
        }
        guard let clientId = entry["clientId"]?.string(), !clientId.isEmpty else {
            entry.note(
                "has no `clientId:`; register an application with Microsoft Entra (docs/accounts.md) and write its "
                    + "Application (client) ID")
            return nil
        }
        self.init(name: address, provider: provider, clientId: clientId)
        if let tenant = entry["tenant"]?.string() {
            if tenant.isEmpty || !tenant.allSatisfy({ $0.isLetter || $0.isNumber || "-.".contains($0) }) {
                entry.note(key: "tenant", "'\(tenant)' is not common, organizations, consumers or a tenant id")
            } else {
                self.tenant = tenant
            }
        }
        calendars = entry["calendars"]?.list().compactMap { $0.string() } ?? []
        clientSecretFile = entry["clientSecretFile"]?.filePath()
        if let endpoints = entry["endpoints"]?.section(known: ["login", "graph"]) {
            if let login = endpoints["login"]?.webAddress().flatMap(URL.init(string:)) { self.login = login }
            if let graph = endpoints["graph"]?.webAddress().flatMap(URL.init(string:)) { self.graph = graph }
        }
    }

    public func open(_ settings: SourceSettings, root: String, fetcher: FeedFetcher) -> (any RemoteCalendar)? {
        GraphAccount(settings: self, every: settings.every, root: root)
    }
}
