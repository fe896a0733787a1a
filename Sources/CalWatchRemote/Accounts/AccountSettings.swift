public import CalWatchCore
public import Foundation

/// `accounts: - name: work, provider: microsoft, clientId: …`: a calendar service signed in to with OAuth (Microsoft
/// 365 through Graph, Google Calendar), whose calendars are copied into calwatch's cache
/// (`<cache>/accounts/<name>/<calendar>/`) and read like any vdir, named `work/<calendar name>`. The tokens live apart from the configuration (`AccountTokens`), written by
/// `calwatch account add`.
public struct AccountSettings: SourceDriver {
    public static let type = "account"
    public static let title = "an account"
    public static let keys = [
        "provider", "clientId", "tenant", "calendars", "endpoints", "clientSecretFile", "renewByDeviceCode",
    ]
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
    /// Google's authorization page (`auth`), token endpoint (`token`) and APIs (`api`).
    public var auth: URL = URL(string: "https://accounts.google.com/o/oauth2/v2/auth")!
    public var token: URL = URL(string: "https://oauth2.googleapis.com/token")!
    public var api: URL = URL(string: "https://www.googleapis.com")!
    /// A file whose first line is the client secret (Google's desktop clients have one); a systemd credential.
    public var clientSecretFile: String?
    /// Microsoft: a lapsed sign-in's notice carries a device code to sign in with from a phone, and the daemon
    /// takes the sign-in made with it (when it is the same user's).
    public var renewByDeviceCode = false
    /// Where the tokens are kept when not in `AccountTokens.folder()` (a test's folder); never from config.yml.
    public var tokens: String?
    /// The fleet calendar this account is read for (its row's name): its copy's folder and its notices' name, with
    /// its tokens in `vault`; never from config.yml.
    public var scope: String?
    /// Where the tokens are kept instead of token files (a fleet's database); never from config.yml.
    public var vault: AccountVaultReference?

    public var address: String { name }
    public var identity: String { "\(provider.rawValue)\n\(name)" + (scope.map { "\n" + $0 } ?? "") }
    /// The account's own name on this machine: its copy's folder, its notices and metrics. The fleet calendar's
    /// name when read for a fleet (one application, many people's accounts), else `name`.
    public var own: String { scope ?? name }

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
        guard let clientId = entry["clientId"]?.string(), !clientId.isEmpty else {
            entry.note(
                provider == .microsoft
                    ? "has no `clientId:`; register an application with Microsoft Entra (docs/accounts.md) and write "
                        + "its Application (client) ID"
                    : "has no `clientId:`; create a desktop app OAuth client in the Google Cloud console "
                        + "(docs/accounts.md) and write its client ID")
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
        if let renew = entry["renewByDeviceCode"]?.bool() {
            if renew && provider == .google {
                entry.note(
                    key: "renewByDeviceCode",
                    "Google's device flow does not grant access to calendars; remove it (a lapsed sign-in says to run "
                        + "`calwatch account add`)")
            } else {
                renewByDeviceCode = renew
            }
        }
        let known = provider == .microsoft ? ["login", "graph"] : ["auth", "token", "api"]
        if let endpoints = entry["endpoints"]?.section(known: known) {
            func address(_ key: String) -> URL? { endpoints[key]?.webAddress().flatMap(URL.init(string:)) }
            if let login = address("login") { self.login = login }
            if let graph = address("graph") { self.graph = graph }
            if let auth = address("auth") { self.auth = auth }
            if let token = address("token") { self.token = token }
            if let api = address("api") { self.api = api }
        }
        if provider == .google && clientSecretFile == nil {
            entry.note(
                "has no `clientSecretFile:`; Google's desktop app clients come with a client secret: keep it in a "
                    + "file of its own (its first line) and name the file")
        }
    }

    public func open(_ settings: SourceSettings, root: String, fetcher: FeedFetcher) -> (any RemoteCalendar)? {
        switch provider {
        case .microsoft:
            GraphAccount(settings: self, every: settings.every, root: root, tokens: tokens ?? AccountTokens.folder())
        case .google:
            GoogleAccount(settings: self, every: settings.every, root: root, tokens: tokens ?? AccountTokens.folder())
        }
    }

    /// Who signed in with `token`, as the provider's calendar service says (`nil` when it does not).
    public func user(signedInWith token: String) async -> String? {
        switch provider {
        case .microsoft: await GraphAccount.user(of: self, token: token)
        case .google: await GoogleAccount.user(of: self, token: token)
        }
    }

    /// The provider's sign-in; for Google, with the client secret read from its file (first line) now.
    public func signIn() throws -> any AccountIdentity {
        switch provider {
        case .microsoft: return MicrosoftIdentity(self)
        case .google:
            guard let path = clientSecretFile,
                let secret = (try? String(contentsOfFile: path, encoding: .utf8))?.split(whereSeparator: \.isNewline)
                    .first.map(String.init), !secret.isEmpty
            else {
                throw AccountFailure(
                    reason: "cannot read the client secret from \(clientSecretFile ?? "clientSecretFile:"); write it "
                        + "there (the first line), as the Google Cloud console shows it")
            }
            return GoogleIdentity(settings: self, clientSecret: secret)
        }
    }
}
