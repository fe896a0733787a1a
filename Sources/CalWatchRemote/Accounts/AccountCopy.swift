import CalWatchCore
import CalWatchRuntime
import Foundation

/// Why an account's poll or sign-in failed, worded for the user (never with a token in it); `retryAfter` when the
/// service asked to wait, `forgotten` when it no longer knows the sync state a poll started from (read whole).
public struct AccountFailure: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var retryAfter: Duration? = nil
    var forgotten = false
    /// Why only signing in again helps (`calwatch account add`), without what to do; `nil` when something else may.
    public var signInCause: String?
    public var needsSignIn: Bool { signInCause != nil }
    public var description: String { reason }

    /// The sign-in of `account` lapsed, was revoked or never happened, as `cause` says; `reason` adds what to do.
    init(signIn cause: String, account: String) {
        self.init(signIn: cause, run: "calwatch account add \(account)")
    }

    /// The sign-in lapsed as `cause` says; `command` signs in again.
    public init(signIn cause: String, run command: String) {
        self.init(reason: "sign-in needed: \(cause); run `\(command)`")
        signInCause = cause
    }

    public init(reason: String, retryAfter: Duration? = nil) {
        self.reason = reason
        self.retryAfter = retryAfter
    }

    init(reason: String, retryAfter: Duration? = nil, forgotten: Bool) {
        self.init(reason: reason, retryAfter: retryAfter)
        self.forgotten = forgotten
    }
}

/// An account's folder in the cache and what both kinds of account do with it: the record of what was read
/// (`.calwatch-account.json`, hidden from the reader), one poll's frame, and files written only when they change.
struct AccountCopy<State: Codable & Equatable>: Sendable {
    let folder: String

    init(root: String, account: String) {
        folder = root + "/accounts/" + account
    }

    private var statePath: String { folder + "/.calwatch-account.json" }

    /// Whether a poll has written the record.
    var exists: Bool { FileManager.default.fileExists(atPath: statePath) }

    func load() -> State? {
        guard let data = FileManager.default.contents(atPath: statePath) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(State.self, from: data)
    }

    /// One poll: `body` brings the state and the folders in step and says what it wrote, whether anything changed
    /// and which calendars failed (the others are still read). The items are durable before the record naming them.
    func poll(
        shown: String, keeper: AccountTokenKeeper, polls: AccountPolls, empty: State,
        _ body: (inout State) async throws -> (written: Int, changed: Bool, failures: [String])
    ) async -> FeedFetcher.Outcome {
        let account = keeper.settings.own
        var lapse: AccountNotice?
        defer {
            polls.lapse.withLock { $0 = lapse }
            CalwatchMetrics.account(account, signInNeeded: lapse != nil)
        }
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var state = load() ?? empty
            let before = state
            let (written, changed, failures) = try await body(&state)
            if state != before {
                if written > 0 { try AtomicFile.syncFileSystem(holding: folder) }
                let encoder = JSONEncoder()
                encoder.dateEncodingStrategy = .iso8601
                encoder.outputFormatting = [.sortedKeys]
                try FeedCache.replace(statePath, with: try encoder.encode(state))
            }
            if !failures.isEmpty { return .failed("\(shown): " + failures.joined(separator: "; "), retryAfter: nil) }
            CalwatchMetrics.account(account, syncedAt: Date().timeIntervalSince1970)
            return changed ? .changed(bytes: written) : .unchanged
        } catch let failure as AccountFailure {
            if failure.needsSignIn { lapse = keeper.notice(failure) }
            return .failed("\(shown): \(failure.reason)", retryAfter: failure.retryAfter)
        } catch {
            return .failed("\(shown): cannot keep its copy in \(folder): \(error)", retryAfter: nil)
        }
    }

    /// A calendar's folder, made when missing, with its name `<account>/<calendar>`: whether the name changed.
    func calendarFolder(_ name: String, account: String) throws -> (path: String, renamed: Bool) {
        let path = folder + "/" + name
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return (path, try Self.keep(CalendarReader.calendarName(account), in: path + "/displayname"))
    }

    /// Removes the folders of calendars no longer read: whether any was.
    func drop(_ folders: [String]) -> Bool {
        for gone in folders { try? FileManager.default.removeItem(atPath: folder + "/" + gone) }
        return !folders.isEmpty
    }

    /// Writes `value` at `path` when it differs (or removes the file for `nil`): whether it changed.
    static func keep(_ value: String?, in path: String, durable: Bool = true) throws -> Bool {
        let current = try? String(contentsOfFile: path, encoding: .utf8)
        guard current != value else { return false }
        if let value {
            try FeedCache.replace(path, with: Data(value.utf8), durable: durable)
        } else {
            try? FileManager.default.removeItem(atPath: path)
        }
        return true
    }
}

/// What an account's polls leave for the poller: the requests and bytes so far, and the last poll's lapsed sign-in.
final class AccountPolls: Sendable {
    let counts = Locked((requests: 0, bytes: 0))
    let lapse = Locked<AccountNotice?>(nil)

    var traffic: (requests: Int, bytes: Int) { counts.withLock { ($0.requests, $0.bytes) } }

    /// Counts a poll's requests.
    func add(requests: Int, bytes: Int) {
        counts.withLock { ($0.requests, $0.bytes) = ($0.requests + requests, $0.bytes + bytes) }
    }
}

/// One poll's requests to a calendar API with one access token, renewed once when the service refuses it (401);
/// every answer within the HTTP client's limits, never redirected (the token would go along).
struct BearerSession {
    let keeper: AccountTokenKeeper
    private var token: String
    private var renewed = false
    private(set) var requests = 0
    private(set) var bytes = 0

    init(keeper: AccountTokenKeeper) async throws {
        self.keeper = keeper
        token = try await keeper.accessToken()
    }

    /// Another session on the same access token, its counts from zero: one poll's requests made side by side.
    func another() -> BearerSession {
        var another = self
        (another.renewed, another.requests, another.bytes) = (false, 0, 0)
        return another
    }

    /// A GET decoded as `Answer`; any other status than 2xx (and a first 401) is `refused`'s failure.
    mutating func get<Answer: Decodable>(
        _ url: URL, headers: [String: String] = [:], service: String,
        refused: (HTTPClient.Answer, URL) -> AccountFailure
    ) async throws -> Answer {
        while true {
            requests += 1
            let answer: HTTPClient.Answer
            switch await OAuth.get(url, token: token, headers: headers) {
            case .success(let got): answer = got
            case .failure(let failure): throw AccountFailure(reason: failure.reason)
            }
            bytes += answer.received
            switch answer.status {
            case 200..<300:
                do {
                    return try JSONDecoder().decode(Answer.self, from: answer.body)
                } catch {
                    throw AccountFailure(reason: "\(service)'s answer at \(url.path) is not the JSON it documents")
                }
            case 401 where !renewed:
                renewed = true
                token = try await keeper.accessToken(replacing: token)
            default:
                throw refused(answer, url)
            }
        }
    }
}
