import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension Routes {
    /// `GET /v1/accounts/<name>/sign-in`: to the provider's sign-in page for the account, with PKCE; the browser
    /// comes back to `/`. 404 for an account this daemon does not sign in to this way.
    func accountSignIn(_ name: String) -> Response {
        guard let signIn = environment.accountSignIn, let address = signIn.start(name) else {
            return Self.signInPage(
                .notFound, "Not an account of this calwatch",
                "calwatch signs in here only to the accounts of its own config.yml.")
        }
        return Response(status: .seeOther, headers: [.location: address.absoluteString, .cacheControl: "no-store"])
    }

    /// `GET /?state=…&code=…`: the provider's answer to a sign-in started here, redeemed and kept.
    func signedIn(_ request: Request) async -> Response {
        var query: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { query[String(name)] = String(value) }
        guard let finish = environment.accountSignIn?.finish, let outcome = await finish(query) else {
            refused.note(.malformed)
            return Self.signInPage(
                .badRequest, "Not a sign-in of this calwatch",
                "This answer is to no sign-in started here, or it came after ten minutes; start again from the link.")
        }
        return outcome.signedIn
            ? Self.signInPage(.ok, "Signed in", outcome.said)
            : Self.signInPage(.forbidden, "Not signed in", outcome.said)
    }

    /// A page of one heading and one sentence, escaped, that loads nothing.
    static func signInPage(_ status: HTTPResponse.Status, _ title: String, _ text: String) -> Response {
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>calwatch: \(DayPage.escape(title))</title>
            </head><body><h1>\(DayPage.escape(title))</h1><p>\(DayPage.escape(text))</p></body></html>

            """
        return Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                .contentSecurityPolicy: "default-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            ],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
