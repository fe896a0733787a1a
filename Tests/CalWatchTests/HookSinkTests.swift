import Foundation
import Logging
import Synchronization
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The hook sink with real child processes: what reaches them, and what happens when they hang, fail or ask for a
/// retry.
@Suite struct HookSinkTests {
    /// Collects what the sink logs.
    final class Log: Sendable {
        let recorder = LogRecorder()
        var all: [String] { recorder.messages }
    }

    static func sink(
        _ settings: HookSettings, log: Log, firstRetryDelay: Duration = .milliseconds(10),
        clock: any Clock<Duration> = ContinuousClock(), now: Instant = utc("2027-03-03T00:00:00Z")
    ) -> HookSink {
        var retry = HookSink.RetryPolicy()
        retry.firstDelay = firstRetryDelay
        return HookSink(settings: settings, retry: retry, clock: clock, now: { now }, logger: log.recorder.logger)
    }

    /// A hook run in real time by a test whose subject is not its timeout: two minutes instead of ten seconds, since
    /// on a busy machine (two CPU hogs and the suite) the pool was seen to hear a one-line script's end after more
    /// than ten.
    static func unhurried(_ run: [String]) -> HookSettings {
        var settings = HookSettings(run: run)
        settings.timeout = .seconds(120)
        return settings
    }

    /// Runs `body` with the sink's retries going as the bus runs them, on a journal that holds `entries`; stops
    /// the sink and waits for its retries' end afterwards.
    static func running(
        _ sink: HookSink, journal: JournalStore, entries: [JournalStore.Entry], _ body: () async throws -> Void
    ) async throws {
        _ = try await journal.append(entries.map(\.event), recorded: Timestamp(millisecondsSinceEpoch: 0))
        let byKey = Dictionary(entries.map { ($0.event.id, $0) }, uniquingKeysWith: { first, _ in first })
        let context = SinkContext(journal: journal) { journaled in
            byKey[journaled.event.id] ?? JournalStore.Entry(journaled, occurrence: nil, facts: { _ in .event })
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await sink.run(context) }
            do {
                try await body()
            } catch {
                context.stopRun()
                throw error
            }
            context.stopRun()
            try await group.waitForAll()
        }
    }

    /// The reminders of one event written by a stranger, planned as calwatch plans them.
    static func reminders(summary: String, location: String) throws -> [JournalStore.Entry] {
        let folder = SinkFixtures.folder()
        let path = folder + "/stranger.ics"
        func text(_ value: String) -> String {
            value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ";", with: "\\;")
                .replacingOccurrences(of: ",", with: "\\,").replacingOccurrences(of: "\n", with: "\\n")
        }
        var calendar = Data(
            """
            BEGIN:VCALENDAR\r
            VERSION:2.0\r
            PRODID:-//stranger//EN\r
            BEGIN:VEVENT\r
            UID:stranger-1\r
            DTSTAMP:20270101T000000Z\r
            DTSTART:20270303T100000Z\r
            DTEND:20270303T110000Z\r
            SUMMARY:\(text(summary))\r

            """.utf8)
        // The location ends in bytes that are not UTF-8, as a broken producer writes them.
        calendar += Data("LOCATION:\(text(location))".utf8) + Data([0x20, 0xE9, 0xFF]) + Data("\r\n".utf8)
        calendar += Data("END:VEVENT\r\nEND:VCALENDAR\r\n".utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: calendar))
        let occurrences = scan([path], from: "2027-03-03", to: "2027-03-04").occurrences
        var state = PlannerState()
        var entries: [JournalStore.Entry] = []
        Planner.run(
            from: utc("2027-03-03T09:00:00Z"), to: utc("2027-03-03T10:00:00Z"), state: &state,
            configuration: PlannerConfiguration()
        ) { _ in
            occurrences
        } emit: { event in
            guard event.type == .reminderDue else { return }
            entries.append(
                JournalStore.Entry(
                    sequence: Int64(entries.count + 1), event: event, occurrence: occurrences.first, facts: .event,
                    recorded: Timestamp(event.time)))
        }
        return entries
    }

    /// A crowded day's conflicts and overruns (198 events) through a hook that takes half a second each, four at a
    /// time, with no filter: the reminder delivered just after them runs before all but the first few of them, not
    /// 25 s later behind them all (counted, not timed, so a busy machine changes nothing); every day event still
    /// runs once, and none is left kept in the journal.
    @Test func aCrowdedDayThroughASlowHookKeepsRemindersOnTime() async throws {
        let meetings = (0..<DaySettings.crowdedDay).map { index in
            let start = utc("2026-12-02T08:00:00Z").adding(seconds: Int64(index) * 60)
            return DayTests.item(
                "meeting-\(index)", NextCommandTests.stamp(Int(start.secondsSinceEpoch)),
                NextCommandTests.stamp(Int(start.secondsSinceEpoch) + 3 * 3600))
        }
        let (events, _) = try DayTests.run(
            DayTests.calendar(meetings), from: "2026-12-01T00:00:00Z", to: "2026-12-03T00:00:00Z")
        let bulk = events.filter { HookSink.canWait($0.type) }.enumerated().map { index, event in
            JournalStore.Entry(
                sequence: Int64(index + 1), event: event, occurrence: nil, facts: .event,
                recorded: Timestamp(event.time))
        }
        #expect(bulk.count >= 2 * (DaySettings.crowdedDay - 1))
        let planned = try #require(try Self.reminders(summary: "Standup", location: "").first)
        let reminder = JournalStore.Entry(
            sequence: Int64(bulk.count + 1), event: planned.event, occurrence: planned.occurrence, facts: planned.facts,
            recorded: planned.recorded)
        let folder = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let script = SinkFixtures.script(
            """
            case "$CE_TYPE" in
                calwatch.reminderDue) cat "$(dirname "$0")/day" 2>/dev/null | wc -l > "$(dirname "$0")/reminder" ;;
                *) sleep 0.5; echo "$CE_ID" >> "$(dirname "$0")/day" ;;
            esac
            """, in: folder)
        var settings = Self.unhurried([script])
        settings.concurrency = 4
        let sink = Self.sink(settings, log: Log())
        let journal = try JournalStore(path: folder + "/journal.db")
        try await Self.running(sink, journal: journal, entries: bulk + [reminder]) {
            try await eventually("the sink to have its journal") { await sink.setsDayEventsAside }
            await sink.deliver(bulk)
            await sink.deliver([reminder])
            try await eventually("the reminder's run") { FileManager.default.fileExists(atPath: folder + "/reminder") }
            let before = Int(
                try String(contentsOfFile: folder + "/reminder", encoding: .utf8).trimmingCharacters(
                    in: .whitespacesAndNewlines))
            // At most the runs already going and the next few: four at a time, so a handful, never the 198.
            #expect((before ?? .max) <= 16, "the reminder ran after \(before ?? -1) of the \(bulk.count) day events")
            try await slowly("every day event run") {
                ((try? String(contentsOfFile: folder + "/day", encoding: .utf8)) ?? "").split(separator: "\n").count
                    >= bulk.count
            }
        }
        let ran = try String(contentsOfFile: folder + "/day", encoding: .utf8).split(separator: "\n")
        #expect(ran.count == bulk.count && Set(ran).count == bulk.count)
        #expect(try await journal.heldRetries(for: sink.name).isEmpty)
    }

    @Test func calendarTextNeverRunsAndReachesTheHookIntact() async throws {
        let hostile =
            "$(touch pwned) `touch pwned2`; touch pwned3 | cat && echo ${HOME}\nsecond line\t'quoted' \"double\""
        let location = "-rf --help"
        let entries = try Self.reminders(summary: hostile, location: location)
        #expect(entries.count == 3)
        // What calwatch read: the location's broken bytes replaced, the rest as written.
        let locationRead = try #require(entries[0].occurrence?.location)
        #expect(locationRead.hasPrefix(location + " ") && locationRead.contains("\u{FFFD}"))
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script(
            """
            out="$(dirname "$0")/run-$CALWATCH_MINUTES_BEFORE"
            mkdir "$out"
            cat > "$out/stdin.json"
            printf '%s' "$1" > "$out/arg1"
            printf '%s' "$2" > "$out/arg2"
            printf '%s' "$#" > "$out/argc"
            printf '%s' "$CALWATCH_SUMMARY" > "$out/env-summary"
            printf '%s' "$CE_TYPE" > "$out/env-type"
            """, in: folder)
        let log = Log()
        let sink = Self.sink(
            Self.unhurried([script, "{summary}", "{location}", "literal {summary} text"]), log: log)
        await sink.deliver(entries)
        #expect(await sink.counts.succeeded == 3, "\(log.all)")
        let manager = FileManager.default
        for place in [folder, manager.currentDirectoryPath, NSTemporaryDirectory()] {
            for name in ["pwned", "pwned2", "pwned3"] { #expect(!manager.fileExists(atPath: place + "/" + name)) }
        }
        for minutes in [30, 15, 5] {
            let out = folder + "/run-\(minutes)/"
            func read(_ name: String) throws -> String { try String(contentsOfFile: out + name, encoding: .utf8) }
            // Intact but for its line break, which becomes a space: one value, one line.
            let oneLine = hostile.replacingOccurrences(of: "\n", with: " ")
            #expect(try read("arg1") == oneLine)
            #expect(try read("arg2") == locationRead)
            #expect(try read("argc") == "3")
            #expect(try read("env-summary") == oneLine)
            #expect(try read("env-type") == "calwatch.reminderDue")
            let event = try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: out + "stdin.json")))
            let occurrence = ((event as? [String: Any])?["data"] as? [String: Any])?["occurrence"] as? [String: Any]
            #expect(occurrence?["summary"] as? String == hostile)
            #expect(occurrence?["location"] as? String == locationRead)
        }
    }

    @Test func veryLongTextIsWholeOnStandardInputAndCutSafelyInArguments() async throws {
        let long = String(repeating: "ü", count: 100_000) + " end"
        let entries = try Self.reminders(summary: long, location: "x")
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script(
            """
            cat > "$(dirname "$0")/stdin-$CALWATCH_MINUTES_BEFORE.json"
            printf '%s' "$1" > "$(dirname "$0")/arg-$CALWATCH_MINUTES_BEFORE"
            """, in: folder)
        let log = Log()
        let sink = Self.sink(Self.unhurried([script, "{summary}"]), log: log)
        await sink.deliver(Array(entries.prefix(1)))
        #expect(await sink.counts.succeeded == 1, "\(log.all)")
        let stdin =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: folder + "/stdin-30.json"))) as? [String: Any]
        let summary = ((stdin?["data"] as? [String: Any])?["occurrence"] as? [String: Any])?["summary"] as? String
        #expect(summary == long)
        // The argument is cut at 64 KiB, at a character boundary: valid UTF-8, a prefix of the summary.
        let argument = try String(contentsOfFile: folder + "/arg-30", encoding: .utf8)
        #expect(argument.utf8.count <= 65_536 && argument.utf8.count > 65_000 && long.hasPrefix(argument))
    }

    /// A hook that exited before its timeout is not timed out because calwatch heard of its end only after the
    /// timeout had passed (on a pool busy with other work, held here): the timeout limits the program.
    @Test func aHookThatEndedBeforeItsTimeoutIsNotTimedOutHoweverLateItsEndIsHeardOf() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script(
            """
            echo $$ > "$(dirname "$0")/hook.pid"
            while [ ! -e "$(dirname "$0")/go" ]; do sleep 0.05; done
            """, in: folder)
        let log = Log()
        var settings = HookSettings(run: [script])
        settings.timeout = .seconds(10)
        let clock = ManualClock()
        let sink = Self.sink(settings, log: log, clock: clock)
        let executor = ThreadExecutor()
        defer { executor.finish() }
        let delivery = Task(executorPreference: executor) { await sink.deliver(Array(entries.prefix(1))) }
        try await clock.waitForSleeper(.seconds(10))
        let pid = try await writtenPID(at: folder + "/hook.pid")
        executor.hold()
        _ = FileManager.default.createFile(atPath: folder + "/go", contents: nil)
        try await eventually("the hook exited") { hasExited(pid) }
        clock.advance(by: .seconds(10))
        try await Task.sleep(for: .milliseconds(500))
        executor.release()
        await delivery.value
        #expect(await sink.counts == HookSink.Counts(succeeded: 1), "\(log.all)")
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test func aHookThatHangsIsStoppedAtItsTimeoutWithItsChildren() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script(
            """
            # A child that ignores SIGTERM, so that only the group's SIGKILL stops it.
            (trap '' TERM; exec sleep 300) &
            echo "still working" >&2
            # The trap is set before the test is told to time the hook out (child.pid), or TERM could come first.
            trap 'echo "asked to stop" >&2; exit 143' TERM
            echo $! > "$(dirname "$0")/child.pid"
            sleep 300
            """, in: folder)
        let log = Log()
        var settings = HookSettings(run: [script])
        settings.timeout = .seconds(10)
        let clock = ManualClock()
        let sink = Self.sink(settings, log: log, clock: clock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await sink.deliver(Array(entries.prefix(1))) }
            // The timeout passes on the clock once the hook has said something and started its child. What it
            // says is read to the end of the pipe, however far calwatch had got when the timeout came.
            try await clock.waitForSleeper(.seconds(10))
            try await eventually("the hook's child") { FileManager.default.fileExists(atPath: folder + "/child.pid") }
            clock.advance(by: .seconds(10))
            try await group.waitForAll()
        }
        #expect(await sink.counts.timedOut == 1)
        #expect(log.all.count == 1 && log.all[0].contains("timeout"), "\(log.all)")
        // What it said before the timeout, and as it was stopped.
        #expect(log.all.first?.firstMatch(of: /still working.*asked to stop/.dotMatchesNewlines()) != nil, "\(log.all)")
        #expect(log.recorder.metadata.first?["sink.name"] != nil)
        let child = try #require(
            Int32(
                try String(contentsOfFile: folder + "/child.pid", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        // Gone, or a zombie waiting for its new parent to reap it: either way, not running.
        try await eventually("the hook's child \(child) to stop") {
            let stat = (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8)) ?? ""
            return stat.isEmpty || stat.contains(") Z ")
        }
    }

    /// Delivers an expired event whose runs keep asking for a retry (1 s apart, then 2 s), until the sink gives up.
    static func deliverUntilExpired(_ entry: JournalStore.Entry, to sink: HookSink, clock: ManualClock) async throws {
        try await running(sink, journal: try ReplayTests.journal(), entries: [entry]) {
            await sink.deliver([entry])
            for delay in [1, 2] {
                try await clock.waitForSleeper(.seconds(delay))
                clock.advance(by: .seconds(delay))
            }
            try await eventually("giving up") { await sink.counts.failed == 1 }
        }
    }

    /// A script that exits 75 for its first `failures` runs, then 0, counting runs in `count`.
    static func flakyScript(failures: Int, in folder: String) -> String {
        SinkFixtures.script(
            """
            count="$(dirname "$0")/count"
            n=$(( $(cat "$count" 2>/dev/null || echo 0) + 1 ))
            echo $n > "$count"
            echo "$CALWATCH_MINUTES_BEFORE" >> "$(dirname "$0")/runs"
            [ $n -gt \(failures) ] || exit 75
            """, in: folder)
    }

    @Test func exit75IsRetriedAfterAGrowingDelayThenDelivered() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        let folder = SinkFixtures.folder()
        let log = Log()
        let clock = ManualClock()
        let sink = Self.sink(
            HookSettings(run: [Self.flakyScript(failures: 2, in: folder)]), log: log, firstRetryDelay: .seconds(1),
            clock: clock)
        let journal = try ReplayTests.journal()
        try await Self.running(sink, journal: journal, entries: Array(entries.prefix(1))) {
            await sink.deliver(Array(entries.prefix(1)))
            #expect(try await journal.heldRetries(for: sink.name).count == 1)
            // 1 s, then 2 s: nothing runs before its delay has passed on the clock.
            try await clock.waitForSleeper(.seconds(1))
            clock.advance(by: .milliseconds(999))
            #expect(SinkFixtures.lines(folder + "/runs").count == 1)
            clock.advance(by: .milliseconds(1))
            try await clock.waitForSleeper(.seconds(2))
            #expect(SinkFixtures.lines(folder + "/runs").count == 2)
            clock.advance(by: .seconds(2))
            try await eventually("the third run") { await sink.counts.succeeded == 1 }
        }
        #expect(try String(contentsOfFile: folder + "/count", encoding: .utf8) == "3\n")
        #expect(await sink.counts == HookSink.Counts(succeeded: 1, failed: 0, retried: 2, timedOut: 0, skipped: 0))
        #expect(log.all.count == 1 && log.all[0].contains("exit 75"))
        #expect(log.recorder.metadata.first?["hook.exit_code"] == "75")
        // Done with: no longer kept for a retry.
        #expect(try await journal.heldRetries(for: sink.name).isEmpty)
    }

    @Test func aHookRetryingOneEventDoesNotHoldBackTheNext() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        #expect(entries.count == 3)
        let folder = SinkFixtures.folder()
        let log = Log()
        let clock = ManualClock()
        var settings = HookSettings(run: [Self.flakyScript(failures: 1, in: folder)])
        settings.concurrency = 1
        let sink = Self.sink(settings, log: log, firstRetryDelay: .seconds(60), clock: clock)
        try await Self.running(sink, journal: try ReplayTests.journal(), entries: entries) {
            // The 30-minute reminder asks for a retry in a minute; the 15- and 5-minute ones, due meanwhile, run
            // at once, without the clock moving.
            await sink.deliver([entries[0]])
            await sink.deliver([entries[1]])
            await sink.deliver([entries[2]])
            #expect(SinkFixtures.lines(folder + "/runs") == ["30", "15", "5"])
            try await clock.waitForSleeper(.seconds(60))
            clock.advance(by: .seconds(60))
            try await eventually("the retry") { await sink.counts.succeeded == 3 }
        }
        // The order a hook sees: journal order, the retried event again after the later ones.
        #expect(SinkFixtures.lines(folder + "/runs") == ["30", "15", "5", "30"])
    }

    @Test func aRetryWaitingAtAStopIsTriedFirstAtTheNextStart() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        let folder = SinkFixtures.folder()
        let journal = try ReplayTests.journal()
        let script = Self.flakyScript(failures: 1, in: folder)
        let first = Self.sink(
            HookSettings(run: [script]), log: Log(), firstRetryDelay: .seconds(60), clock: ManualClock())
        try await Self.running(first, journal: journal, entries: Array(entries.prefix(1))) {
            await first.deliver(Array(entries.prefix(1)))
        }
        // Stopped before its minute had passed: not run again, and kept.
        #expect(SinkFixtures.lines(folder + "/runs") == ["30"])
        #expect(try await journal.heldRetries(for: first.name).map(\.sequence) == [1])
        let second = Self.sink(HookSettings(run: [script]), log: Log(), clock: ManualClock())
        let context = SinkContext(journal: journal) { journaled in
            entries.first { $0.event.id == journaled.event.id }
                ?? JournalStore.Entry(journaled, occurrence: nil, facts: { _ in .event })
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await second.run(context) }
            try await eventually("the retry at start") { await second.counts.succeeded == 1 }
            context.stopRun()
        }
        #expect(SinkFixtures.lines(folder + "/runs") == ["30", "30"])
        #expect(try await journal.heldRetries(for: second.name).isEmpty)
    }

    @Test func exit75StopsBeingRetriedOnceTheEventHasExpired() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script("echo run >> \"$(dirname \"$0\")/runs\"; exit 75", in: folder)
        let log = Log()
        let clock = ManualClock()
        // The clock says the reminder expired long ago: the minimum attempts, then it gives up.
        let sink = Self.sink(
            HookSettings(run: [script]), log: log, firstRetryDelay: .seconds(1), clock: clock,
            now: utc("2030-01-01T00:00:00Z"))
        try await Self.deliverUntilExpired(entries[0], to: sink, clock: clock)
        #expect(SinkFixtures.lines(folder + "/runs").count == 3)
        #expect(log.all.last?.contains("giving up as the event has expired") == true)
    }

    @Test func aFailingHookIsLoggedWithWhatItSaidAndNotRetried() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script(
            "echo run >> \"$(dirname \"$0\")/runs\"; echo 'cannot open display :0' >&2; exit 3", in: folder)
        let log = Log()
        let sink = Self.sink(Self.unhurried([script]), log: log)
        await sink.deliver(Array(entries.prefix(1)))
        #expect(SinkFixtures.lines(folder + "/runs").count == 1)
        #expect(log.all.count == 1)
        #expect(log.all[0].contains("exit status 3") && log.all[0].contains("cannot open display :0"))
        #expect(await sink.counts.failed == 1)
    }

    @Test func everyPlaceholderTheConfigurationAcceptsHasAValue() {
        // The configuration checks `run` arguments against the core's list; the sink fills in its own table.
        #expect(HookFields.table.map(\.placeholder) == HookSettings.placeholders)
    }

    @Test func filtersChooseTheEvents() async throws {
        let entries = try await SinkFixtures.wednesday()
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script(
            "echo \"$CALWATCH_EVENT $CALWATCH_MINUTES_BEFORE $CALWATCH_CALENDAR\" >> \"$(dirname \"$0\")/runs\"",
            in: folder)
        var settings = HookSettings(run: [script])
        settings.events = [.reminderDue]
        settings.offsets = [300]
        // Named as a CalDAV export names it (after its href): the same calendar as the folder's `Work`.
        settings.calendars = ["work"]
        let log = Log()
        let sink = Self.sink(settings, log: log)
        await sink.deliver(entries)
        let expected = entries.filter {
            $0.event.type == .reminderDue && $0.event.reminder?.secondsBefore == 300 && $0.event.key.calendar == "Work"
        }
        #expect(expected.count >= 2)
        #expect(SinkFixtures.lines(folder + "/runs") == Array(repeating: "reminderDue 5 Work", count: expected.count))
        #expect(await sink.counts.skipped == entries.count - expected.count)
    }

    @Test func aMissingProgramIsReportedAndRetried() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        let log = Log()
        let clock = ManualClock()
        let sink = Self.sink(
            HookSettings(run: ["/nonexistent/calwatch-hook"]), log: log, firstRetryDelay: .seconds(1), clock: clock,
            now: utc("2030-01-01T00:00:00Z"))
        try await Self.deliverUntilExpired(entries[0], to: sink, clock: clock)
        #expect(
            log.all.first?.contains("could not start /nonexistent/calwatch-hook: No such file or directory") == true)
    }
}
