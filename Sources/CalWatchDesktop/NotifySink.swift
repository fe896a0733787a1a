public import CalWatchCore
public import CalWatchRuntime
import Foundation
public import Logging

/// Events as desktop notifications (`type: notify`, docs/sinks/notify.md): a card per reminder, one card per live
/// activity replaced in place at each update and closed at its end, with buttons (Join, Snooze, Dismiss,
/// Acknowledge) whose clicks become the same answers as `calwatch snooze`, `dismiss` and `ack`: journal rows the
/// daemon applies, and events every sink sees.
///
/// Calendar text is data, never markup: made safe per Unicode scalar, and escaped where the server announces
/// `body-markup`. The cards shown are kept in a file beside the journal, so a new run takes over the live cards
/// the last one left (and the `liveActivityEnd` the planner makes after a restart closes them).
public actor NotifySink: EventSink {
    /// Its own thread: the cards file is written and link openers are started here, never on the cooperative pool.
    private let executor = BlockingExecutor(name: "calwatch-notify-sink")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    public nonisolated let name: String
    private let settings: NotifySettings
    private let logger: Logger
    private let bus: NotificationBus
    private let cardsPath: String?
    /// The card of each live activity and the last reminder card of each occurrence, by subject.
    private var cards: Cards
    /// What each card of this run shows, for its clicks.
    private var shown: [UInt32: Shown] = [:]
    /// Activation tokens the server sent before an action, passed to what the action opens.
    private var tokens: [UInt32: String] = [:]
    /// The last reason no card could be shown, said once until it changes.
    private var failing: String?
    /// How an action opens a link when the portal does not: `xdg-open` as argv (tests give their own).
    private let opener: [String]
    /// Reminder cards to show again if the server lets them expire unanswered (`repeat: until answered`), by
    /// subject.
    private var unanswered: [String: Unanswered] = [:]
    /// The wall clock, for repeats (tests give a manual one).
    private let now: @Sendable () -> Instant

    struct Cards: Codable {
        var activities: [String: UInt32] = [:]
        var reminders: [String: UInt32] = [:]
    }

    struct Unanswered {
        var entry: JournalStore.Entry
        var card: UInt32
        var shownAt: Instant
        /// How many more times it may be shown.
        var left: Int
        /// When to show it again: set once the server has let the card expire.
        var due: Instant?
    }

    struct Shown {
        /// The event a click answers (`CE_ID`): a reminder's id, or for a live card the occurrence's subject.
        var target: String
        var activity: Bool
        var link: String?
    }

    /// A sink on the session bus (or `settings.bus`); `cardsPath` keeps the cards across runs (`nil`: not kept).
    public init(
        settings: NotifySettings, name: String, cardsPath: String?, logger: Logger, opener: [String] = ["xdg-open"],
        now: @escaping @Sendable () -> Instant = { Timestamp.now.instant }
    ) {
        self.now = now
        self.settings = settings
        self.name = name
        self.logger = logger
        self.cardsPath = cardsPath
        self.opener = opener
        bus = NotificationBus(address: settings.bus)
        cards =
            cardsPath.flatMap { FileManager.default.contents(atPath: $0) }
            .flatMap { try? JSONDecoder().decode(Cards.self, from: $0) } ?? Cards()
    }

    public func deliver(_ batch: [JournalStore.Entry]) async throws {
        let server: NotificationBus.Server
        do {
            server = try await bus.connect()
        } catch {
            if failing != error.description {
                logger.warning(
                    "\(name): \(error); desktop notifications wait for one (the other sinks go on)",
                    metadata: ["sink.name": "\(name)"])
                failing = error.description
            }
            throw SinkError(sink: name, reason: error.description)
        }
        if failing != nil {
            logger.notice(
                "\(name): showing notifications on \(server.name) \(server.version)", metadata: ["sink.name": "\(name)"]
            )
            failing = nil
        }
        let text = CardText(server: server, snooze: settings.snooze)
        var reminders: [JournalStore.Entry] = []
        for entry in batch {
            let subject = entry.event.subject
            switch entry.event.payload {
            case .reminderDue:
                reminders.append(entry)
            case .flightDetected:
                _ = try await show(text.flight(entry), target: entry.event.id.description, link: nil)
            case .flightChanged:
                _ = try await show(text.flightChanged(entry), target: entry.event.id.description, link: nil)
            case .prepareDue:
                _ = try await show(
                    text.prepare(entry), target: entry.event.id.description, link: ReminderText.link(entry))
            case .liveActivityStart, .liveActivityUpdate:
                guard settings.liveActivities else { continue }
                let card = text.activity(entry)
                let id = try await show(
                    card, replacing: cards.activities[subject], target: subject, activity: true,
                    link: ReminderText.link(entry))
                if cards.activities.updateValue(id, forKey: subject) != id {
                    // Kept at once: a run killed before the batch ends must not leave a card the next cannot find.
                    saveCards()
                }
            case .liveActivityEnd:
                unanswered[subject] = nil
                if let id = cards.activities.removeValue(forKey: subject) { await close(id) }
            case .reminderSnoozed, .reminderDismissed, .reminderAcknowledged:
                unanswered[subject] = nil
                if let id = cards.reminders.removeValue(forKey: subject) { await close(id) }
            case .conflictDetected, .overrunDetected, .invitationPending, .agendaDue:
                guard let card = text.day(entry) else { continue }
                _ = try await show(card, target: entry.event.id.description, link: ReminderText.day(entry)?.link)
            case .accountSignInNeeded:
                guard let card = text.account(entry) else { continue }
                _ = try await show(card, target: entry.event.id.description, link: nil)
            }
        }
        // A burst on the hour: the first cards, and the rest summed up in one.
        for entry in reminders.prefix(settings.maxCards) {
            let subject = entry.event.subject
            let id = try await show(
                text.reminder(entry), replacing: cards.reminders[subject], target: entry.event.id.description,
                link: ReminderText.link(entry))
            cards.reminders[subject] = id
            // A server without `persistence` drops a card once it times out: it comes back while unanswered.
            if let repeats = settings.repeats, !server.capabilities.contains("persistence") {
                unanswered[subject] = Unanswered(entry: entry, card: id, shownAt: now(), left: repeats.times)
            } else {
                unanswered[subject] = nil
            }
        }
        if reminders.count > settings.maxCards {
            let rest = Array(reminders.dropFirst(settings.maxCards))
            _ = try await show(text.more(rest), target: "", link: nil)
        }
        saveCards()
    }

    public func run(_ context: SinkContext) async {
        while !context.isStopped && !Task.isCancelled {
            guard await bus.isConnected else {
                try? await Task.sleep(for: .milliseconds(250))
                continue
            }
            for signal in await bus.pump() { await handle(signal, journal: context.journal) }
            await showUnansweredAgain()
        }
    }

    /// Shows again the reminder cards the server let expire unanswered, once their time has come; none after
    /// their occurrence has ended or their count is spent.
    private func showUnansweredAgain() async {
        guard settings.repeats != nil else { return }
        let time = now()
        for (subject, waiting) in unanswered {
            guard let due = waiting.due, due <= time else { continue }
            guard waiting.left > 0, (waiting.entry.occurrence?.end).map({ time < $0 }) ?? true,
                let server = try? await bus.connect()
            else {
                unanswered[subject] = nil
                continue
            }
            let card = CardText(server: server, snooze: settings.snooze).reminder(waiting.entry, at: time)
            guard
                let id = try? await show(
                    card, target: waiting.entry.event.id.description, link: ReminderText.link(waiting.entry))
            else { continue }
            cards.reminders[subject] = id
            unanswered[subject] = Unanswered(
                entry: waiting.entry, card: id, shownAt: time, left: waiting.left - 1)
            saveCards()
        }
    }

    /// A click or a close, answered as the commands answer.
    private func handle(_ signal: NotificationBus.Signal, journal: JournalStore) async {
        switch signal {
        case .activationToken(let id, let token):
            tokens[id] = token
        case .actionInvoked(let id, let action):
            guard let card = shown[id] else { return }
            let token = tokens.removeValue(forKey: id)
            switch CardText.Action(key: action) {
            case .open?:
                if let link = card.link { await open(link, token: token) }
            case .snooze(let seconds)?:
                await answer(.snooze, card, seconds: seconds, journal: journal)
            case .dismiss?:
                await answer(.dismiss, card, journal: journal)
            case .acknowledge?:
                await answer(.ack, card, journal: journal)
            case nil:
                return
            }
        case .closed(let id, let reason):
            tokens[id] = nil
            guard let card = shown.removeValue(forKey: id) else { return }
            // Expired (reason 1): an unanswered reminder comes back `every` after it was shown.
            if reason == 1, let every = settings.repeats?.every,
                let (subject, waiting) = unanswered.first(where: { $0.value.card == id })
            {
                unanswered[subject]?.due = Instant(secondsSinceEpoch: waiting.shownAt.secondsSinceEpoch + every)
            }
            // Closed by the user (reason 2): a reminder is taken as seen; a live card as not wanted, or it would
            // come back at its next update.
            if reason == 2 {
                if let subject = unanswered.first(where: { $0.value.card == id })?.key { unanswered[subject] = nil }
                await answer(card.activity ? .dismiss : .ack, card, journal: journal)
            }
        }
    }

    private func answer(
        _ kind: JournalStore.Answer.Kind, _ card: Shown, seconds: Int64? = nil, journal: JournalStore
    ) async {
        guard !card.target.isEmpty else { return }
        do {
            let given = Timestamp.now
            _ = try await journal.recordAnswer(kind, target: card.target, seconds: seconds, given: given)
            journal.ring()
        } catch {
            logger.error("\(name): cannot record the \(kind.rawValue): \(error)", metadata: ["sink.name": "\(name)"])
        }
    }

    /// Opens a join link or the event's URL: the portal's OpenURI when there is one, else `xdg-open` as argv. Only
    /// http(s) links are opened: the text came from a stranger's calendar.
    private func open(_ link: String, token: String?) async {
        guard let url = URL(string: link), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else { return }
        if await bus.openThroughPortal(link, token: token) { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = opener + [link]
        var environment = ProcessInfo.processInfo.environment
        if let token { environment["XDG_ACTIVATION_TOKEN"] = token }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            logger.warning("\(name): cannot open \(link): \(error)", metadata: ["sink.name": "\(name)"])
        }
    }

    private func show(
        _ card: NotificationBus.Card, replacing: UInt32? = nil, target: String, activity: Bool = false, link: String?
    ) async throws -> UInt32 {
        do {
            let id = try await bus.show(card, replacing: replacing ?? 0)
            if let replacing, replacing != id { shown[replacing] = nil }
            shown[id] = Shown(target: target, activity: activity, link: link)
            return id
        } catch {
            throw SinkError(sink: name, reason: error.description)
        }
    }

    private func close(_ id: UInt32) async {
        shown[id] = nil
        await bus.close(card: id)
    }

    private func saveCards() {
        guard let cardsPath, let data = try? JSONEncoder().encode(cards) else { return }
        try? AtomicFile.replace(cardsPath, with: data, mode: 0o600)
    }

    /// The server's name, version and capabilities, or why there is none: what `calwatch check` prints.
    public static func probe(_ settings: NotifySettings) async -> Result<String, any Error> {
        do {
            let server = try await NotificationBus(address: settings.bus).connect()
            return .success(
                "\(server.name) \(server.version) (\(server.vendor)): \(server.capabilities.sorted().joined(separator: ", "))"
            )
        } catch {
            return .failure(error)
        }
    }
}
