public import CalWatchCore
import CalWatchRuntime
public import Foundation

/// A Microsoft 365 or Outlook.com account's calendars kept in calwatch's cache through Microsoft Graph: one folder
/// per calendar (`<cache>/accounts/<name>/<calendar id's hash>/`, its `displayname` `<account>/<calendar>`), one
/// item per event of `calendarView/delta` over a window from a week back to a year ahead. A poll asks each calendar
/// what changed since its delta link; a new round (the first, a day old, or one Graph forgot: 410) reads the window
/// whole and drops what it no longer holds. Items are renamed into place only when their text changed, so the
/// daemon's watcher re-plans exactly them.
public final class GraphAccount: RemoteCalendar {
    public let settings: AccountSettings
    public let every: Duration
    let root: String
    /// Where the tokens are kept (`AccountTokens.folder()`; a test's own).
    let tokens: String
    private let polls = AccountPolls()
    private let renewal = DeviceCodeRenewal()
    /// How far back and ahead the window reaches, and how long a round lasts before the next reads it whole.
    static let back: TimeInterval = 7 * 86_400
    static let ahead: TimeInterval = 366 * 86_400
    static let roundLength: TimeInterval = 86_400
    /// Graph's pages: the most events per answer it is asked for.
    static let pageSize = 100
    /// Calendars read at once: Graph allows a mailbox four requests at a time and throttles past that.
    static let requestsAtOnce = 4

    /// One calendar's part of a poll: what is kept of it now, or why it was not read.
    private struct Followed: Sendable {
        var calendar: Session.Calendar
        var kept: State.Calendar?
        var written = 0
        var changed = false
        var failure: String?
    }

    public init(settings: AccountSettings, every: Int64, root: String, tokens: String = AccountTokens.folder()) {
        self.settings = settings
        self.every = .seconds(every)
        self.tokens = tokens
        self.root = root
    }

    public var folder: String { copy.folder }
    public var signedIn: Date? { keeper.signedIn }

    public var shownURL: String { "account \(settings.own) (\(settings.graph.shown))" }
    /// A poll has kept something: the record exists (not read whole: it lists every item).
    public var hasCopy: Bool { copy.exists }
    public var traffic: (requests: Int, bytes: Int)? { polls.traffic }
    public var signInNeeded: AccountNotice? { polls.lapse.withLock { $0 } }
    public func fetch() async -> FeedFetcher.Outcome { await sync() }

    /// With `renewByDeviceCode`, the lapse's device code.
    public func signInNotice() async -> AccountNotice? {
        guard var lapse = signInNeeded else { return nil }
        if settings.renewByDeviceCode { lapse.deviceCode = await renewal.code(for: lapse, keeper: keeper) }
        return lapse
    }

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

    var copy: AccountCopy<State> { AccountCopy(root: root, account: settings.own) }

    public func sync(now: Date = Date()) async -> FeedFetcher.Outcome {
        await copy.poll(shown: shownURL, keeper: keeper, polls: polls, empty: State()) { state in
            var session = try await Session(account: self)
            defer { polls.add(requests: session.requests, bytes: session.bytes) }
            if state.user == nil { state.user = try await session.user() }
            let chosen = try choose(try await session.calendars())
            var (written, changed, failures) = (0, false, [String]())
            let (user, held, base) = (state.user, state.calendars, session)
            // Several calendars at once, each on a session of its own, never more than Graph allows a mailbox.
            try await withThrowingTaskGroup(of: Followed.self) { group in
                var waiting = chosen.makeIterator()
                func start() {
                    guard let calendar = waiting.next() else { return }
                    group.addTask {
                        var own = base.another()
                        defer { self.polls.add(requests: own.requests, bytes: own.bytes) }
                        var kept =
                            held[calendar.id]
                            ?? State.Calendar(
                                folder: "c" + SHA256.hex(Array(calendar.id.utf8)).prefix(16), name: calendar.name)
                        do {
                            let (bytes, moved) = try await self.follow(
                                calendar, kept: &kept, user: user, session: &own, now: now)
                            return Followed(calendar: calendar, kept: kept, written: bytes, changed: moved)
                        } catch let failure as AccountFailure where failure.retryAfter == nil {
                            return Followed(calendar: calendar, failure: failure.reason)
                        }
                    }
                }
                for _ in 0..<Self.requestsAtOnce { start() }
                while let followed = try await group.next() {
                    if let failure = followed.failure {
                        failures.append("\(followed.calendar.name): \(failure)")
                    } else {
                        state.calendars[followed.calendar.id] = followed.kept
                        written += followed.written
                        changed = changed || followed.changed
                    }
                    start()
                }
            }
            let gone = state.calendars.filter { id, _ in !chosen.contains { $0.id == id } }
            for id in gone.keys { state.calendars[id] = nil }
            changed = copy.drop(gone.values.map(\.folder)) || changed
            return (written, changed, failures)
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
            throw AccountFailure(
                reason: "no calendar named \(missing.map { "'\($0)'" }.joined(separator: ", ")); the account has "
                    + calendars.map { "'\(TerminalText.safe($0.name, keepingLines: false))'" }.joined(separator: ", "))
        }
        return chosen
    }

    /// One calendar brought in step: the bytes written and whether anything changed.
    private func follow(
        _ calendar: Session.Calendar, kept: inout State.Calendar, user: String?, session: inout Session, now: Date
    ) async throws -> (Int, Bool) {
        var (path, changed) = try copy.calendarFolder(kept.folder, account: settings.name + "/" + calendar.name)
        kept.name = calendar.name
        var written = 0
        let stale = kept.round.map { now.timeIntervalSince($0) > Self.roundLength || $0 > now } ?? true
        var whole = kept.deltaLink == nil || stale
        var pages: Session.Pages
        do {
            pages = try await read(calendar, session: &session, from: whole ? nil : kept.deltaLink, now: now)
        } catch let failure as AccountFailure where failure.forgotten {
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
            guard let text = event.calendar(user: user) else { continue }
            let file = kept.items[event.id] ?? (String(SHA256.hex(Array(event.id.utf8)).prefix(32)) + ".ics")
            kept.items[event.id] = file
            if try AccountCopy<State>.keep(text, in: path + "/" + file, durable: false) {
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

    var keeper: AccountTokenKeeper { AccountTokenKeeper(settings: settings, folder: tokens) }
}
