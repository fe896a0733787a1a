import CalWatchCore
public import Foundation

/// Google's OAuth 2.0 for desktop apps: the authorization code flow with PKCE (S256) on a loopback redirect, the
/// client secret Google gives desktop clients sent with each grant (it is not a secret there: Google says so), and
/// refresh-token grants. Google's device flow does not grant calendar scopes, so there is none here.
public struct GoogleIdentity: AccountIdentity, CustomStringConvertible, CustomDebugStringConvertible {
    public var auth: URL
    public var token: URL
    public var clientId: String
    var clientSecret: String
    /// Reading calendars and events; nothing else.
    public static let scope = "https://www.googleapis.com/auth/calendar.readonly"

    /// Printed (a log's reflection of a value) without the client secret.
    public var description: String { "GoogleIdentity(\(clientId))" }
    public var debugDescription: String { description }

    public init(settings: AccountSettings, clientSecret: String) {
        auth = settings.auth
        token = settings.token
        clientId = settings.clientId
        self.clientSecret = clientSecret
    }

    public func authorizationURL(redirect: String, state: String, challenge: String) -> URL {
        var parts = URLComponents(url: auth, resolvingAgainstBaseURL: false)!
        parts.queryItems = [
            URLQueryItem(name: "client_id", value: clientId), URLQueryItem(name: "redirect_uri", value: redirect),
            URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "scope", value: Self.scope),
            URLQueryItem(name: "state", value: state), URLQueryItem(name: "code_challenge", value: challenge),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
            // A refresh token, and one again at each sign-in (Google gives one only on consent).
            URLQueryItem(name: "access_type", value: "offline"), URLQueryItem(name: "prompt", value: "consent"),
        ]
        return parts.url!
    }

    public func redeem(code: String, redirect: String, verifier: String) async throws -> SignInGrant {
        try await grant([
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "code_verifier": verifier,
        ])
    }

    public func refresh(_ refreshToken: String) async throws -> SignInGrant {
        try await grant(["grant_type": "refresh_token", "refresh_token": refreshToken])
    }

    private func grant(_ form: [String: String]) async throws -> SignInGrant {
        struct Answer: Decodable {
            var accessToken: String
            var refreshToken: String?
            var expiresIn: Int?
            var refreshTokenExpiresIn: Int?
        }
        var form = form
        form["client_id"] = clientId
        form["client_secret"] = clientSecret
        let answer: Answer = try await OAuth.post(form, to: token, at: token.shown, refusal: Self.refusal)
        return SignInGrant(
            accessToken: answer.accessToken, refreshToken: answer.refreshToken, expiresIn: answer.expiresIn ?? 3600,
            refreshExpiresIn: answer.refreshTokenExpiresIn)
    }

    /// Google's refusal (`{"error": "invalid_grant", "error_description": "Token has been expired or revoked."}`).
    static func refusal(_ body: Data, status: Int, at place: String) -> SignInRefusal {
        struct Body: Decodable {
            var error: String?
            var errorDescription: String?
        }
        guard let parsed = try? OAuth.decoder.decode(Body.self, from: body), let error = parsed.error else {
            return SignInRefusal(
                error: "http", code: nil, reason: "\(place) answered HTTP \(status) without saying why")
        }
        let said = TerminalText.safe(String((parsed.errorDescription ?? error).prefix(300)), keepingLines: false)
        let meaning =
            switch error {
            case "invalid_grant":
                "the sign-in no longer works: revoked (a password changed, or access removed at "
                    + "myaccount.google.com), or lapsed (an application in testing mode signs in for 7 days only; "
                    + "publish it, docs/accounts.md); sign in again"
            case "invalid_client", "unauthorized_client":
                "the clientId or client secret is not a desktop app client of Google's; check `clientId:` and "
                    + "`clientSecretFile:`"
            case "access_denied": "the sign-in was declined"
            default: "refused"
            }
        return SignInRefusal(error: error, code: nil, reason: "\(meaning) (\(error): \(said))")
    }
}
