import CalWatchCore
import Foundation

extension GraphAccount {
    /// Who signed in with `token`, from Graph's `/me` (`nil` when it does not say).
    public static func user(of settings: AccountSettings, token: String) async -> String? {
        let me = URL(string: settings.graph.absoluteString + "/v1.0/me?$select=mail,userPrincipalName")!
        guard case .success(let answer) = await OAuth.get(me, token: token), answer.status == 200,
            let me = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
        else { return nil }
        return ((me["mail"] as? String) ?? (me["userPrincipalName"] as? String))?.lowercased()
    }

    /// One poll's requests to Graph with one access token: renewed once when Graph refuses it (401), never sent to
    /// an address outside Graph's origin (a next page named elsewhere is refused), every answer within the HTTP
    /// client's limits.
    struct Session {
        let account: GraphAccount
        private var bearer: BearerSession
        var requests: Int { bearer.requests }
        var bytes: Int { bearer.bytes }

        init(account: GraphAccount) async throws {
            self.account = account
            bearer = try await BearerSession(keeper: account.keeper)
        }

        /// Another session of the same poll, on its access token (not loaded again), its counts from zero.
        func another() -> Session {
            var another = self
            another.bearer = bearer.another()
            return another
        }

        struct Calendar: Decodable {
            var id: String
            var name: String
        }

        /// A round's events, and the delta link the next poll starts from.
        struct Pages {
            var events: [GraphEvent] = []
            var deltaLink: String?
        }

        /// The signed-in address (`mail`, else `userPrincipalName`).
        mutating func user() async throws -> String? {
            struct Me: Decodable {
                var mail: String?
                var userPrincipalName: String?
            }
            let me: Me = try await get(
                account.settings.graph.absoluteString + "/v1.0/me?$select=mail,userPrincipalName")
            return (me.mail ?? me.userPrincipalName)?.lowercased()
        }

        /// Every calendar of the user's, following `@odata.nextLink`.
        mutating func calendars() async throws -> [Calendar] {
            struct Page: Decodable {
                var value: [Calendar]
                var next: String?
                enum CodingKeys: String, CodingKey {
                    case value
                    case next = "@odata.nextLink"
                }
            }
            var link: String? = account.settings.graph.absoluteString + "/v1.0/me/calendars?$select=id,name&$top=100"
            var found: [Calendar] = []
            while let next = link, found.count < 1_000 {
                let page: Page = try await get(next)
                found += page.value
                link = page.next
            }
            return found
        }

        /// Every page from `link` to the delta link, at most 1,000 pages.
        mutating func pages(from link: String) async throws -> Pages {
            struct Page: Decodable {
                var value: [GraphEvent]
                var next: String?
                var delta: String?
                enum CodingKeys: String, CodingKey {
                    case value
                    case next = "@odata.nextLink"
                    case delta = "@odata.deltaLink"
                }
            }
            var result = Pages()
            var link = link
            for _ in 0..<1_000 {
                let page: Page = try await get(link)
                result.events += page.value
                if let delta = page.delta {
                    result.deltaLink = delta
                    return result
                }
                guard let next = page.next else { break }
                link = next
            }
            throw AccountFailure(reason: "Graph's pages did not end in a delta link")
        }

        /// One GET of Graph, decoded as `Answer`.
        private mutating func get<Answer: Decodable>(_ link: String) async throws -> Answer {
            guard let url = URL(string: link), url.origin == account.settings.graph.origin else {
                throw AccountFailure(
                    reason: "Graph named a next page outside \(account.settings.graph.shown); it was not asked")
            }
            let prefer =
                "odata.maxpagesize=\(GraphAccount.pageSize), IdType=\"ImmutableId\", outlook.timezone=\"UTC\", "
                + "outlook.body-content-type=\"text\""
            return try await bearer.get(url, headers: ["Prefer": prefer], service: "Graph", refused: Self.failure)
        }

        /// Graph's refusal (`{"error": {"code", "message"}}`) worded, with what to do.
        static func failure(_ answer: HTTPClient.Answer, at url: URL) -> AccountFailure {
            struct Body: Decodable {
                struct Inner: Decodable {
                    var code: String?
                    var message: String?
                }
                var error: Inner?
            }
            let said = (try? JSONDecoder().decode(Body.self, from: answer.body))?.error
            let code = said?.code ?? ""
            let message = TerminalText.safe(String((said?.message ?? "").prefix(200)), keepingLines: false)
            let detail = code.isEmpty ? "" : " (\(code)\(message.isEmpty ? "" : ": " + message))"
            switch answer.status {
            case 410:
                return AccountFailure(reason: "Graph forgot the calendar's changes\(detail)", forgotten: true)
            case 400 where code == "syncStateNotFound" || code == "resyncRequired" || code == "syncStateInvalid":
                return AccountFailure(reason: "Graph forgot the calendar's changes\(detail)", forgotten: true)
            case 429, 503, 504:
                let wait = HTTPDate.retryAfter(answer.headers["retry-after"], now: Date()) ?? 60
                return AccountFailure(
                    reason: "Graph asked to wait \(wait) s (HTTP \(answer.status))\(detail)", retryAfter: .seconds(wait)
                )
            case 401:
                return AccountFailure(
                    reason: "Graph refused the sign-in (HTTP 401)\(detail); run `calwatch account add`")
            case 403:
                return AccountFailure(
                    reason: "Graph refused access (HTTP 403)\(detail); the application needs Calendars.Read")
            default:
                return AccountFailure(reason: "Graph answered HTTP \(answer.status) at \(url.path)\(detail)")
            }
        }
    }
}
