import CalWatchCore
import CalWatchRuntime
import Crypto
public import Foundation

/// The Microsoft identity platform's v2.0 endpoints, as a public client (no secret) uses them: the device code flow,
/// the authorization code flow with PKCE (S256) on a loopback redirect, and refresh-token grants. Every answer is
/// read within `HTTPClient`'s limits; a refusal is worded from its AADSTS code, never with a token in it.
public struct MicrosoftIdentity: AccountIdentity {
    public var login: URL
    public var tenant: String
    public var clientId: String
    /// Graph's calendars and the user's name, and a refresh token (`offline_access`).
    public var scope = "offline_access Calendars.Read User.Read"

    public init(login: URL, tenant: String, clientId: String) {
        self.login = login
        self.tenant = tenant
        self.clientId = clientId
    }

    public init(_ settings: AccountSettings) {
        self.init(login: settings.login, tenant: settings.tenant, clientId: settings.clientId)
    }

    /// The start of a device code sign-in: the code the user types at the address.
    public struct DeviceCode: Sendable {
        public var deviceCode: String
        public var userCode: String
        public var verificationURI: String
        public var expiresIn: Int
        public var interval: Int
        /// The service's own instruction ("To sign in, use a web browser to open the page … and enter the code …").
        public var message: String?

        /// A code's life and the wait between asks as the service gave them, within an hour and a minute: numbers
        /// from a server are added to instants and to each other, and must not overflow.
        static func bounded(expiresIn: Int, interval: Int?) -> (expiresIn: Int, interval: Int) {
            (min(max(expiresIn, 0), 3600), min(max(interval ?? 5, 1), 60))
        }
    }

    private var base: URL { login.appendingPathComponent(tenant).appendingPathComponent("oauth2/v2.0") }

    public func deviceCode() async throws -> DeviceCode {
        struct Answer: Decodable {
            var deviceCode: String
            var userCode: String
            var verificationUri: String
            var expiresIn: Int
            var interval: Int?
            var message: String?
        }
        let answer: Answer = try await post("devicecode", ["client_id": clientId, "scope": scope])
        let (expiresIn, interval) = DeviceCode.bounded(expiresIn: answer.expiresIn, interval: answer.interval)
        return DeviceCode(
            deviceCode: answer.deviceCode, userCode: answer.userCode, verificationURI: answer.verificationUri,
            expiresIn: expiresIn, interval: interval, message: answer.message)
    }

    /// Asks every `interval` until the user has signed in, the code lapses or the sign-in is refused.
    public func wait(for code: DeviceCode, sleep: @Sendable (Duration) async throws -> Void) async throws -> SignInGrant
    {
        var interval = code.interval
        let end = Date().addingTimeInterval(TimeInterval(code.expiresIn))
        while Date() < end {
            try await sleep(.seconds(interval))
            do {
                return try await token([
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "client_id": clientId,
                    "device_code": code.deviceCode,
                ])
            } catch let refusal as SignInRefusal where refusal.error == "authorization_pending" {
                continue
            } catch let refusal as SignInRefusal where refusal.error == "slow_down" {
                interval += 5
            }
        }
        throw SignInRefusal(
            error: "expired_token", code: nil,
            reason: "the code lapsed before anyone signed in with it; run the command again")
    }

    /// The address the browser opens for the authorization code flow.
    public func authorizationURL(redirect: String, state: String, challenge: String) -> URL {
        var parts = URLComponents(url: base.appendingPathComponent("authorize"), resolvingAgainstBaseURL: false)!
        parts.queryItems = [
            URLQueryItem(name: "client_id", value: clientId), URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "redirect_uri", value: redirect), URLQueryItem(name: "response_mode", value: "query"),
            URLQueryItem(name: "scope", value: scope), URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "code_challenge", value: challenge),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
            URLQueryItem(name: "prompt", value: "select_account"),
        ]
        return parts.url!
    }

    public func redeem(code: String, redirect: String, verifier: String) async throws -> SignInGrant {
        try await token([
            "grant_type": "authorization_code", "client_id": clientId, "code": code, "redirect_uri": redirect,
            "code_verifier": verifier, "scope": scope,
        ])
    }

    public func refresh(_ refreshToken: String) async throws -> SignInGrant {
        try await token([
            "grant_type": "refresh_token", "client_id": clientId, "refresh_token": refreshToken, "scope": scope,
        ])
    }

    private func token(_ form: [String: String]) async throws -> SignInGrant {
        struct Answer: Decodable {
            var accessToken: String
            var refreshToken: String?
            var expiresIn: Int?
        }
        let answer: Answer = try await post("token", form)
        return SignInGrant(
            accessToken: answer.accessToken, refreshToken: answer.refreshToken, expiresIn: answer.expiresIn ?? 3600)
    }

    private func post<Answer: Decodable>(_ endpoint: String, _ form: [String: String]) async throws -> Answer {
        try await OAuth.post(form, to: base.appendingPathComponent(endpoint), at: login.shown, refusal: Self.refusal)
    }

    /// The refusal in `body` (`{"error", "error_description": "AADSTS70000: …", "error_codes": [70000]}`), worded.
    static func refusal(_ body: Data, status: Int, at place: String) -> SignInRefusal {
        struct Body: Decodable {
            var error: String?
            var errorDescription: String?
            var errorCodes: [Int]?
        }
        let parsed = try? OAuth.decoder.decode(Body.self, from: body)
        guard let error = parsed?.error else {
            return SignInRefusal(
                error: "http", code: nil, reason: "\(place) answered HTTP \(status) without saying why")
        }
        let code = parsed?.errorCodes?.first
        // The service's first line, made safe for a terminal ("AADSTS50173: The provided grant has expired …").
        let said =
            (parsed?.errorDescription ?? error).split(whereSeparator: \.isNewline).first.map(String.init) ?? error
        let shown = TerminalText.safe(String(said.prefix(300)), keepingLines: false)
        let meaning: String
        switch code {
        case 700082: meaning = "the sign-in lapsed after 90 days without use; sign in again"
        case 50173, 50133:
            meaning = "the sign-in was revoked (a password changed or reset, or an administrator); sign in again"
        case 50076, 50079: meaning = "the organisation now asks for multi-factor authentication; sign in again"
        case 53003:
            meaning =
                "the organisation's conditional access policies refuse this sign-in (device code sign-in is often blocked: sign in with the browser instead)"
        case 65001:
            meaning =
                "no one has consented to the application's access yet; sign in again and accept, or ask an administrator"
        case 700016: meaning = "the clientId is not an application of this directory; check `clientId:` and `tenant:`"
        case 7_000_218:
            meaning =
                "the application is not a public client; in its registration, allow public client flows (docs/accounts.md)"
        case 90002: meaning = "no such tenant; check `tenant:`"
        default: meaning = error == "invalid_grant" ? "the sign-in no longer works; sign in again" : "refused"
        }
        return SignInRefusal(error: error, code: code, reason: "\(meaning) (\(shown))")
    }
}
