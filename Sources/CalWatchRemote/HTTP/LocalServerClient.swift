import CalWatchCore
import Foundation

/// Asks the local server of a running daemon (`calwatch watch`, `serve:`) over the Unix socket beside its journal.
public enum LocalServerClient {
    /// What the server answered.
    public struct Answer: Sendable {
        public var status: Int
        public var body: String
    }

    /// `GET path` (with its query) on the daemon of the journal at `journal`; `nil` when none answers within
    /// `timeout` (none runs, serve: off, or it is busy).
    public static func get(_ path: String, journal: String, timeout: Duration = .seconds(2)) async -> Answer? {
        let socket = ServeSettings.socketPath(journal: journal)
        guard FileManager.default.fileExists(atPath: socket), let url = URL(string: "http://localhost" + path) else {
            return nil
        }
        var request = HTTPClient.Request(url: url)
        request.unixSocket = socket
        var limits = HTTPClient.Limits()
        limits.deadline = timeout
        limits.redirects = 0
        limits.largest = 64 << 20
        guard case .success(let answer) = await HTTPClient.send(request, limits: limits) else { return nil }
        return Answer(status: answer.status, body: String(decoding: answer.body, as: UTF8.self))
    }

    /// `text` for a query: everything but unreserved characters percent-encoded.
    public static func query(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))
            ?? ""
    }
}
