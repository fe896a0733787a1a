import Foundation
import Synchronization
import Testing

@testable import CalWatchCore
@testable import CalWatchDesktop
@testable import CalWatchRuntime

/// The desktop notification sink against a real notification server: dunst on a private session bus and Xvfb
/// (`DesktopSession`), reading what it showed from `dunst -print` and the bus, and clicking through its context menu.
@Suite(.serialized) struct NotifySinkTests {
    static func calendar(_ items: String) -> String {
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//notify//EN\r\n" + items + "END:VCALENDAR\r\n"
    }

    /// A folder of its own (the caller removes it) with `items` as one calendar, `cal`, and a config.yml of
    /// `configuration` in UTC.
    static func prepare(_ items: String, _ configuration: String) throws -> String {
        let folder = SinkFixtures.folder()
        try FileManager.default.createDirectory(atPath: folder + "/cal", withIntermediateDirectories: true)
        try calendar(items).write(toFile: folder + "/cal/items.ics", atomically: true, encoding: .utf8)
        try ("calendars: [cal]\ntimezone: UTC\n" + configuration)
            .write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        return folder
    }

    /// Runs `calwatch replay` from `from` to `to` over `items` (one calendar, `cal`) with `configuration`, in a
    /// folder of its own that the caller removes; expects it to succeed.
    static func replay(_ items: String, _ configuration: String, from: String, to: String) async throws -> String {
        let folder = try prepare(items, configuration)
        let replay = try await CommandLineTests().calwatch([
            "replay", "--config", folder + "/config.yml", "--from", from, "--to", to,
        ])
        #expect(replay.status == 0, "\(replay.errors)")
        return folder
    }

    /// A stranger's event, through `calwatch replay`: reminders as cards whose text shows literally, and one card
    /// for the live activity from its start to its end, replaced in place and closed at the end.
    @Test func aLiveActivityIsOneCardFromStartToEndAndCalendarTextIsNeverMarkup() async throws {
        try await DesktopSession.with { desktop in
            let folder = try await Self.replay(
                """
                BEGIN:VEVENT\r
                UID:hostile\r
                DTSTAMP:20270101T000000Z\r
                DTSTART:20270303T100000Z\r
                DTEND:20270303T103000Z\r
                SUMMARY:Review <b>bold</b> <a href="https://evil.example">x</a> \u{202E}gnp.exe\r
                LOCATION:<img src=x> <b>Room</b> & co\r
                END:VEVENT\r

                """,
                """
                reminders: { offsets: [15m, 5m] }
                liveActivity: { lead: 10m, updateEvery: 5m }
                sinks:
                  - { type: notify, bus: "\(desktop.bus)" }
                """, from: "2027-03-03T09:00:00Z", to: "2027-03-03T11:00:00Z")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try await slowly("the cards shown and the live one closed") {
                desktop.shown.count >= 9 && !desktop.closed.isEmpty
            }
            let shown = desktop.shown
            let reminders = shown.filter { $0["category"] == "x-calwatch.reminder" }
            #expect(reminders.count == 2, "\(shown)")
            // The last call is critical; calendar text reaches the server as text: dunst escapes the summary itself,
            // calwatch the body (dunst reads body markup), and the override that reverses text is made visible.
            #expect(reminders.last?["urgency"] == "CRITICAL" && reminders.first?["urgency"] == "NORMAL")
            let formatted = try #require(reminders.first?["formatted"])
            #expect(
                formatted.contains("&lt;b&gt;bold&lt;/b&gt;") && formatted.contains("&lt;img src=x&gt;"), "\(formatted)"
            )
            #expect(formatted.contains("&amp; co") && !formatted.contains("\u{202E}"), "\(formatted)")
            // The live activity: one card, replaced at each update (10 min before, then every 5), closed at the end.
            let live = shown.filter { $0["category"] == "x-calwatch.live" }
            #expect(Set(live.compactMap { $0["id"] }).count == 1, "\(live)")
            #expect(live.count >= 7, "\(live.map { $0["summary"] ?? "" })")
            #expect(live.contains { $0["summary"]?.contains("25 min left") == true && $0["progress"] == "17" })
            let id = try #require(live.first?["id"].flatMap { UInt32($0) })
            #expect(desktop.closed.contains { $0.id == id && $0.reason == 3 }, "\(desktop.closed)")
        }
    }

    /// The day's cards (`day:`): a conflict the day before, the overrun as the next meeting starts (critical, its join
    /// link on the card), the agenda with the day's items one per line.
    @Test func theDaysConflictOverrunAndAgendaAreCards() async throws {
        try await DesktopSession.with { desktop in
            let folder = try await Self.replay(
                """
                BEGIN:VEVENT\r
                UID:review\r
                DTSTAMP:20270101T000000Z\r
                DTSTART:20270303T090000Z\r
                DTEND:20270303T100000Z\r
                SUMMARY:Review\r
                END:VEVENT\r
                BEGIN:VEVENT\r
                UID:call\r
                DTSTAMP:20270101T000000Z\r
                DTSTART:20270303T093000Z\r
                DTEND:20270303T103000Z\r
                SUMMARY:Call <b>Northwind</b>\r
                LOCATION:https://meet.google.com/abc-defg-hij\r
                END:VEVENT\r

                """,
                """
                day: { agendaAt: "08:00" }
                sinks:
                  - { type: notify, bus: "\(desktop.bus)", liveActivities: false }
                """, from: "2027-03-02T00:00:00Z", to: "2027-03-03T12:00:00Z")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try await slowly("the day's cards") {
                desktop.shown.filter { $0["category"] == "x-calwatch.day" }.count >= 4
            }
            let day = desktop.shown.filter { $0["category"] == "x-calwatch.day" }
            #expect(
                day.compactMap { $0["summary"] } == [
                    "Your day, 2027-03-02: nothing planned", "Conflict: Review and Call <b>Northwind</b>",
                    "Your day, 2027-03-03: 2 items", "Call <b>Northwind</b> has started",
                ], "\(day)")
            #expect(day.last?["urgency"] == "CRITICAL")
            let agenda = try #require(day.first { $0["summary"]?.hasPrefix("Your day, 2027-03-03") == true })
            #expect(
                agenda["formatted"]?.contains(
                    "09:00 Review (conflict)\n09:30 Call &lt;b&gt;Northwind&lt;/b&gt; (conflict)")
                    == true, "\(agenda)")
        }
    }

    /// A 100 KB summary with terminal escapes and a bell: the card's title is one short line, its controls shown as
    /// symbols, never acted on; the body's long location is cut too.
    @Test func aHugeSummaryWithControlCharactersIsAShortSafeTitle() async throws {
        try await DesktopSession.with { desktop in
            let summary = "Budget \u{1B}[31mred\u{07} " + String(repeating: "x", count: 100_000)
            let entries = try HookSinkTests.reminders(
                summary: summary, location: String(repeating: "Hall ", count: 20_000))
            let sink = NotifySink(
                settings: desktop.settings, name: "notify", cardsPath: nil, logger: LogRecorder().logger)
            try await sink.deliver(Array(entries.prefix(1)))
            try await slowly("the card") { desktop.shown.contains { $0["summary"]?.hasPrefix("Budget") == true } }
            let card = try #require(desktop.shown.first { $0["summary"]?.hasPrefix("Budget") == true })
            let title = try #require(card["summary"])
            #expect(title.hasPrefix("Budget ␛[31mred␇ x") && title.count < 140, "\(title.prefix(200))")
            #expect(!title.contains("\u{1B}") && !title.contains("\u{07}"))
            #expect((card["body"] ?? "").count < 400, "\((card["body"] ?? "").count) characters")
        }
    }

    static func meeting(uid: String, start: Int, minutes: Int) -> String {
        calendar(
            """
            BEGIN:VEVENT\r
            UID:\(uid)\r
            DTSTAMP:20270101T000000Z\r
            DTSTART:\(NextCommandTests.stamp(start))\r
            DTEND:\(NextCommandTests.stamp(start + minutes * 60))\r
            SUMMARY:Standup\r
            LOCATION:https://example.zoom.us/j/123456789\r
            END:VEVENT\r

            """)
    }

    /// The daemon as a user runs it: a click on Snooze in dunst's menu is an answer like `calwatch snooze`, and
    /// the snoozed reminder comes again at its new instant in the other sinks.
    @Test func aClickOnSnoozeBringsTheReminderBackAtItsNewInstant() async throws {
        try await DesktopSession.with { desktop in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try FileManager.default.createDirectory(atPath: folder + "/cal", withIntermediateDirectories: true)
            let start = Int(Date().timeIntervalSince1970) + 30
            try Self.meeting(uid: "standup", start: start, minutes: 10)
                .write(toFile: folder + "/cal/standup.ics", atomically: true, encoding: .utf8)
            try """
            calendars: [cal]
            timezone: UTC
            state: journal.db
            reminders: { offsets: [27s] }
            sinks:
              - { type: jsonl, path: events.jsonl }
              - { type: notify, bus: "\(desktop.bus)", snooze: [6s], liveActivities: false }
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let process = try WatchCommandTests.watch(in: folder)
            defer { process.signalIfRunning(SIGKILL) }
            func lines() -> [String] { SinkFixtures.lines(folder + "/events.jsonl") }
            try await slowly("the reminder's card") {
                desktop.shown.contains { $0["summary"]?.hasPrefix("Standup in") == true }
            }
            let card = try #require(desktop.shown.last)
            #expect(card["urgency"] == "CRITICAL" && card["category"] == "x-calwatch.reminder", "\(card)")
            try await offCooperativePool { try desktop.choose("Snooze 6s") }
            try await slowly("snoozed, and reminded again") {
                lines().contains { $0.contains("calwatch.reminderSnoozed") }
                    && lines().filter { $0.contains("calwatch.reminderDue") }.count == 2
            }
            process.terminate()
            try await offCooperativePool { process.waitUntilExit() }
            let snoozed = try #require(lines().first { $0.contains("calwatch.reminderSnoozed") })
            let until = try #require(snoozed.firstMatch(of: /"until":"([^"]+)"/)?.1)
            let again = try #require(lines().last { $0.contains("calwatch.reminderDue") })
            #expect(again.contains(#""time":"\#(until)""#) && again.contains(#""snoozeCount":1"#), "\(again)")
            // The menu offered the card's buttons, the snooze as configured.
            let menu = try String(contentsOfFile: desktop.folder + "/menu.txt", encoding: .utf8)
            for label in ["Join", "Snooze 6s", "Dismiss", "Acknowledge"] { #expect(menu.contains(label), "\(menu)") }
        }
    }

    /// A live card survives the daemon's SIGKILL: the next run replaces the same card and closes it at the end.
    @Test func aLiveCardIsTakenOverAfterACrashAndClosedAtTheEnd() async throws {
        try await DesktopSession.with { desktop in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try FileManager.default.createDirectory(atPath: folder + "/cal", withIntermediateDirectories: true)
            let start = Int(Date().timeIntervalSince1970) + 6
            try Self.meeting(uid: "review", start: start, minutes: 1).replacingOccurrences(
                of: "SUMMARY:Standup", with: "SUMMARY:Review"
            )
            .replacingOccurrences(
                of: "DTEND:\(NextCommandTests.stamp(start + 60))", with: "DTEND:\(NextCommandTests.stamp(start + 16))"
            )
            .write(toFile: folder + "/cal/review.ics", atomically: true, encoding: .utf8)
            try """
            calendars: [cal]
            timezone: UTC
            state: journal.db
            reminders: { offsets: [] }
            liveActivity: { lead: 1h, updateEvery: 2s }
            sinks:
              - { type: notify, bus: "\(desktop.bus)" }
            """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
            let first = try WatchCommandTests.watch(in: folder)
            defer { first.signalIfRunning(SIGKILL) }
            func live() -> [[String: String]] { desktop.shown.filter { $0["category"] == "x-calwatch.live" } }
            try await slowly("the live card") { live().count >= 2 }
            kill(first.processIdentifier, SIGKILL)
            try await offCooperativePool { first.waitUntilExit() }
            let before = live().count
            let process = try WatchCommandTests.watch(in: folder)
            defer { process.signalIfRunning(SIGKILL) }
            try await slowly("closed at the end") { !desktop.closed.isEmpty }
            process.terminate()
            try await offCooperativePool { process.waitUntilExit() }
            let cards = live()
            #expect(cards.count > before, "updated after the restart")
            #expect(Set(cards.compactMap { $0["id"] }).count == 1, "\(cards.map { $0["id"] ?? "" })")
            #expect(desktop.closed.map(\.id) == [cards.first?["id"].flatMap { UInt32($0) } ?? 0], "\(desktop.closed)")
        }
    }

    /// 300 reminders on the hour: a few cards and the rest summed up, none lost from the other sinks.
    @Test func aBurstOnTheHourShowsAFewCardsAndSumsUpTheRest() async throws {
        try await DesktopSession.with { desktop in
            let items = (1...300).map { index in
                """
                BEGIN:VEVENT\r
                UID:burst-\(index)\r
                DTSTAMP:20270101T000000Z\r
                DTSTART:20270303T100000Z\r
                DTEND:20270303T103000Z\r
                SUMMARY:Meeting \(index)\r
                END:VEVENT\r

                """
            }
            let folder = try await Self.replay(
                items.joined(),
                """
                reminders: { offsets: [5m] }
                sinks:
                  - { type: jsonl, path: events.jsonl }
                  - { type: notify, bus: "\(desktop.bus)", maxCards: 4, liveActivities: false }
                """, from: "2027-03-03T09:50:00Z", to: "2027-03-03T09:56:00Z")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let due = SinkFixtures.lines(folder + "/events.jsonl").filter { $0.contains("calwatch.reminderDue") }
            #expect(due.count == 300)
            try await slowly("the cards") { desktop.shown.contains { $0["summary"]?.hasPrefix("and ") == true } }
            try await Task.sleep(for: .milliseconds(300))
            let shown = desktop.shown
            let cards = shown.filter { $0["summary"]?.hasPrefix("Meeting ") == true }
            let more = shown.compactMap {
                $0["summary"]?.firstMatch(of: /^and (\d+) more reminders$/).map { Int($0.1)! }
            }
            // Each batch the bus hands over shows at most 4 cards; every reminder is a card or counted in a sum.
            #expect(cards.count + more.reduce(0, +) == 300, "\(cards.count) cards, \(more)")
            #expect(cards.count <= 4 * more.count && cards.count < 60, "\(cards.count) cards, \(more)")
        }
    }

    /// dunst keeps no card once it has timed out (no `persistence`): with `repeat`, an unanswered reminder comes
    /// back `every` after it was shown, worded for then, at most `times` more; on the sink's manual clock. (A critical
    /// card, the last call, never times out on dunst, so it needs no repeat.)
    @Test func anUnansweredReminderComesBackOnAServerThatDropsIt() async throws {
        try await DesktopSession.with(expireAfter: 1) { desktop in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let journal = try JournalStore(path: folder + "/journal.db")
            var settings = desktop.settings
            settings.repeats = NotifySettings.Repeat(every: 300, times: 1)
            let clock = Mutex(utc("2027-03-03T09:45:00Z"))
            let sink = NotifySink(
                settings: settings, name: "notify", cardsPath: nil, logger: LogRecorder().logger,
                now: { clock.withLock { $0 } })
            let context = SinkContext(journal: journal, entry: { _ in fatalError("not read back") })
            let entries = try HookSinkTests.reminders(summary: "Standup", location: "")
            let reminder = try #require(entries.first { $0.event.reminder?.secondsBefore == 900 })
            func cards() -> [String] { desktop.shown.compactMap { $0["summary"] }.filter { $0.hasPrefix("Standup") } }
            /// What dunst closed because it timed out.
            func expired() -> Int { desktop.closed.filter { $0.reason == 1 }.count }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await sink.run(context) }
                defer { context.stopRun() }
                try await sink.deliver([reminder])
                try await slowly("the card, then its timing out") { cards().count == 1 && expired() == 1 }
                #expect(cards() == ["Standup in 15 min"])
                // Due again at 09:50, five minutes after it was shown: not before.
                clock.withLock { $0 = utc("2027-03-03T09:49:59Z") }
                try await Task.sleep(for: .seconds(1))
                #expect(cards().count == 1)
                clock.withLock { $0 = utc("2027-03-03T09:50:00Z") }
                try await slowly("shown again at 09:50") { cards().last == "Standup in 10 min" }
                try await slowly("timed out again") { expired() == 2 }
                // Once more at most: nothing at 09:55.
                clock.withLock { $0 = utc("2027-03-03T09:55:00Z") }
                try await Task.sleep(for: .seconds(1))
                #expect(cards().count == 2)
                #expect(try await journal.pendingAnswers().isEmpty)
            }
        }
    }

    /// No session bus (a server, an SSH session, before login): each delivery fails (the bus keeps the events for
    /// the sink and tries again; the other sinks go on) and the log says so once. One running sink then follows a
    /// login (the bus appears at its usual path), a logout (it goes) and the next login, without a restart.
    @Test func aBusThatComesGoesAndComesBackIsFollowedWithoutARestart() async throws {
        let folder = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/bus"
        let recorder = LogRecorder()
        var settings = NotifySettings()
        settings.bus = "unix:path=" + path
        let sink = NotifySink(settings: settings, name: "notify", cardsPath: nil, logger: recorder.logger)
        let context = SinkContext(
            journal: try JournalStore(path: folder + "/journal.db"), entry: { _ in fatalError("not read back") })
        let entries = try HookSinkTests.reminders(summary: "Standup", location: "")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await sink.run(context) }
            defer { context.stopRun() }
            for _ in 0..<3 {
                await #expect(throws: SinkError.self) { try await sink.deliver(Array(entries.prefix(1))) }
            }
            #expect(recorder.messages.count == 1, "\(recorder.messages)")
            #expect(recorder.messages.first?.contains("cannot connect to unix:path=\(path)") == true)
            for login in 1...2 {
                try await DesktopSession.with(busPath: path) { desktop in
                    try await sink.deliver(Array(entries.prefix(1)))
                    try await slowly("the card after login \(login)") {
                        desktop.shown.contains { $0["summary"]?.hasPrefix("Standup") == true }
                    }
                }
                // Logged out: the bus is gone, and the sink says so once.
                await #expect(throws: SinkError.self) { try await sink.deliver(Array(entries.prefix(1))) }
                await #expect(throws: SinkError.self) { try await sink.deliver(Array(entries.prefix(1))) }
            }
            let said = recorder.messages
            #expect(said.filter { $0.contains("showing notifications on dunst") }.count == 2, "\(said)")
            #expect(said.filter { $0.contains("desktop notifications wait for one") }.count == 3, "\(said)")
        }
    }

    /// Any program on the bus can send a signal shaped like the server's, to the sink's connection or to all:
    /// only the server's own clicks answer.
    @Test func aForgedClickFromAnotherProgramIsIgnored() async throws {
        try await DesktopSession.with { desktop in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let journal = try JournalStore(path: folder + "/journal.db")
            var settings = NotifySettings()
            settings.bus = desktop.bus
            let sink = NotifySink(settings: settings, name: "notify", cardsPath: nil, logger: LogRecorder().logger)
            let context = SinkContext(journal: journal, entry: { _ in fatalError("not read back") })
            let entries = try HookSinkTests.reminders(summary: "Standup", location: "")
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await sink.run(context) }
                // Stopped however the test ends, or the group would wait for the sink's run for ever.
                defer { context.stopRun() }
                try await sink.deliver(Array(entries.prefix(1)))
                try await slowly("the card") { desktop.shown.contains { $0["summary"]?.hasPrefix("Standup") == true } }
                let id = try #require(desktop.shown.last?["id"])
                // The monitor saw the sink's Notify call, and so its connection's name, which a forger writes to.
                let monitor = try String(contentsOfFile: desktop.folder + "/monitor.log", encoding: .utf8)
                let ours = try #require(monitor.firstMatch(of: /sender=(:[0-9.]+)[^\n]*member=Notify\b/)?.1)
                for destination in [String(ours), ""] {
                    let forger = Process()
                    forger.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-send")
                    forger.arguments =
                        ["--bus=" + desktop.bus, "--type=signal"]
                        + (destination.isEmpty ? [] : ["--dest=" + destination])
                        + [
                            "/org/freedesktop/Notifications", "org.freedesktop.Notifications.ActionInvoked",
                            "uint32:" + id, "string:snooze-600",
                        ]
                    try forger.run()
                    try await offCooperativePool { forger.waitUntilExit() }
                    #expect(forger.terminationStatus == 0)
                }
                try await Task.sleep(for: .seconds(1))
                #expect(try await journal.pendingAnswers().isEmpty)
                // The same button clicked in dunst answers.
                try await offCooperativePool { try desktop.choose("Snooze 10m") }
                try await slowly("the click answered") { try await journal.pendingAnswers().count == 1 }
                #expect(try await journal.pendingAnswers().first?.kind == .snooze)
            }
        }
    }

    /// A second server, GNOME's notification-daemon (it announces persistence and broadcasts its signals): the
    /// live card is one card replaced in place and closed at the end, and the body is escaped for its markup.
    @Test func anotherServerGetsOneLiveCardAndEscapedText() async throws {
        try await DesktopSession.with(server: .notificationDaemon) { desktop in
            let folder = try await Self.replay(
                """
                BEGIN:VEVENT\r
                UID:review\r
                DTSTAMP:20270101T000000Z\r
                DTSTART:20270303T100000Z\r
                DTEND:20270303T103000Z\r
                SUMMARY:Review\r
                LOCATION:<b>Room</b> & co\r
                END:VEVENT\r

                """,
                """
                reminders: { offsets: [] }
                liveActivity: { lead: 10m, updateEvery: 5m }
                sinks:
                  - { type: notify, bus: "\(desktop.bus)" }
                """, from: "2027-03-03T09:00:00Z", to: "2027-03-03T11:00:00Z")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try await slowly("the card closed") { !desktop.closed.isEmpty }
            let calls = desktop.notifyCalls
            // Start (10 and 5 minutes before), then every 5 minutes in progress: 8 cards asked for, one shown.
            #expect(calls.count == 8, "\(calls.map(\.summary))")
            #expect(calls.first?.replaces == 0)
            let id = try #require(calls.dropFirst().first?.replaces)
            #expect(id != 0 && calls.dropFirst().allSatisfy { $0.replaces == id }, "\(calls.map(\.replaces))")
            #expect(desktop.closed.map(\.id) == [id] && desktop.closed.first?.reason == 3, "\(desktop.closed)")
            #expect(
                calls.first?.body.contains("&lt;b&gt;Room&lt;/b&gt; &amp; co") == true, "\(calls.first?.body ?? "")")
        }
    }

    /// Join opens the meeting's link: through the portal when the bus has one, else the opener (`xdg-open`) with the
    /// link as its one argument, never through a shell.
    /// With a portal on the bus (a stand-in: the real one needs a whole desktop session, scripts/portal-server.py)
    /// the link goes to its OpenURI; without, to the opener.
    @Test(arguments: [false, true])
    func joinOpensTheLinkAsAnArgument(portal: Bool) async throws {
        try await DesktopSession.with { desktop in
            let folder = SinkFixtures.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let stand = Process()
            if portal {
                stand.executableURL = URL(fileURLWithPath: ConfigurationTests.repository + "/scripts/portal-server.py")
                stand.arguments = [desktop.bus, folder + "/portal.jsonl"]
                let ready = Pipe()
                stand.standardOutput = ready
                try stand.run()
                _ = try await offCooperativePool { ready.fileHandleForReading.availableData }
            }
            defer { stand.signalIfRunning(SIGKILL) }
            let opener = SinkFixtures.script(
                #"printf '%s\n' "$@" > "$(dirname "$0")/opened""#, in: folder, name: "open.sh")
            let journal = try JournalStore(path: folder + "/journal.db")
            let sink = NotifySink(
                settings: desktop.settings, name: "notify", cardsPath: nil, logger: LogRecorder().logger,
                opener: [opener])
            let context = SinkContext(journal: journal, entry: { _ in fatalError("not read back") })
            let link = "https://example.zoom.us/j/123456789?pwd=a;b$(touch x)"
            let reminder = try #require(try HookSinkTests.reminders(summary: "Standup", location: "Room 4").first)
            var facts = OccurrenceFacts(kind: .meeting)
            facts.meeting = MeetingFacts(service: "zoom", joinURL: link)
            let entry = JournalStore.Entry(
                sequence: 1, event: reminder.event, occurrence: reminder.occurrence, facts: facts,
                recorded: reminder.recorded)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await sink.run(context) }
                defer { context.stopRun() }
                try await sink.deliver([entry])
                try await slowly("the card") { desktop.shown.contains { $0["summary"]?.hasPrefix("Standup") == true } }
                try await offCooperativePool { try desktop.choose("Join") }
                let file = folder + (portal ? "/portal.jsonl" : "/opened")
                try await slowly("the link opened") { FileManager.default.fileExists(atPath: file) }
                let opened = try String(contentsOfFile: file, encoding: .utf8)
                if portal {
                    let call = try JSONSerialization.jsonObject(with: Data(opened.utf8)) as? [String: Any]
                    #expect(call?["uri"] as? String == link, "\(opened)")
                    #expect(!FileManager.default.fileExists(atPath: folder + "/opened"))
                } else {
                    #expect(opened == link + "\n", "\(opened)")
                }
                #expect(!FileManager.default.fileExists(atPath: folder + "/x"))
                // Opening is not an answer.
                #expect(try await journal.pendingAnswers().isEmpty)
            }
        }
    }
}
