import CalWatchCore
import CalWatchRuntime
import Foundation

/// A lapsed Microsoft sign-in renewed from anywhere (`renewByDeviceCode: true`): the lapse's notice carries a device
/// code, and the daemon waits for the sign-in made with it and keeps its tokens, so a phone's notification is
/// enough. One code per lapse, made again once a day while it lasts (as the notice is). A sign-in by another user than
/// the one whose sign-in lapsed (someone who read the code off a shared topic) is not taken.
final class DeviceCodeRenewal: Sendable {
    private struct Started {
        var since: Instant?
        var made: Date
        var code: AccountNotice.DeviceCode
        var waiting: Task<Void, Never>
    }

    private let started = Locked<Started?>(nil)

    deinit { started.withLock { $0?.waiting.cancel() } }

    /// The code for the notice of `lapse`: the one started for it, else a new one whose sign-in is waited for
    /// meanwhile; `nil` when the service gives none.
    func code(for lapse: AccountNotice, keeper: AccountTokenKeeper, now: Date = Date()) async
        -> AccountNotice.DeviceCode?
    {
        if let current = started.withLock({ $0 }), current.since == lapse.since,
            now.timeIntervalSince(current.made) < TimeInterval(AccountNotice.useful)
        {
            return current.code
        }
        let identity = MicrosoftIdentity(keeper.settings)
        guard let device = try? await identity.deviceCode() else { return nil }
        let code = AccountNotice.DeviceCode(
            address: device.verificationURI, code: device.userCode,
            until: Instant(secondsSinceEpoch: Int64(now.timeIntervalSince1970) + Int64(device.expiresIn)))
        let waiting = Task {
            await Self.take(device, from: identity, keeper: keeper, expecting: lapse.user)
        }
        started.withLock { started in
            started?.waiting.cancel()
            started = Started(since: lapse.since, made: now, code: code, waiting: waiting)
        }
        return code
    }

    /// Waits for the sign-in with `device` and keeps its tokens, when it is `expecting`'s (or no one was known).
    private static func take(
        _ device: MicrosoftIdentity.DeviceCode, from identity: MicrosoftIdentity, keeper: AccountTokenKeeper,
        expecting: String?
    ) async {
        guard let grant = try? await identity.wait(for: device, sleep: { try await Task.sleep(for: $0) }) else {
            return
        }
        let user = await keeper.settings.user(signedInWith: grant.accessToken)
        if let expecting, user?.lowercased() != expecting.lowercased() { return }
        guard let tokens = AccountTokens(signIn: grant, settings: keeper.settings, user: user) else { return }
        _ = try? await tokens.save(account: keeper.settings.name, folder: keeper.folder, choosing: true)
    }
}
