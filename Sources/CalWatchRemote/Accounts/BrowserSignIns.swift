import CalWatchCore
public import Foundation

/// Sign-ins started from the daemon's own page (`/v1/accounts/<name>/sign-in` on its loopback address), which a
/// lapsed account's notice links to: the browser goes to the provider's page with PKCE, and comes back to the
/// daemon's address, where the code is redeemed and the tokens kept as `calwatch account add` keeps them. The
/// poller sees the new sign-in within seconds and reads the account again. Each sign-in waits at most ten minutes;
/// at most eight wait at once (the oldest goes), so a page that starts them in a loop holds nothing.
public final class BrowserSignIns: Sendable {
    /// The accounts that may be signed in to this way: this daemon's own, from config.yml.
    private let accounts: [String: AccountSettings]
    /// Where the provider sends the browser back: the daemon's address, `http://127.0.0.1:<port>`.
    public let redirect: String
    private let waiting = Locked<[String: Waiting]>([:])

    static let longest: TimeInterval = 600
    static let most = 8

    private struct Waiting {
        var account: AccountSettings
        var verifier: String
        var started: Date
    }

    public init(accounts: [AccountSettings], redirect: String) {
        self.accounts = Dictionary(accounts.map { ($0.name, $0) }) { first, _ in first }
        self.redirect = redirect
    }

    /// The page that starts a sign-in to `account` (what a notice links to).
    public func page(for account: String) -> String? {
        guard accounts[account] != nil,
            let name = account.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"]))
        else { return nil }
        return redirect + "/v1/accounts/" + name + "/sign-in"
    }

    /// The provider's sign-in page for `account`, the browser to come back to `redirect`; `nil` for no such account
    /// (or one whose client secret cannot be read: said when the browser comes back is too late).
    public func start(_ account: String, now: Date = Date()) -> URL? {
        guard let settings = accounts[account], let identity = try? settings.signIn() else { return nil }
        let (verifier, state) = (PKCE.verifier(), PKCE.state())
        waiting.withLock { waiting in
            waiting = waiting.filter { now.timeIntervalSince($0.value.started) < Self.longest }
            while waiting.count >= Self.most, let oldest = waiting.min(by: { $0.value.started < $1.value.started }) {
                waiting[oldest.key] = nil
            }
            waiting[state] = Waiting(account: settings, verifier: verifier, started: now)
        }
        return identity.authorizationURL(redirect: redirect, state: state, challenge: PKCE.challenge(verifier))
    }

    /// What came of a sign-in.
    public enum Outcome: Sendable, Equatable {
        case signedIn(account: String, user: String?)
        case refused(account: String, reason: String)
    }

    /// The provider's answer (the query the browser came back with) redeemed and the tokens kept; `nil` when it
    /// answers no sign-in waiting here.
    public func finish(_ query: [String: String], now: Date = Date()) async -> Outcome? {
        guard let state = query["state"],
            let started = waiting.withLock({ $0.removeValue(forKey: state) }),
            now.timeIntervalSince(started.started) < Self.longest
        else { return nil }
        let account = started.account
        do {
            let code = try PKCE.code(answering: state, in: query)
            let grant = try await account.signIn().redeem(code: code, redirect: redirect, verifier: started.verifier)
            let user = await account.user(signedInWith: grant.accessToken)
            guard let tokens = AccountTokens(signIn: grant, settings: account, user: user, now: now) else {
                return .refused(
                    account: account.name,
                    reason: "the service gave no refresh token (offline_access was not granted)")
            }
            try await tokens.save(
                account: account.name, folder: account.tokens ?? AccountTokens.folder(), choosing: true)
            return .signedIn(account: account.name, user: user)
        } catch let refusal as SignInRefusal {
            return .refused(account: account.name, reason: refusal.reason)
        } catch let failure as AccountFailure {
            return .refused(account: account.name, reason: failure.reason)
        } catch {
            return .refused(account: account.name, reason: "cannot keep the tokens: \(error)")
        }
    }
}
