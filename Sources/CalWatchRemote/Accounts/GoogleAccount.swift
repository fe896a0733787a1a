public import CalWatchCore
import CalWatchRuntime
public import Foundation

/// A Google account's calendars kept in calwatch's cache through the Calendar API: one folder per calendar
/// (`<cache>/accounts/<name>/<calendar id's hash>/`, its `displayname` `<account>/<calendar>`), one item per series
/// or single event (its `iCalUID`), holding the series' master and its changed and cancelled instances, which
/// calwatch expands as it does any calendar's. A poll asks each calendar what changed since its `nextSyncToken`; a
/// full sync (the first, a token Google forgot: 410, or the calendar's default reminders changed) reads every event
/// and drops what Google no longer holds. Items are renamed into place only when their text changed.
public final class GoogleAccount: RemoteCalendar {
    public let settings: AccountSettings
    public let every: Duration
    let root: String
    let tokens: String
    private let polls = AccountPolls()
    /// Events per page (Google allows up to 2,500; 250 is its default).
    static let pageSize = 250

    public init(settings: AccountSettings, every: Int64, root: String, tokens: String = AccountTokens.folder()) {
        self.settings = settings
        self.every = .seconds(every)
        self.tokens = tokens
        self.root = root
    }

    public var folder: String { copy.folder }
    public var signedIn: Date? { keeper.signedIn }

    public var shownURL: String { "account \(settings.own) (\(settings.api.shown))" }
    /// A poll has kept something: the record exists (not read whole: it lists every item).
    public var hasCopy: Bool { copy.exists }
    public var traffic: (requests: Int, bytes: Int)? { polls.traffic }
    public var signInNeeded: AccountNotice? { polls.lapse.withLock { $0 } }
    public func fetch() async -> FeedFetcher.Outcome { await sync() }

    /// What the cache remembers between polls, in `.calwatch-account.json`.
    struct State: Codable, Equatable {
        var user: String?
        var calendars: [String: Calendar] = [:]

        struct Calendar: Codable, Equatable {
            var folder: String
            var name: String
            var syncToken: String?
            /// The calendar's default reminders (minutes), which events with `useDefault` take.
            var defaults: [Int] = []
            /// Each event's item (its UID).
            var events: [String: String] = [:]
        }
    }

    var copy: AccountCopy<State> { AccountCopy(root: root, account: settings.own) }

    struct ListedCalendar: Decodable {
        var id: String
        var summary: String?
        var summaryOverride: String?
        var primary: Bool?
        var selected: Bool?
        var defaultReminders: [GoogleEvent.Reminder]?

        var name: String { summaryOverride ?? summary ?? id }
    }

    public func sync() async -> FeedFetcher.Outcome {
        await copy.poll(shown: shownURL, keeper: keeper, polls: polls, empty: State()) { state in
            var session = try await Session(account: self)
            defer { polls.add(requests: session.requests, bytes: session.bytes) }
            let calendars = try await session.calendars()
            state.user = calendars.first { $0.primary == true }?.id.lowercased() ?? state.user
            let chosen = try choose(calendars)
            var (written, changed, failures) = (0, false, [String]())
            for calendar in chosen {
                do {
                    let (bytes, moved) = try await follow(calendar, session: &session, state: &state)
                    written += bytes
                    changed = changed || moved
                } catch let failure as AccountFailure where failure.retryAfter == nil {
                    failures.append("\(calendar.name): \(failure.reason)")
                }
            }
            let gone = state.calendars.filter { id, _ in !chosen.contains { $0.id == id } }
            for id in gone.keys { state.calendars[id] = nil }
            changed = copy.drop(gone.values.map(\.folder)) || changed
            return (written, changed, failures)
        }
    }

    /// The calendars `calendars:` names (by name or id), else the user's own and those shown in their list.
    private func choose(_ calendars: [ListedCalendar]) throws -> [ListedCalendar] {
        guard !settings.calendars.isEmpty else { return calendars.filter { $0.primary == true || $0.selected == true } }
        let chosen = calendars.filter { calendar in
            settings.calendars.contains { $0 == calendar.id || $0.lowercased() == calendar.name.lowercased() }
        }
        if chosen.isEmpty {
            throw AccountFailure(
                reason: "no calendar named " + settings.calendars.map { "'\($0)'" }.joined(separator: ", ")
                    + "; the account has "
                    + calendars.map { "'\(TerminalText.safe($0.name, keepingLines: false))'" }.joined(separator: ", "))
        }
        return chosen
    }

    /// One calendar brought in step: the bytes written and whether anything changed.
    private func follow(_ calendar: ListedCalendar, session: inout Session, state: inout State) async throws -> (
        Int, Bool
    ) {
        var kept =
            state.calendars[calendar.id]
            ?? State.Calendar(folder: "g" + SHA256.hex(Array(calendar.id.utf8)).prefix(16), name: calendar.name)
        var (path, changed) = try copy.calendarFolder(kept.folder, account: settings.name + "/" + calendar.name)
        kept.name = calendar.name
        let defaults = (calendar.defaultReminders ?? []).compactMap(\.minutes)
        var whole = kept.syncToken == nil || defaults != kept.defaults
        var pages: Session.Pages
        do {
            pages = try await session.events(calendar.id, syncToken: whole ? nil : kept.syncToken)
        } catch let failure as AccountFailure where failure.forgotten {
            whole = true
            pages = try await session.events(calendar.id, syncToken: nil)
        }
        kept.defaults = defaults
        // What each item holds: its events' VEVENTs by event id, read back from its file unless read whole now.
        var items: [String: [String: [String]]] = [:]
        var touched: Set<String> = []
        if whole { touched = Set(kept.events.values) }
        func blocks(of uid: String) -> [String: [String]] {
            if let found = items[uid] { return found }
            let found = whole ? [:] : Self.blocks(in: path + "/" + Self.file(uid))
            items[uid] = found
            return found
        }
        if whole { kept.events = [:] }
        let reminders = defaults.map { GoogleEvent.Reminder(method: "popup", minutes: $0) }
        // A series' UID by its master's id, for instances that come without one (a deleted instance).
        var series = kept.events
        for event in pages.events where event.recurringEventId == nil && !event.isCancelled {
            series[event.id] = event.uid
        }
        // Series deleted now: their instances' cancellations, which come too, are not kept as items of their own.
        let deleted = Set(pages.events.filter { $0.isCancelled && $0.recurringEventId == nil }.map(\.id))
        for event in pages.events {
            if let master = event.recurringEventId, deleted.contains(master) { continue }
            let uid =
                event.recurringEventId.flatMap { event.iCalUID ?? series[$0] } ?? kept.events[event.id] ?? event.uid
            var held = blocks(of: uid)
            touched.insert(uid)
            if event.isCancelled && event.recurringEventId == nil {
                // A series or single event deleted: its item goes, instances and all.
                held = [:]
                kept.events = kept.events.filter { $0.value != uid }
            } else if let lines = event.component(uid: uid, user: state.user, defaults: reminders) {
                // Its Google id inside it, so that a later change to one instance rewrites only that VEVENT.
                held[event.id] =
                    [lines[0], "X-CALWATCH-GOOGLE-ID:" + ICalendarLines.text(event.id)] + lines.dropFirst()
                kept.events[event.id] = uid
            }
            items[uid] = held
        }
        var written = 0
        for uid in touched {
            let file = path + "/" + Self.file(uid)
            let held = items[uid] ?? [:]
            guard !held.isEmpty else {
                changed = try AccountCopy<State>.keep(nil, in: file) || changed
                continue
            }
            // The master (no RECURRENCE-ID) first, then the instances, each in a stable order.
            let ordered = held.sorted { left, right in
                let (l, r) = (
                    left.value.contains { $0.hasPrefix("RECURRENCE-ID") },
                    right.value.contains { $0.hasPrefix("RECURRENCE-ID") }
                )
                return l != r ? !l : left.key < right.key
            }
            var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch//Google Calendar//EN"]
            for (_, block) in ordered { lines += block }
            lines += ["END:VCALENDAR", ""]
            let text = lines.map(ICalendarLines.folded).joined(separator: "\r\n")
            if try AccountCopy<State>.keep(text, in: file, durable: false) {
                written += text.utf8.count
                changed = true
            }
        }
        kept.syncToken = pages.syncToken
        state.calendars[calendar.id] = kept
        return (written, changed)
    }

    static func file(_ uid: String) -> String { String(SHA256.hex(Array(uid.utf8)).prefix(32)) + ".ics" }

    /// The VEVENTs of an item file this class wrote, by the Google event id each carries (unfolded).
    static func blocks(in path: String) -> [String: [String]] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        var found: [String: [String]] = [:]
        var current: [String]?
        for line in text.replacingOccurrences(of: "\r\n ", with: "").split(separator: "\r\n").map(String.init) {
            if line == "BEGIN:VEVENT" {
                current = [line]
            } else if line == "END:VEVENT", let block = current {
                current = nil
                guard let marker = block.first(where: { $0.hasPrefix("X-CALWATCH-GOOGLE-ID:") }) else { continue }
                let id = String(marker.dropFirst(21)).replacingOccurrences(of: "\\,", with: ",")
                    .replacingOccurrences(of: "\\;", with: ";").replacingOccurrences(of: "\\\\", with: "\\")
                found[id] = block + [line]
            } else {
                current?.append(line)
            }
        }
        return found
    }

    var keeper: AccountTokenKeeper { AccountTokenKeeper(settings: settings, folder: tokens) }
}
