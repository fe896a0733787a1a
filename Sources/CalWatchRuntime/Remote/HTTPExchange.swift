import CalWatchCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request as feeds and CalDAV accounts send it, through FoundationNetworking's URLSession (libcurl: TLS,
/// HTTP/2, gzip and redirects, nothing to build): an ephemeral session with no cache and no cookies, a time limit,
/// a bounded number of redirects, and its failures worded for the user.
enum HTTPExchange {
    enum Answer {
        case answered(Data, HTTPURLResponse)
        /// The server asked for credentials (a 401 challenge), refused by `SessionRules`.
        case refused
        /// No answer: why, worded for the user (without the address, which the caller adds).
        case failed(String)
    }

    static func send(_ request: URLRequest, timeout: Duration, redirects: Int) async -> Answer {
        let rules = SessionRules(most: redirects)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Double(timeout.components.seconds)
        configuration.timeoutIntervalForResource = Double(timeout.components.seconds)
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        let session = URLSession(configuration: configuration, delegate: rules, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        do {
            let (body, answer) = try await session.uncancellableData(for: request)
            guard let http = answer as? HTTPURLResponse else { return .failed("not an HTTP answer") }
            return .answered(body, http)
        } catch {
            return rules.wasRefused ? .refused : .failed(describe(error))
        }
    }

    static func describe(_ error: any Error) -> String {
        let error = error as NSError
        switch (error.domain, error.code) {
        case (NSURLErrorDomain, NSURLErrorTimedOut): return "no answer in time"
        case (NSURLErrorDomain, NSURLErrorCannotConnectToHost): return "cannot connect (is the server up?)"
        case (NSURLErrorDomain, NSURLErrorCannotFindHost): return "unknown host"
        case (NSURLErrorDomain, NSURLErrorNetworkConnectionLost): return "the connection was cut"
        case (NSURLErrorDomain, let code) where (-1299 ... -1200).contains(code):
            return "TLS failed: \(error.localizedDescription)"
        default:
            let text = error.localizedDescription
            // libcurl's words for a body shorter than its Content-Length.
            return text.contains("transfer closed") ? "the answer was cut off (\(text))" : text
        }
    }
}

extension URLSession {
    /// `data(for:)`, out of reach of the caller's cancellation. FoundationNetworking deadlocks when a task is
    /// cancelled while its answer is being delivered: the canceller holds the task's status lock and waits for the
    /// session's queue, and the queue waits for the lock to resume the task. Seen when a stopping poller cancelled a
    /// fetch in flight: two threads of the cooperative pool stuck for good. The request ends by its own timeout.
    func uncancellableData(for request: URLRequest) async throws -> (Data, URLResponse) {
        try await Task.detached { try await self.data(for: request) }.value
    }
}

/// The rules of one request's session: redirects followed up to `most` (the last 3xx is then the answer), and a
/// server's request for a password refused at once (calwatch sends its credentials with the request; left to
/// FoundationNetworking, a 401 was never answered), remembered so the caller words it as the 401 it was.
/// `@unchecked`: URLSession wants an NSObject, which the checker cannot see into; every mutable state is `Locked`.
final class SessionRules: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    private let most: Int
    private let followed = Locked(0)
    private let refused = Locked(false)

    init(most: Int) { self.most = most }

    /// Whether the server asked for credentials (an HTTP 401).
    var wasRefused: Bool { refused.withLock { $0 } }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let count = followed.withLock { count in
            count += 1
            return count
        }
        completionHandler(count > most ? nil : request)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        refused.withLock { $0 = true }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }
}
