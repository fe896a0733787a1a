import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// Answers to reminders (`calwatch snooze`, `dismiss`, `ack`) through the daemon's pipeline on a manual clock: each
/// recorded in the journal as the command records it, then taken at the instant the test says.
@Suite struct AnswerTests {
    typealias Bench = WatchTests.Bench

    /// A meeting 10:00–11:00 with the default reminders (30, 15, 5 min) and live activity (from 09:45).
    static func meeting() throws -> Bench {
        let bench = try Bench()
        try bench.writeRenamed(
            "work/m.ics", WatchTests.event(uid: "m", start: "20270301T100000Z", end: "20270301T110000Z"))
        return bench
    }

    static func answer(
        _ bench: Bench, _ kind: JournalStore.Answer.Kind, _ target: String, seconds: Int64? = nil, at: String
    ) async throws -> JournalStore.Answer {
        try await JournalStore(path: bench.journalPath).recordAnswer(
            kind, target: target, seconds: seconds, given: Timestamp(utc(at)))
    }

    /// The id of the last reminder committed (as a hook gets it in CE_ID).
    static func lastReminder(_ bench: Bench) async throws -> String {
        let events = try await JournalStore(path: bench.journalPath).events(uid: "m")
        return try #require(events.last { $0.event.type == .reminderDue }).event.id.description
    }

    @Test func snoozedTwiceThenDismissed() async throws {
        let bench = try Self.meeting()
        try await bench.start(at: "2027-03-01T09:00:00Z")
        try await bench.advance(to: "2027-03-01T09:30:00Z")
        _ = try await Self.answer(
            bench, .snooze, try await Self.lastReminder(bench), seconds: 300, at: "2027-03-01T09:31:00Z")
        try await bench.advance(to: "2027-03-01T09:31:00Z")
        try await bench.advance(to: "2027-03-01T09:36:00Z")
        _ = try await Self.answer(
            bench, .snooze, try await Self.lastReminder(bench), seconds: 300, at: "2027-03-01T09:37:00Z")
        try await bench.advance(to: "2027-03-01T09:37:00Z")
        try await bench.advance(to: "2027-03-01T09:42:00Z")
        _ = try await Self.answer(bench, .dismiss, "m/2027-03-01T10:00:00Z", at: "2027-03-01T09:43:00Z")
        try await bench.advance(to: "2027-03-01T09:43:00Z")
        for instant in ["09:45", "09:55", "10:00", "11:00"] { try await bench.advance(to: "2027-03-01T\(instant):00Z") }
        #expect(
            await bench.received() == [
                "reminderDue 2027-03-01T09:30:00Z 30m",
                "reminderSnoozed 2027-03-01T09:31:00Z",
                "reminderDue 2027-03-01T09:36:00Z 24m snoozed 1",
                "reminderSnoozed 2027-03-01T09:37:00Z",
                "reminderDue 2027-03-01T09:42:00Z 18m snoozed 2",
                "reminderDismissed 2027-03-01T09:43:00Z",
            ])
        let pending = try await JournalStore(path: bench.journalPath).pendingAnswers()
        #expect(pending.isEmpty)
        // As a consumer reads them: every line, the answers and the snoozed reminders, follows the schema.
        let validator = EventSchemaTests.Validator(root: EventSchemaTests.schema)
        for line in await bench.sink.lines {
            let errors = validator.validate(try EventSchemaTests.JSON.parse(line), EventSchemaTests.schema)
            #expect(errors.isEmpty, "\(errors) in \(line)")
        }
        let snoozed = await bench.sink.lines.filter { $0.contains("reminderSnoozed") }
        #expect(snoozed.first?.contains(#""answer":{"answered":""#) == true)
        #expect(snoozed.last?.contains(#""until":"2027-03-01T09:42:00Z","count":2}"#) == true)
    }

    @Test func aSnoozeMayCrossTheStartButNotTheEnd() async throws {
        let bench = try Self.meeting()
        try await bench.start(at: "2027-03-01T09:50:00Z")
        try await bench.advance(to: "2027-03-01T09:55:00Z")
        _ = try await Self.answer(
            bench, .snooze, try await Self.lastReminder(bench), seconds: 600, at: "2027-03-01T09:56:00Z")
        try await bench.advance(to: "2027-03-01T09:56:00Z")
        try await bench.advance(to: "2027-03-01T10:06:00Z")
        // Snoozed past the end: refused, and said so.
        let late = try await Self.answer(
            bench, .snooze, try await Self.lastReminder(bench), seconds: 3600, at: "2027-03-01T10:07:00Z")
        try await bench.advance(to: "2027-03-01T10:07:00Z")
        let outcome = try await JournalStore(path: bench.journalPath).answer(id: late.id)?.outcome
        #expect(outcome?.hasPrefix("not snoozed: 2027-03-01T11:07:00Z is after its end") == true, "\(outcome ?? "")")
        let received = await bench.received()
        #expect(received.filter { $0.hasPrefix("reminderSnoozed") }.count == 1)
        #expect(received.contains("reminderDue 2027-03-01T10:06:00Z -6m snoozed 1"))
    }

    @Test func aFlightsSnoozeStopsAtTheTimeToLeave() async throws {
        let bench = try Bench()
        try bench.writeRenamed(
            "work/ba.ics",
            WatchTests.event(
                uid: "m", start: "20270301T120000Z", end: "20270301T140000Z",
                summary: "Flight BA987 Berlin (BER) to London (LHR)", location: "Berlin Brandenburg Airport (BER)"))
        // International: leave by 12:00 − 3 h − 45 min = 08:15; its 30-minute reminder at 07:45.
        try await bench.start(at: "2027-03-01T07:40:00Z")
        try await bench.advance(to: "2027-03-01T07:45:00Z")
        let reminder = try await Self.lastReminder(bench)
        let late = try await Self.answer(bench, .snooze, reminder, seconds: 45 * 60, at: "2027-03-01T07:46:00Z")
        try await bench.advance(to: "2027-03-01T07:46:00Z")
        let outcome = try await JournalStore(path: bench.journalPath).answer(id: late.id)?.outcome ?? ""
        #expect(outcome.hasPrefix("not snoozed: 2027-03-01T08:31:00Z is after its time to leave"), "\(outcome)")
        _ = await bench.received()
    }

    @Test func anAcknowledgementStopsRemindersAndTheLiveActivityGoesOn() async throws {
        let bench = try Self.meeting()
        try await bench.start(at: "2027-03-01T09:40:00Z")
        try await bench.advance(to: "2027-03-01T09:45:00Z")
        _ = try await Self.answer(bench, .ack, "m", at: "2027-03-01T09:46:00Z")  // a UID alone
        try await bench.advance(to: "2027-03-01T09:46:00Z")
        for instant in ["09:55", "10:00", "10:01", "11:00"] { try await bench.advance(to: "2027-03-01T\(instant):00Z") }
        let received = await bench.received()
        #expect(received.contains("reminderAcknowledged 2027-03-01T09:46:00Z"))
        #expect(!received.contains { $0.hasPrefix("reminderDue 2027-03-01T09:55") })
        #expect(received.contains("liveActivityUpdate 2027-03-01T10:01:00Z"))
        #expect(received.last == "liveActivityEnd 2027-03-01T11:00:00Z ended")
    }

    @Test func aDismissEndsTheRunningLiveActivity() async throws {
        let bench = try Self.meeting()
        try await bench.start(at: "2027-03-01T09:58:00Z")
        _ = try await Self.answer(bench, .dismiss, "m/2027-03-01T10:00:00Z", at: "2027-03-01T10:05:00Z")
        try await bench.advance(to: "2027-03-01T10:05:00Z")
        try await bench.advance(to: "2027-03-01T10:30:00Z")
        let received = await bench.received()
        #expect(
            received.suffix(2) == [
                "liveActivityEnd 2027-03-01T10:05:00Z dismissed", "reminderDismissed 2027-03-01T10:05:00Z",
            ])
        // `calwatch next` reads the same journal: the dismissed meeting is no longer shown as running.
        let now = utc("2027-03-01T10:10:00Z")
        let result = scan([bench.root], from: "2027-03-01", to: "2027-03-02", zone: "UTC")
        var options = NextUp.Options()
        #expect(
            NextUp(result.occurrences, facts: { _ in .event }, options: options, now: now, zone: .utc).state == "live")
        options.dismissed = try await JournalStore(path: bench.journalPath).dismissed(at: now)
        #expect(
            NextUp(result.occurrences, facts: { _ in .event }, options: options, now: now, zone: .utc).current == nil)
    }

    @Test func anAnswerGivenWhileTheDaemonIsDownIsTakenAtItsStart() async throws {
        let bench = try Self.meeting()
        try await bench.start(at: "2027-03-01T09:29:00Z")
        try await bench.advance(to: "2027-03-01T09:30:00Z")
        let reminder = try await Self.lastReminder(bench)
        _ = await bench.received()
        // Down; a notification's Dismiss button clicked meanwhile.
        _ = try await Self.answer(bench, .dismiss, reminder, at: "2027-03-01T09:35:00Z")
        try await bench.start(at: "2027-03-01T09:40:00Z")
        try await bench.advance(to: "2027-03-01T09:45:00Z")
        try await bench.advance(to: "2027-03-01T09:55:00Z")
        #expect(
            await bench.received() == [
                "reminderDue 2027-03-01T09:30:00Z 30m", "reminderDismissed 2027-03-01T09:40:00Z",
            ])
    }

    @Test func theSameAnswerTwiceCountsOnce() async throws {
        let bench = try Self.meeting()
        try await bench.start(at: "2027-03-01T09:29:00Z")
        try await bench.advance(to: "2027-03-01T09:30:00Z")
        let reminder = try await Self.lastReminder(bench)
        // A hook run twice after a crash: the second call finds the first.
        let first = try await Self.answer(bench, .snooze, reminder, seconds: 300, at: "2027-03-01T09:31:00Z")
        try await bench.advance(to: "2027-03-01T09:31:00Z")
        let second = try await Self.answer(bench, .snooze, reminder, seconds: 300, at: "2027-03-01T09:32:00Z")
        #expect(second.id == first.id && second.outcome != nil)
        try await bench.advance(to: "2027-03-01T09:32:00Z")
        try await bench.advance(to: "2027-03-01T09:36:00Z")
        // And a restart replays nothing: the snooze is in the journal's state.
        _ = await bench.received()
        try await bench.start(at: "2027-03-01T09:37:00Z")
        let received = await bench.received()
        #expect(received.filter { $0.hasPrefix("reminderSnoozed") }.count == 1)
        #expect(received.filter { $0.contains("snoozed 1") }.count == 1)
    }

    /// The real daemon: a hook calls `calwatch snooze "$CE_ID" 3s` on the first reminder, and the snoozed reminder
    /// comes through the JSON Lines sink about 3 s later, once.
    @Test func aHookSnoozesTheReminderItRunsFor() async throws {
        let folder = TestFolders.path("calwatch-snooze-e2e")
        try FileManager.default.createDirectory(atPath: folder + "/cal/work", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
        calendars: [cal]
        timezone: UTC
        state: state/journal.db
        reminders:
          offsets: [20s]
        sinks:
          - type: jsonl
            path: events.jsonl
          - type: hook
            run: [/bin/sh, -c, '"$0" snooze "$CE_ID" 3s >> answers.log 2>&1', \(CommandLineTests.executable.path)]
            on: [reminderDue]
            offsets: [20s]
        """.write(toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let process = try WatchCommandTests.watch(in: folder)
        defer { if process.isRunning { process.terminate() } }
        func log() -> String { (try? String(contentsOfFile: folder + "/log.txt", encoding: .utf8)) ?? "" }
        try await eventually("the daemon to watch") { log().contains("watching") }

        // A meeting 30 s ahead: its reminder 20 s before, at +10 s.
        let start = Int(Date().timeIntervalSince1970) + 30
        try WatchTests.event(
            uid: "e2e", start: NextCommandTests.stamp(start), end: NextCommandTests.stamp(start + 60),
            summary: "Standup"
        ).write(toFile: folder + "/cal/work/e2e.ics", atomically: true, encoding: .utf8)

        try await eventually("the snoozed reminder") {
            SinkFixtures.lines(folder + "/events.jsonl").contains { $0.contains(#""snoozed":true"#) }
        }
        // Another 5 s: nothing more of it (the snoozed reminder is 17 s before, which the hook leaves out).
        try await Task.sleep(for: .seconds(5))

        // What a script is told, by its exit status, while the daemon runs.
        let cli = CommandLineTests()
        let journal = folder + "/state/journal.db"
        let live = try #require(
            SinkFixtures.lines(folder + "/events.jsonl").first { $0.contains("calwatch.liveActivityStart") })
        let liveID = try #require(
            (try JSONSerialization.jsonObject(with: Data(live.utf8)) as? [String: Any])?["id"] as? String)
        let refused = try await cli.calwatch(["snooze", liveID, "--state", journal])
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.errors.contains("is a liveActivityStart event; snooze a reminderDue"), "\(refused.errors)")
        let unknown = try await cli.calwatch(["dismiss", "no-such-uid", "--state", journal])
        #expect(unknown.status == 65 && unknown.errors.contains("not applied"), "\(unknown)")
        let typo = folder + "/state/jurnal.db"
        let mistyped = try await cli.calwatch(["ack", "e2e", "--state", typo])
        #expect(mistyped.status == 66 && mistyped.errors.contains("no journal at \(typo)"), "\(mistyped)")
        #expect(!FileManager.default.fileExists(atPath: typo))
        // A second daemon on the same journal is refused, and told who holds it.
        let second = try await cli.calwatch(["watch", "--config", folder + "/config.yml", "--state", journal])
        #expect(second.status == 75, "\(second)")
        #expect(second.errors.contains("in use by another calwatch (process \(process.processIdentifier))"))

        kill(process.processIdentifier, SIGTERM)
        try await offCooperativePool { process.waitUntilExit() }
        let lines = try String(contentsOfFile: folder + "/events.jsonl", encoding: .utf8).split(separator: "\n")
        let reminders = lines.filter { $0.contains(#""type":"calwatch.reminderDue""#) }
        #expect(reminders.count == 2, "\(lines)")
        #expect(reminders.filter { $0.contains(#""snoozed":true,"snoozeCount":1"#) }.count == 1)
        #expect(lines.filter { $0.contains(#""type":"calwatch.reminderSnoozed""#) }.count == 1)
        // Timed by the daemon's own clock (recordedtime), so this test's turns on a busy pool do not count: the
        // snoozed reminder is due 3 s after the hook answered (the first reminder's emission plus the hook's
        // start, generous for a busy machine), and came at that instant.
        let first = try #require(reminders.first.flatMap { eventDate($0, "recordedtime") })
        let snoozed = try #require(reminders.last)
        let until = try #require(eventDate(snoozed, "time"))
        let came = try #require(eventDate(snoozed, "recordedtime"))
        let answeredAfter = until.timeIntervalSince(first) - 3
        #expect(answeredAfter > -1 && answeredAfter < 15, "snoozed until \(answeredAfter + 3) s after the first")
        #expect(came >= until && came.timeIntervalSince(until) < 10, "came \(came.timeIntervalSince(until)) s late")
        let answers = try String(contentsOfFile: folder + "/answers.log", encoding: .utf8)
        #expect(answers.hasPrefix("calwatch: applied at"), "\(answers)")
    }

    /// The notification sample: each button calls the command it names. The desktop is a stand-in here: a
    /// `notify-send` that records its arguments and "clicks" the button the test names, and an `xdg-open` that
    /// records the link.
    @Test(arguments: ["snooze", "dismiss", "join"])
    func theNotificationsButtonsAnswer(_ button: String) async throws {
        let folder = TestFolders.path("calwatch-notify")
        let bin = folder + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
        #!/bin/sh
        printf '%s\\n' "$@" > "$(dirname "$0")/notify-send.args"
        echo "\(button)"
        """.write(toFile: bin + "/notify-send", atomically: true, encoding: .utf8)
        try "#!/bin/sh\nprintf '%s' \"$1\" > \"$(dirname \"$0\")/opened\"\n".write(
            toFile: bin + "/xdg-open", atomically: true, encoding: .utf8)
        for tool in ["notify-send", "xdg-open"] { chmod(bin + "/" + tool, 0o755) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        // The daemon's journal, as the daemon that runs the hook has made it, with the reminder the hook is for.
        let calendars = try NotifySinkTests.prepare(WebhookSinkTests.items, "reminders: { offsets: [5m] }\n")
        defer { try? FileManager.default.removeItem(atPath: calendars) }
        let replay = try await CommandLineTests().calwatch([
            "replay", "--config", calendars + "/config.yml", "--from", "2027-03-03T09:00:00Z", "--to",
            "2027-03-03T11:00:00Z", "--state", folder + "/journal.db",
        ])
        let reminder = try #require(replay.output.split(separator: "\n").first { $0.contains("calwatch.reminderDue") })
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(reminder.utf8)) as? [String: Any])?["id"] as? String)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: root + "/samples/hooks/notify-actions.sh")
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.environment = [
            "PATH": [bin, CommandLineTests.executable.deletingLastPathComponent().path, "/usr/bin", "/bin"]
                .joined(separator: ":"),
            "HOME": folder, "CALWATCH_STATE": folder + "/journal.db", "CE_ID": id,
            "CALWATCH_SUMMARY": "Sync $(touch pwned)", "CALWATCH_MINUTES_BEFORE": "5",
            "CALWATCH_JOIN_URL": "https://example.zoom.us/j/812",
        ]
        try process.run()
        try await offCooperativePool { process.waitUntilExit() }
        #expect(process.terminationStatus == 0)
        let kind: JournalStore.Answer.Kind = button == "join" ? .ack : button == "snooze" ? .snooze : .dismiss
        try await eventually("the answer in the journal") {
            guard FileManager.default.fileExists(atPath: folder + "/journal.db") else { return false }
            return try await JournalStore(path: folder + "/journal.db").pendingAnswers()
                .contains { $0.kind == kind && $0.target == id && $0.seconds == (kind == .snooze ? 300 : nil) }
        }
        let arguments = try String(contentsOfFile: bin + "/notify-send.args", encoding: .utf8)
        #expect(arguments.contains("--action=join=Join\n--\nSync $(touch pwned)\nin 5 min"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/pwned"))
        if button == "join" {
            try await eventually("the link opened") {
                (try? String(contentsOfFile: bin + "/opened", encoding: .utf8)) == "https://example.zoom.us/j/812"
            }
        }
    }

    /// The calendar's own answers: Thunderbird's X-MOZ-LASTACK and X-MOZ-SNOOZE-TIME, RFC 9074's ACKNOWLEDGED.
    @Test func answersWrittenIntoTheCalendarCount() async throws {
        let bench = try Bench()
        func item(_ uid: String, _ extra: [String], alarms: [[String]] = []) -> String {
            var lines = [
                "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Mozilla.org/NONSGML Mozilla Calendar V1.1//EN",
                "BEGIN:VEVENT", "UID:\(uid)", "DTSTAMP:20270101T000000Z", "DTSTART:20270301T100000Z",
                "DTEND:20270301T110000Z", "SUMMARY:\(uid)",
            ]
            lines += extra
            for alarm in alarms { lines += ["BEGIN:VALARM", "ACTION:DISPLAY"] + alarm + ["END:VALARM"] }
            return (lines + ["END:VEVENT", "END:VCALENDAR", ""]).joined(separator: "\r\n")
        }
        // Acknowledged at 09:35 on another device: the 30-minute reminder (09:30) is not repeated here.
        try bench.writeRenamed("work/lastack.ics", item("lastack", ["X-MOZ-LASTACK:20270301T093500Z"]))
        // Snoozed in Thunderbird at 09:47 until 09:52.
        try bench.writeRenamed(
            "work/snoozed.ics",
            item("snoozed", ["X-MOZ-LASTACK:20270301T094700Z", "X-MOZ-SNOOZE-TIME:20270301T095200Z"]))
        // Two alarms of its own, 20 and 10 minutes before; the first acknowledged (RFC 9074) at 09:41.
        try bench.writeRenamed(
            "work/alarms.ics",
            item(
                "alarms", [],
                alarms: [
                    ["TRIGGER:-PT20M", "ACKNOWLEDGED:20270301T094100Z"], ["TRIGGER:-PT10M"],
                ]))
        bench.configuration.planner.reminderOffsets = [1800, 900, 300]
        try await bench.start(at: "2027-03-01T09:00:00Z")
        for minute in stride(from: 5, through: 59, by: 1) {
            try await bench.advance(to: String(format: "2027-03-01T09:%02d:00Z", minute))
        }
        _ = await bench.received()  // every event delivered
        let reminders = await bench.sink.events.filter { $0.type == .reminderDue }
            .map { "\($0.key.uid) \($0.time) \($0.reminder!.source.rawValue)" }.sorted()
        #expect(
            reminders == [
                "alarms 2027-03-01T09:30:00Z offset", "alarms 2027-03-01T09:45:00Z offset",
                "alarms 2027-03-01T09:50:00Z valarm", "alarms 2027-03-01T09:55:00Z offset",
                "lastack 2027-03-01T09:45:00Z offset", "lastack 2027-03-01T09:55:00Z offset",
                "snoozed 2027-03-01T09:52:00Z snooze", "snoozed 2027-03-01T09:55:00Z offset",
            ])
    }
}
