import CalWatchCore
import CalWatchPostgres
import CalWatchRemote
import CalWatchRuntime
import Foundation

/// An account calendar's tokens in the fleet's database (`fleet_account_tokens`), sealed with the key the watchers
/// share. Only the watcher holding the calendar's lease reads them, and a refresh is kept over the version it started
/// from, before its access token is used: watchers never spend one refresh token against each other, and a
/// watcher taking the calendar over goes on with the tokens its last holder kept. In this process, requests for a
/// token are taken in turn: a poll's sessions side by side refresh once.
final actor FleetAccountVault: AccountVault {
    let calendar: String
    private let member: FleetMember
    /// Where the key's secret comes from on this machine: a program of `fleet.credentials:`, or a systemd credential.
    private let keyCommand: [String]?
    private let keyFile: String?
    private var sealing: SealedTokens?
    /// The last request for an access token: each waits for the one before it, so that two sessions finding the
    /// token lapsed refresh once (an actor lets another call in at every `await`).
    private var last: Task<String, any Error>?
    private let known = Locked<AccountTokens?>(nil)
    nonisolated let signInCommand: String

    init(calendar: String, member: FleetMember, keyCommand: [String]?, keyFile: String?) {
        self.calendar = calendar
        self.member = member
        self.keyCommand = keyCommand
        self.keyFile = keyFile
        signInCommand = "calwatch fleet sign-in \(calendar)"
    }

    nonisolated var lastKnown: AccountTokens? { known.withLock { $0 } }

    func accessToken(
        forcingRefresh: Bool, replacing refused: String?, now: Date,
        refresh: @escaping @Sendable (String) async throws -> SignInGrant
    ) async throws -> String {
        let previous = last
        // Owned by the vault (`last`), not cancelled with the poll that asked: a refresh made must be kept, or its
        // rotated refresh token is lost.
        let task = Task {
            _ = await previous?.result
            return try await self.inTurn(forcingRefresh: forcingRefresh, replacing: refused, now: now, refresh: refresh)
        }
        last = task
        return try await task.value
    }

    /// One request for an access token, after those before it.
    private func inTurn(
        forcingRefresh: Bool, replacing refused: String?, now: Date,
        refresh: @escaping @Sendable (String) async throws -> SignInGrant
    ) async throws -> String {
        let (tokens, version) = try await load()
        if !forcingRefresh, let token = tokens.accessToken(at: now), token != refused { return token }
        do {
            var next = tokens
            next.take(try await refresh(tokens.refreshToken), at: now)
            let sealed = try await sealed().seal(next, calendar: calendar)
            guard try await member.keepAccountTokens(of: calendar, sealed: sealed, replacing: version) else {
                throw AccountFailure(
                    reason: "\(calendar)'s tokens changed in the fleet's database while this watcher refreshed them "
                        + "(a new sign-in); the next poll uses those")
            }
            known.withLock { $0 = next.withoutSecrets }
            return next.accessToken ?? ""
        } catch let failure as AccountFailure where failure.needsSignIn {
            // A refused refresh token may be one another holder spent and replaced (a lease that ran out while
            // this watcher refreshed): then the tokens kept now are the ones that work. A watcher that no longer
            // holds the lease says that, not that the sign-in lapsed.
            let (_, kept) = try await load()
            guard kept != version else { throw failure }
            return try await inTurn(forcingRefresh: false, replacing: refused, now: now, refresh: refresh)
        }
    }

    /// The tokens kept and their version, while this watcher holds the calendar's lease.
    private func load() async throws -> (AccountTokens, Int64) {
        let row: FleetDatabase.AccountTokenRow?
        do {
            row = try await member.accountTokens(of: calendar)
        } catch let failure as FleetDatabase.Failure {
            throw AccountFailure(reason: failure.description)
        }
        guard let row else { throw AccountFailure(signIn: "nobody signed in to it", run: signInCommand) }
        guard var tokens = try await sealed().open(row.sealed, calendar: calendar) else {
            throw AccountFailure(
                signIn: "its tokens in the fleet's database were sealed with another key than this watcher's "
                    + "(fleet: tokenKey:), or for another calendar", run: signInCommand)
        }
        tokens.saved =
            row.saved.map { Date(timeIntervalSince1970: Double($0.millisecondsSinceEpoch) / 1000) } ?? tokens.saved
        known.withLock { $0 = tokens.withoutSecrets }
        return (tokens, row.version)
    }

    /// The key, from its secret, read the first time it is needed.
    private func sealed() async throws -> SealedTokens {
        if let sealing { return sealing }
        let made = try await SealedTokens.read(command: keyCommand, file: keyFile)
        sealing = made
        return made
    }
}

extension AccountTokens {
    /// Who signed in and when, the tokens left out: what the vault remembers between reads.
    fileprivate var withoutSecrets: AccountTokens {
        var shown = self
        (shown.refreshToken, shown.accessToken) = ("", nil)
        return shown
    }
}
