import CalWatchCore
import Foundation

extension GoogleAccount {
    /// Who signed in with `token`: the id of their primary calendar, their address (`nil` when Google does not say).
    public static func user(of settings: AccountSettings, token: String) async -> String? {
        let primary = settings.api.appendingPathComponent("calendar/v3/calendars/primary")
        guard case .success(let answer) = await OAuth.get(primary, token: token), answer.status == 200,
            let calendar = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
        else { return nil }
        return (calendar["id"] as? String)?.lowercased()
    }

    /// One poll's requests to the Calendar API with one access token, renewed once when Google refuses it (401);
    /// every answer within the HTTP client's limits, never redirected.
    struct Session {
        let account: GoogleAccount
        private var bearer: BearerSession
        var requests: Int { bearer.requests }
        var bytes: Int { bearer.bytes }

        init(account: GoogleAccount) async throws {
            self.account = account
            bearer = try await BearerSession(keeper: account.keeper)
        }

        struct Pages {
            var events: [GoogleEvent] = []
            var syncToken: String?
        }

        /// The user's calendar list, every page.
        mutating func calendars() async throws -> [ListedCalendar] {
            struct Page: Decodable {
                var items: [ListedCalendar]?
                var nextPageToken: String?
            }
            var found: [ListedCalendar] = []
            var pageToken: String?
            for _ in 0..<40 {
                var query = [URLQueryItem(name: "maxResults", value: "250")]
                if let pageToken { query.append(URLQueryItem(name: "pageToken", value: pageToken)) }
                let page: Page = try await get("calendar/v3/users/me/calendarList", query)
                found += page.items ?? []
                guard let next = page.nextPageToken else { return found }
                pageToken = next
            }
            return found
        }

        /// Every page of the calendar's events: all of them (`syncToken` nil) or what changed since the token.
        mutating func events(_ calendar: String, syncToken: String?) async throws -> Pages {
            struct Page: Decodable {
                var items: [GoogleEvent]?
                var nextPageToken: String?
                var nextSyncToken: String?
            }
            var result = Pages()
            var pageToken: String?
            let path = "calendar/v3/calendars/" + Self.segment(calendar) + "/events"
            for _ in 0..<1_000 {
                var query = [
                    URLQueryItem(name: "singleEvents", value: "false"),
                    URLQueryItem(name: "maxResults", value: "\(GoogleAccount.pageSize)"),
                    URLQueryItem(name: "timeZone", value: "UTC"),
                ]
                if let syncToken { query.append(URLQueryItem(name: "syncToken", value: syncToken)) }
                if let pageToken { query.append(URLQueryItem(name: "pageToken", value: pageToken)) }
                let page: Page = try await get(path, query)
                result.events += page.items ?? []
                if let next = page.nextSyncToken, page.nextPageToken == nil {
                    result.syncToken = next
                    return result
                }
                guard let next = page.nextPageToken else { return result }
                pageToken = next
            }
            throw AccountFailure(reason: "Google's pages of \(calendar) did not end")
        }

        /// A calendar id as one path segment (`team@group.calendar.google.com`, `#` in holiday calendars' ids).
        static func segment(_ id: String) -> String {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~@")
            return id.addingPercentEncoding(withAllowedCharacters: allowed) ?? id
        }

        private mutating func get<Answer: Decodable>(_ path: String, _ query: [URLQueryItem]) async throws -> Answer {
            var parts = URLComponents(
                url: account.settings.api.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
            parts.percentEncodedPath = account.settings.api.path + "/" + path
            parts.queryItems = query
            return try await bearer.get(parts.url!, service: "Google", refused: Self.failure)
        }

        /// Google's refusal (`{"error": {"code", "message", "errors": [{"reason"}]}}`) worded, with what to do.
        static func failure(_ answer: HTTPClient.Answer, at url: URL) -> AccountFailure {
            struct Body: Decodable {
                struct Inner: Decodable {
                    struct Detail: Decodable { var reason: String? }
                    var message: String?
                    var errors: [Detail]?
                }
                var error: Inner?
            }
            let said = (try? JSONDecoder().decode(Body.self, from: answer.body))?.error
            let reason = said?.errors?.first?.reason ?? ""
            let message = TerminalText.safe(String((said?.message ?? "").prefix(200)), keepingLines: false)
            let detail = reason.isEmpty ? "" : " (\(reason)\(message.isEmpty ? "" : ": " + message))"
            let limited = ["rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded"].contains(reason)
            let status = answer.status
            if status == 410 {
                return AccountFailure(reason: "Google forgot the calendar's sync token\(detail)", forgotten: true)
            }
            if [429, 500, 503].contains(status) || (status == 403 && limited) {
                let wait = HTTPDate.retryAfter(answer.headers["retry-after"], now: Date()) ?? 60
                return AccountFailure(
                    reason: "Google asked to wait \(wait) s (HTTP \(status))\(detail)", retryAfter: .seconds(wait))
            }
            switch status {
            case 401:
                return AccountFailure(
                    reason: "Google refused the sign-in (HTTP 401)\(detail); run `calwatch account add`")
            case 403: return AccountFailure(reason: "Google refused access (HTTP 403)\(detail)")
            case 404: return AccountFailure(reason: "no such calendar (HTTP 404)\(detail)")
            default: return AccountFailure(reason: "Google answered HTTP \(status) at \(url.path)\(detail)")
            }
        }
    }
}
