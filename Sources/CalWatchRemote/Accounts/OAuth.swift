import CalWatchCore
import CalWatchRuntime
import Crypto
public import Foundation

/// What a provider's sign-in offers calwatch: the address a browser opens (authorization code with PKCE), the
/// code it comes back with redeemed, and refresh-token grants. `MicrosoftIdentity` and `GoogleIdentity`.
public protocol AccountIdentity: Sendable {
    func authorizationURL(redirect: String, state: String, challenge: String) -> URL
    func redeem(code: String, redirect: String, verifier: String) async throws -> SignInGrant
    func refresh(_ refreshToken: String) async throws -> SignInGrant
}

/// What the token endpoint gave.
public struct SignInGrant: Sendable {
    public var accessToken: String
    public var refreshToken: String?
    public var expiresIn: Int
    /// How long the refresh token lasts, when the service says (Google, for an application in testing: 7 days).
    public var refreshExpiresIn: Int? = nil
}

/// A refusal of the identity platform: its `error` (`invalid_grant`, `authorization_pending`, …), its AADSTS
/// code, and what it means for the user.
public struct SignInRefusal: Error, Sendable, CustomStringConvertible {
    public var error: String
    public var code: Int?
    public var reason: String
    /// The refresh token no longer works: only signing in again helps.
    public var needsSignIn: Bool { error == "invalid_grant" || error == "interaction_required" }
    public var description: String { reason }

    public init(error: String, code: Int?, reason: String) {
        self.error = error
        self.code = code
        self.reason = reason
    }
}

/// The token endpoints' common ground (RFC 6749): a form posted within `HTTPClient`'s limits, never redirected,
/// its JSON answer in snake case, a refusal worded by the provider's own reader.
enum OAuth {
    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    static func post<Answer: Decodable>(
        _ form: [String: String], to url: URL, at place: String,
        refusal: (Data, Int, String) -> SignInRefusal
    ) async throws -> Answer {
        var request = HTTPClient.Request(
            method: "POST", url: url,
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
            body: Data(PKCE.form(form).utf8))
        request.credentials = nil
        var limits = HTTPClient.Limits()
        limits.largest = 1 << 20
        limits.redirects = nil
        let answer: HTTPClient.Answer
        switch await HTTPClient.send(request, limits: limits) {
        case .success(let got): answer = got
        case .failure(let failure):
            throw SignInRefusal(error: "unreachable", code: nil, reason: "cannot reach \(place): \(failure.reason)")
        }
        if (200..<300).contains(answer.status), let decoded = try? decoder.decode(Answer.self, from: answer.body) {
            return decoded
        }
        throw refusal(answer.body, answer.status, place)
    }

    /// A GET of a calendar API with an access token: never redirected (the token would go along to wherever a
    /// redirect points), within a minute and 16 MiB.
    static func get(_ url: URL, token: String, headers: [String: String] = [:]) async -> Result<
        HTTPClient.Answer, HTTPClient.Failure
    > {
        var request = HTTPClient.Request(
            url: url,
            headers: headers.merging(["Authorization": "Bearer " + token, "Accept": "application/json"]) { $1 })
        request.credentials = nil
        var limits = HTTPClient.Limits()
        limits.deadline = .seconds(60)
        limits.largest = 16 << 20
        limits.redirects = nil
        return await HTTPClient.send(request, limits: limits)
    }
}

/// Proof Key for Code Exchange (RFC 7636): a random verifier, its S256 challenge, and a random state.
public enum PKCE {
    /// 32 random bytes as base64url: 43 characters, within the 43 to 128 the RFC allows.
    public static func verifier() -> String { Base64URL.encode(random(32)) }

    public static func challenge(_ verifier: String) -> String {
        Base64URL.encode(Array(Crypto.SHA256.hash(data: Array(verifier.utf8))))
    }

    public static func state() -> String { Base64URL.encode(random(16)) }

    /// The code of the provider's answer (the query the browser was sent back with) to the sign-in of `state`; a
    /// refusal when the provider refused or the answer is not this sign-in's.
    public static func code(answering state: String, in query: [String: String]) throws(SignInRefusal) -> String {
        if let error = query["error"] {
            let said = TerminalText.safe(query["error_description"] ?? error, keepingLines: false)
            throw SignInRefusal(error: error, code: nil, reason: "the sign-in was refused: \(said)")
        }
        guard query["state"] == state, let code = query["code"], !code.isEmpty else {
            throw SignInRefusal(
                error: "state", code: nil,
                reason: "that is not the answer to this sign-in (its state differs, or it has no code); sign in again")
        }
        return code
    }

    static func random(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// `application/x-www-form-urlencoded`, keys sorted.
    static func form(_ fields: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }
}
