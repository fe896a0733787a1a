import CalWatchCore
import CalWatchRuntime
public import Foundation

/// What signing in to an account gave: the refresh token that mints access tokens, the access token in hand and when
/// it lapses, and who signed in. Kept in a 0600 file of its own, `$XDG_STATE_HOME/calwatch/accounts/<name>.json`
/// (folder 0700), written beside and renamed into place, so a crash leaves the old tokens or the new ones. Never
/// printed: its description names the account and nothing secret.
public struct AccountTokens: Codable, Sendable, Equatable, CustomStringConvertible {
    public var provider: String
    public var clientId: String
    public var tenant: String?
    public var refreshToken: String
    public var accessToken: String?
    public var expires: Date?
    /// The address signed in with (Graph's `userPrincipalName` or `mail`), for `account list`.
    public var user: String?
    /// When these were last written: a sign-in or a refresh.
    public var saved: Date

    public init(
        provider: String, clientId: String, tenant: String?, refreshToken: String, accessToken: String?,
        expires: Date?, user: String?, saved: Date
    ) {
        self.provider = provider
        self.clientId = clientId
        self.tenant = tenant
        self.refreshToken = refreshToken
        self.accessToken = accessToken
        self.expires = expires
        self.user = user
        self.saved = saved
    }

    public var description: String { "AccountTokens(\(provider), \(user ?? "unknown user"))" }

    /// Whether the access token in hand is good for at least `margin` more.
    func accessToken(at now: Date, margin: TimeInterval = 300) -> String? {
        guard let accessToken, let expires, expires.timeIntervalSince(now) > margin else { return nil }
        return accessToken
    }

    /// The folder of the token files: `$XDG_STATE_HOME/calwatch/accounts`, else `~/.local/state/calwatch/accounts`.
    public static func folder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/calwatch/accounts" }
        return ConfigurationLoader.home(environment: environment) + "/.local/state/calwatch/accounts"
    }

    public static func path(account: String, folder: String = folder()) -> String { folder + "/" + account + ".json" }

    /// The tokens kept for `account`, `nil` when it was never signed in to (or was removed).
    public static func load(account: String, folder: String = folder()) throws -> AccountTokens? {
        let path = path(account: account, folder: folder)
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(AccountTokens.self, from: data)
        } catch {
            throw Failure(
                reason:
                    "\(path) is not a token file calwatch wrote; sign in again with `calwatch account add \(account)`")
        }
    }

    /// Writes the tokens durably before anything uses them: a rotated refresh token is the only one that works.
    public func save(account: String, folder: String = AccountTokens.folder()) throws {
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try AtomicFile.replace(Self.path(account: account, folder: folder), with: try encoder.encode(self), mode: 0o600)
    }

    public static func remove(account: String, folder: String = folder()) throws -> Bool {
        let path = path(account: account, folder: folder)
        guard FileManager.default.fileExists(atPath: path) else { return false }
        try FileManager.default.removeItem(atPath: path)
        return true
    }

    public struct Failure: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }
}
