import CalWatchCore
import CalWatchRuntime
public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A Microsoft 365 or Outlook.com account's calendars kept in calwatch's cache through Microsoft Graph: one folder
/// per calendar (`<cache>/accounts/<name>/<calendar id's hash>/`, its `displayname` `<account>/<calendar>`), one
/// item per event of `calendarView/delta` over a window from a week back to a year ahead. A poll asks each calendar
/// what changed since its delta link; a new round (the first, a day old, or one Graph forgot: 410) reads the window
/// whole and drops what it no longer holds. Items are renamed into place only when their text changed, so the
/// daemon's watcher re-plans exactly them.
public final class GraphAccount: RemoteCalendar {
    public let settings: AccountSettings
    public let folder: String
    public let every: Duration
    /// Where the tokens are kept (`AccountTokens.folder()`; a test's own).
    let tokens: String
    private let counts = Locked((requests: 0, bytes: 0))
    /// How far back and ahead the window reaches, and how long a round lasts before the next reads it whole.
    static let back: TimeInterval = 7 * 86_400
    static let ahead: TimeInterval = 366 * 86_400
    static let roundLength: TimeInterval = 86_400
    /// Graph's pages: the most events per answer it is asked for.
    static let pageSize = 100

    public init(settings: AccountSettings, every: Int64, root: String, tokens: String = AccountTokens.folder()) {
        self.settings = settings
        self.every = .seconds(every)
        self.tokens = tokens
        folder = root + "/accounts/" + settings.name
    }

    public var shownURL: String { "account \(settings.name) (\(settings.graph.shown))" }
    public var hasCopy: Bool { !loadState().calendars.isEmpty }
    public var traffic: (requests: Int, bytes: Int)? { counts.withLock { ($0.requests, $0.bytes) } }
    public func fetch() async -> FeedFetcher.Outcome { await sync() }

    /// What the cache remembers between polls, in `.calwatch-account.json` (hidden: the reader skips it).
    struct State: Codable, Equatable {
        var user: String?
        var calendars: [String: Calendar] = [:]

        struct Calendar: Codable, Equatable {
            var folder: String
            var name: String
            var deltaLink: String?
            /// When the round the delta link belongs to began (its window starts a week before).
            var round: Date?
            /// Items by Graph's event id: their file in `folder`.
            var items: [String: String] = [:]
        }
    }

    private var statePath: String { folder + "/.calwatch-account.json" }

    func loadState() -> State {
        guard let data = FileManager.default.contents(atPath: statePath) else { return State() }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return (try? decoder.decode(State.self, from: data)) ?? State()
    }

    private func save(_ state: State) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        try FeedCache.replace(statePath, with: try encoder.encode(state))
    }

    /// Why a poll failed, worded for the user; `retryAfter` when Graph asked to wait.
    struct Failure: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
        var retryAfter: Duration? = nil
        /// The calendar's delta state is gone (410): read it whole.
        var forgotten = false
    }

    public func sync(now: Date = Date()) async -> FeedFetcher.Outcome {
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var state = loadState()
            let before = state
            var session = try await Session(account: self)
            if state.user == nil {
                state.user = try await session.user()
            }
            let calendars = try await session.calendars()
            let chosen = try choose(calendars)
            var written = 0
            var changed = false
            var failures: [String] = []
            for calendar in chosen {
                do {
                    let (bytes, moved) = try await follow(calendar, session: &session, state: &state, now: now)
                    written += bytes
                    changed = changed || moved
                } catch let failure as Failure where failure.retryAfter == nil {
                    failures.append("\(calendar.name): \(failure.reason)")
                }
            }
            let ids = Set(chosen.map(\.id))
            for (id, gone) in state.calendars where !ids.contains(id) {
                try? FileManager.default.removeItem(atPath: folder + "/" + gone.folder)
                state.calendars[id] = nil
                changed = true
            }
            if state != before {
                if written > 0 { try AtomicFile.syncFileSystem(holding: folder) }
                try save(state)
            }
            counts.withLock {
                $0.requests += session.requests
                $0.bytes += session.bytes
            }
            if !failures.isEmpty {
                return .failed("\(shownURL): " + failures.joined(separator: "; "), retryAfter: nil)
            }
            return changed ? .changed(bytes: written) : .unchanged
        } catch let failure as Failure {
            return .failed("\(shownURL): \(failure.reason)", retryAfter: failure.retryAfter)
        } catch {
            return .failed("\(shownURL): cannot keep its copy in \(folder): \(error)", retryAfter: nil)
        }
    }

    /// The calendars `calendars:` names (by name or id, any case), else all of them.
    private func choose(_ calendars: [Session.Calendar]) throws -> [Session.Calendar] {
        guard !settings.calendars.isEmpty else { return calendars }
        var chosen: [Session.Calendar] = []
        var missing: [String] = []
        for wanted in settings.calendars {
            if let found = calendars.first(where: { $0.id == wanted || $0.name.lowercased() == wanted.lowercased() }) {
                chosen.append(found)
            } else {
                missing.append(wanted)
            }
        }
        if !missing.isEmpty && chosen.isEmpty {
            throw Failure(
                reason: "no calendar named \(missing.map { "'\($0)'" }.joined(separator: ", ")); the account has "
                    + calendars.map { "'\(TerminalText.safe($0.name, keepingLines: false))'" }.joined(separator: ", "))
        }
        return chosen
    }

    /// One calendar brought in step: the bytes written and whether anything changed.
    private func follow(_ calendar: Session.Calendar, session: inout Session, state: inout State, now: Date)
        async throws
        -> (Int, Bool)
    {
        var kept =
            state.calendars[calendar.id]
            ?? State.Calendar(folder: "c" + SHA256.hex(Array(calendar.id.utf8)).prefix(16), name: calendar.name)
        let path = folder + "/" + kept.folder
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var changed = try Self.keep(
            CalendarReader.calendarName(settings.name + "/" + calendar.name), in: path + "/displayname")
        kept.name = calendar.name
        var written = 0
        let stale = kept.round.map { now.timeIntervalSince($0) > Self.roundLength || $0 > now } ?? true
        var whole = kept.deltaLink == nil || stale
        var pages: Session.Pages
        do {
            pages = try await read(calendar, session: &session, from: whole ? nil : kept.deltaLink, now: now)
        } catch let failure as Failure where failure.forgotten {
            whole = true
            pages = try await read(calendar, session: &session, from: nil, now: now)
        }
        var seen: Set<String> = []
        for event in pages.events {
            if event.removed != nil {
                if let file = kept.items.removeValue(forKey: event.id) {
                    try? FileManager.default.removeItem(atPath: path + "/" + file)
                    changed = true
                }
                continue
            }
            seen.insert(event.id)
            guard let text = event.calendar(user: state.user) else { continue }
            let file = kept.items[event.id] ?? (String(SHA256.hex(Array(event.id.utf8)).prefix(32)) + ".ics")
            kept.items[event.id] = file
            if try Self.keep(text, in: path + "/" + file, durable: false) {
                written += text.utf8.count
                changed = true
            }
        }
        if whole {
            for (id, file) in kept.items where !seen.contains(id) {
                try? FileManager.default.removeItem(atPath: path + "/" + file)
                kept.items[id] = nil
                changed = true
            }
            kept.round = now
        }
        kept.deltaLink = pages.deltaLink
        state.calendars[calendar.id] = kept
        return (written, changed)
    }

    /// Every page of a round, from the delta link or (`nil`) the window's start.
    private func read(_ calendar: Session.Calendar, session: inout Session, from link: String?, now: Date) async throws
        -> Session.Pages
    {
        if let link { return try await session.pages(from: link) }
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime]
        let start = format.string(from: now.addingTimeInterval(-Self.back))
        let end = format.string(from: now.addingTimeInterval(Self.ahead))
        var parts = URLComponents(
            url: settings.graph.appendingPathComponent("v1.0/me/calendars")
                .appendingPathComponent(calendar.id).appendingPathComponent("calendarView/delta"),
            resolvingAgainstBaseURL: false)!
        parts.queryItems = [
            URLQueryItem(name: "startDateTime", value: start), URLQueryItem(name: "endDateTime", value: end),
        ]
        return try await session.pages(from: parts.url!.absoluteString)
    }

    /// Writes `value` at `path` when it differs (or removes the file for `nil`): whether it changed.
    private static func keep(_ value: String?, in path: String, durable: Bool = true) throws -> Bool {
        let current = try? String(contentsOfFile: path, encoding: .utf8)
        guard current != value else { return false }
        if let value {
            try FeedCache.replace(path, with: Data(value.utf8), durable: durable)
        } else {
            try? FileManager.default.removeItem(atPath: path)
        }
        return true
    }

    // MARK: Tokens

    /// An access token: the one in hand while it has five minutes left, else a new one from the refresh token,
    /// whose rotated successor is saved before the access token is used. Refreshes are taken in turn across
    /// processes (a lock file beside the tokens): the daemon and `calwatch next` never spend one refresh token twice.
    public func accessToken(forcingRefresh: Bool = false, now: Date = Date()) async throws -> String {
        guard let held = try Self.loaded(settings.name, tokens) else {
            throw Failure(reason: "not signed in; run `calwatch account add \(settings.name)`")
        }
        if !forcingRefresh, let token = held.accessToken(at: now) { return token }
        let lock = try await Self.lock(AccountTokens.path(account: settings.name, folder: tokens) + ".lock")
        defer { close(lock) }
        // Another process may have refreshed while this one waited.
        guard var current = try Self.loaded(settings.name, tokens) else {
            throw Failure(reason: "not signed in; run `calwatch account add \(settings.name)`")
        }
        if let token = current.accessToken(at: now), current.accessToken != held.accessToken || !forcingRefresh {
            return token
        }
        let grant: MicrosoftIdentity.Grant
        do {
            grant = try await MicrosoftIdentity(settings).refresh(current.refreshToken)
        } catch let refusal as MicrosoftIdentity.Refusal {
            if refusal.needsSignIn {
                throw Failure(reason: "sign-in needed: \(refusal.reason); run `calwatch account add \(settings.name)`")
            }
            throw Failure(reason: refusal.reason)
        }
        current.refreshToken = grant.refreshToken ?? current.refreshToken
        current.accessToken = grant.accessToken
        current.expires = now.addingTimeInterval(TimeInterval(grant.expiresIn))
        current.saved = now
        try current.save(account: settings.name, folder: tokens)
        return grant.accessToken
    }

    private static func loaded(_ name: String, _ folder: String) throws -> AccountTokens? {
        do {
            return try AccountTokens.load(account: name, folder: folder)
        } catch let failure as AccountTokens.Failure {
            throw Failure(reason: failure.reason)
        }
    }

    /// An exclusive `flock` on `path`, asked for without blocking and again every 50 ms (never a blocking call on
    /// the cooperative pool), for at most 30 s.
    private static func lock(_ path: String) async throws -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw Failure(reason: "cannot open \(path): \(String(cString: strerror(errno)))") }
        for _ in 0..<600 {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return descriptor }
            try await Task.sleep(for: .milliseconds(50))
        }
        close(descriptor)
        throw Failure(reason: "another calwatch held \(path) for 30 s")
    }
}
