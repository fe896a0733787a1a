/// `accountSignInNeeded`: an account's sign-in lapsed (revoked, expired, a password changed, conditional access), so
/// its calendars are read from the copy kept until the user signs in again. About an account, not an occurrence.
public struct AccountNotice: Hashable, Sendable, Codable {
    /// The account's name in `accounts:` (its calendars are `<account>/<calendar>`).
    public var account: String
    /// `microsoft` or `google`.
    public var provider: String
    /// Why, as the service said it (an AADSTS code and its meaning, `invalid_grant`, …), without anything secret.
    public var reason: String
    /// What signs in again: `calwatch account add <account>`.
    public var signIn: String
    /// The machine to run it on (the daemon's host name): a phone's notification is read elsewhere.
    public var host: String
    /// The address signed in with, when known.
    public var user: String?
    /// When the sign-in was last good (its tokens last saved): the lapse it is about. A new sign-in that lapses
    /// again is another notice.
    public var since: Instant?
    /// A device code to sign in again with from anywhere (`renewByDeviceCode`); `nil` otherwise.
    public var deviceCode: DeviceCode?
    /// The daemon's own page that starts a new sign-in in a browser on its machine (`serve: listen:` on loopback);
    /// `nil` without one.
    public var signInPage: String?

    /// Where to sign in, with which code, until when.
    public struct DeviceCode: Hashable, Sendable, Codable {
        public var address: String
        public var code: String
        public var until: Instant

        public init(address: String, code: String, until: Instant) {
            self.address = address
            self.code = code
            self.until = until
        }
    }

    public init(
        account: String, provider: String, reason: String, signIn: String, host: String, user: String?,
        since: Instant?
    ) {
        self.account = account
        self.provider = provider
        self.reason = reason
        self.signIn = signIn
        self.host = host
        self.user = user
        self.since = since
    }

    /// How long the notice is of use: a day, after which a sign-in still lapsed is told again.
    public static let useful: Int64 = 86_400

    /// The notice's event at `now`. Its key names the account (`account:<name>`, calendar `<name>`), so a subject
    /// never collides with an item's; its id depends on the account and `since` alone, so however often a failing
    /// poll notices the same lapse, it is one event.
    public func event(at now: Instant) -> PlannedEvent {
        let key = OccurrenceKey(calendar: account, uid: "account:" + account, recurrenceID: nil)
        let id = EventID.make(EventID.seed(key), .accountSignInNeeded, "since", since?.secondsSinceEpoch ?? 0)
        return PlannedEvent(
            .accountSignInNeeded(self), id: id, key: key, occurrenceStart: now, occurrenceEnd: now, time: now,
            expiry: now.adding(seconds: Self.useful), fingerprint: 0)
    }
}
