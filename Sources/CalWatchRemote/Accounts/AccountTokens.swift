public import CalWatchCore
import CalWatchRuntime
public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What signing in to an account gave: the refresh token that mints access tokens, the access token in hand and when
/// it lapses, and who signed in. Its record is a 0600 file of its own, `$XDG_STATE_HOME/calwatch/accounts/<name>.json`
/// (folder 0700), written beside and renamed into place, so a crash leaves the old tokens or the new ones. The two
/// tokens are in the record, or, when the sign-in found the user's Secret Service unlocked (`SecretService`), there
/// and not in the record (`store`). Never printed: its description names the account and nothing secret.
public struct AccountTokens: Codable, Sendable, Equatable, CustomStringConvertible {
    public var provider: String
    public var clientId: String
    public var tenant: String?
    public var refreshToken: String
    public var accessToken: String?
    public var expires: Date?
    /// When the refresh token itself lapses, where the service says (Google, an application in testing mode).
    public var refreshExpires: Date?
    /// The address signed in with (Graph's `userPrincipalName` or `mail`), for `account list`.
    public var user: String?
    /// When these were last written: a sign-in or a refresh.
    public var saved: Date
    /// Where the two tokens are: `secret-service`, or `nil` for the record itself.
    public var store: String?

    /// The store name of the Secret Service.
    static let secretService = "secret-service"

    /// The two tokens as the Secret Service holds them.
    private struct Secrets: Codable {
        var refreshToken: String
        var accessToken: String?
    }

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

    /// What a sign-in's `grant` gives for `settings`, signed in as `user`: `nil` when it holds no refresh token (only
    /// an hour's reading).
    public init?(signIn grant: SignInGrant, settings: AccountSettings, user: String?, now: Date = Date()) {
        guard let refresh = grant.refreshToken else { return nil }
        self.init(
            provider: settings.provider.rawValue, clientId: settings.clientId, tenant: settings.tenant,
            refreshToken: refresh, accessToken: nil, expires: nil, user: user, saved: now)
        take(grant, at: now)
    }

    /// A grant's tokens taken in, a refresh's or a sign-in's: the rotated refresh token (or the one held), the access
    /// token and when each lapses (the service's lifetimes kept within a day and a year: the record must stay a date
    /// calwatch can write).
    public mutating func take(_ grant: SignInGrant, at now: Date) {
        refreshToken = grant.refreshToken ?? refreshToken
        accessToken = grant.accessToken
        expires = now.addingTimeInterval(TimeInterval(min(max(grant.expiresIn, 0), 86_400)))
        refreshExpires = grant.refreshExpiresIn.map {
            now.addingTimeInterval(TimeInterval(min(max($0, 0), 366 * 86_400)))
        }
        saved = now
    }

    /// Whether the sign-in itself ends within a day of `now` (Google's testing mode): worth saying while it works.
    public func endsSoon(at now: Date = Date()) -> Bool {
        refreshExpires.map { $0.timeIntervalSince(now) < 86_400 } ?? false
    }

    /// Whether the access token in hand is good for at least `margin` more.
    public func accessToken(at now: Date, margin: TimeInterval = 300) -> String? {
        guard let accessToken, let expires, expires.timeIntervalSince(now) > margin else { return nil }
        return accessToken
    }

    /// The folder of the token files: `$XDG_STATE_HOME/calwatch/accounts`, else `~/.local/state/calwatch/accounts`.
    public static func folder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/calwatch/accounts" }
        return ConfigurationLoader.home(environment: environment) + "/.local/state/calwatch/accounts"
    }

    public static func path(account: String, folder: String = folder()) -> String { folder + "/" + account + ".json" }

    /// Where the tokens are, as `account add` says it.
    public func kept(account: String, folder: String = AccountTokens.folder()) -> String {
        store == Self.secretService
            ? "in the Secret Service (its default collection)" : "in \(Self.path(account: account, folder: folder))"
    }

    /// The tokens kept for `account`, from the Secret Service when they are there; `nil` when it was never signed in
    /// to (or was removed).
    public static func load(account: String, folder: String = folder()) async throws -> AccountTokens? {
        guard var tokens = try record(account: account, folder: folder) else { return nil }
        guard tokens.store == secretService else { return tokens }
        let found: SecretService.Found
        do {
            found = try await SecretService.shared.lookup(account: account)
        } catch {
            throw AccountFailure(reason: "cannot reach the Secret Service, which holds \(account)'s tokens: \(error)")
        }
        switch found {
        case .text(let text):
            guard let secrets = try? JSONDecoder().decode(Secrets.self, from: Data(text.utf8)) else {
                throw AccountFailure(
                    signIn: "the Secret Service's item for it is not one calwatch wrote", account: account)
            }
            tokens.refreshToken = secrets.refreshToken
            tokens.accessToken = secrets.accessToken
            return tokens
        case .locked:
            throw AccountFailure(
                reason: "the Secret Service holds \(account)'s tokens, but its collection is locked; unlock it (log in "
                    + "to the desktop), or run `calwatch account add \(account)` to keep new ones in a file")
        case .none:
            throw AccountFailure(signIn: "the Secret Service no longer holds its tokens", account: account)
        }
    }

    /// The record kept for `account`, without reading the Secret Service: who signed in and when, for `list`; its
    /// tokens are empty when they are in the Secret Service.
    public static func record(account: String, folder: String = folder()) throws -> AccountTokens? {
        let path = path(account: account, folder: folder)
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(AccountTokens.self, from: data)
        } catch {
            throw AccountFailure(
                reason:
                    "\(path) is not a token file calwatch wrote; sign in again with `calwatch account add \(account)`")
        }
    }

    /// Writes the tokens durably before anything uses them: a rotated refresh token is the only one that works.
    /// A new sign-in (`choosing`) keeps them in the Secret Service when its default collection is unlocked, else in
    /// the record; a refresh keeps them where they were, or in the record when the Secret Service refuses them now
    /// (never lost). The record is written last, so its time says the tokens changed. Returns them as kept.
    @discardableResult
    public func save(account: String, folder: String = AccountTokens.folder(), choosing: Bool = false) async throws
        -> AccountTokens
    {
        var kept = self
        let service = SecretService.shared
        if choosing ? await service.unlocked() : store == Self.secretService {
            do {
                let secrets = try JSONEncoder().encode(Secrets(refreshToken: refreshToken, accessToken: accessToken))
                let label = "calwatch: \(account) (\(provider)\(user.map { ", " + $0 } ?? ""))"
                try await service.store(String(decoding: secrets, as: UTF8.self), account: account, label: label)
                kept.store = Self.secretService
                kept.refreshToken = ""
                kept.accessToken = nil
            } catch {
                kept.store = nil
            }
        } else {
            kept.store = nil
        }
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try AtomicFile.replace(Self.path(account: account, folder: folder), with: try encoder.encode(kept), mode: 0o600)
        return kept
    }

    /// Forgets the account's tokens, in the Secret Service too: whether there were any. Throws when the Secret
    /// Service holds them and cannot forget them now (locked, or gone): the record stays, to try again.
    public static func remove(account: String, folder: String = folder()) async throws -> Bool {
        let path = path(account: account, folder: folder)
        if (try? record(account: account, folder: folder))?.store == secretService {
            let cleared: Bool?
            do {
                cleared = try await SecretService.shared.clear(account: account)
            } catch {
                throw AccountFailure(
                    reason: "cannot reach the Secret Service, which holds \(account)'s tokens: \(error)")
            }
            if cleared == nil {
                throw AccountFailure(
                    reason: "the Secret Service holds \(account)'s tokens, but its collection is locked; unlock it "
                        + "and remove the account again")
            }
        }
        guard FileManager.default.fileExists(atPath: path) else { return false }
        try FileManager.default.removeItem(atPath: path)
        return true
    }
}

/// Access tokens for one account: the one in hand while it has five minutes left, else a new one from the refresh
/// token, whose rotated successor is saved before the access token is used. Refreshes are taken in turn across
/// processes (a lock file beside the tokens): the daemon and `calwatch next` never spend one refresh token twice.
public struct AccountTokenKeeper: Sendable {
    public var settings: AccountSettings
    public var folder: String

    public init(settings: AccountSettings, folder: String = AccountTokens.folder()) {
        self.settings = settings
        self.folder = folder
    }

    /// When the tokens were last written (a sign-in or a refresh): the token file's time, or when the vault last
    /// kept them as last read; `nil` without either.
    public var signedIn: Date? {
        if let vault = settings.vault?.vault { return vault.lastKnown?.saved }
        let path = AccountTokens.path(account: settings.name, folder: folder)
        return (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    /// What signs in again: `calwatch account add`, or the vault's (a fleet's) command.
    var signInCommand: String { settings.vault?.vault.signInCommand ?? "calwatch account add \(settings.name)" }

    /// The notice of a sign-in that lapsed as `failure` says: about the tokens kept now (who, and since when).
    func notice(_ failure: AccountFailure) -> AccountNotice {
        let held =
            settings.vault.map { $0.vault.lastKnown }
            ?? (try? AccountTokens.record(account: settings.name, folder: folder))
        return AccountNotice(
            account: settings.own, provider: settings.provider.rawValue, reason: failure.signInCause ?? failure.reason,
            signIn: signInCommand, host: ProcessInfo.processInfo.hostName,
            user: held?.user, since: signedIn.map { Instant(secondsSinceEpoch: Int64($0.timeIntervalSince1970)) })
    }

    /// A refresh of `refreshToken` at the provider's token endpoint, its refusals worded as the account's failures.
    private func refresh(_ refreshToken: String) async throws -> SignInGrant {
        do {
            return try await settings.signIn().refresh(refreshToken)
        } catch let refusal as SignInRefusal {
            if refusal.needsSignIn { throw AccountFailure(signIn: refusal.reason, run: signInCommand) }
            throw AccountFailure(reason: refusal.reason)
        }
    }

    /// An access token, refreshed when needed, when `forcingRefresh`, or when it is the one the service `refused`
    /// (unless another request or process has refreshed since: a poll's sessions side by side refresh once).
    public func accessToken(forcingRefresh: Bool = false, replacing refused: String? = nil, now: Date = Date())
        async throws -> String
    {
        if let vault = settings.vault?.vault {
            return try await vault.accessToken(
                forcingRefresh: forcingRefresh, replacing: refused, now: now, refresh: self.refresh)
        }
        guard let held = try await AccountTokens.load(account: settings.name, folder: folder) else {
            throw AccountFailure(signIn: "not signed in", account: settings.name)
        }
        if !forcingRefresh, let token = held.accessToken(at: now), token != refused { return token }
        let lock = try await Self.lock(AccountTokens.path(account: settings.name, folder: folder) + ".lock")
        defer { close(lock) }
        // Another process may have refreshed while this one waited.
        guard var current = try await AccountTokens.load(account: settings.name, folder: folder) else {
            throw AccountFailure(signIn: "not signed in", account: settings.name)
        }
        if let token = current.accessToken(at: now), token != refused, token != held.accessToken || !forcingRefresh {
            return token
        }
        let grant = try await refresh(current.refreshToken)
        current.take(grant, at: now)
        try await current.save(account: settings.name, folder: folder)
        return grant.accessToken
    }

    /// An exclusive `flock` on `path`, asked for without blocking and again every 50 ms (never a blocking call on
    /// the cooperative pool), for at most 30 s.
    private static func lock(_ path: String) async throws -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw AccountFailure(reason: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        for _ in 0..<600 {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return descriptor }
            try await Task.sleep(for: .milliseconds(50))
        }
        close(descriptor)
        throw AccountFailure(reason: "another calwatch held \(path) for 30 s")
    }
}

extension Configuration {
    /// The configuration with the address each account is signed in as (its record's) added to `me:`, so that your
    /// own answers on its calendars (a declined meeting) count without writing it there too.
    public func withAccountAddresses() -> Configuration {
        var configuration = self
        var known = Set(me.map { $0.lowercased() })
        for account in sources.compactMap({ $0.kind as? AccountSettings }) {
            let folder = account.tokens ?? AccountTokens.folder()
            guard let user = (try? AccountTokens.record(account: account.name, folder: folder))?.user?.lowercased(),
                known.insert(user).inserted
            else { continue }
            configuration.me.append(user)
        }
        return configuration
    }
}
