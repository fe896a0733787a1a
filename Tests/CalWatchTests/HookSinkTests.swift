import Foundation
import Synchronization
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The hook sink with real child processes: what reaches them, and what happens when they hang, fail or ask for a
/// retry.
@Suite struct HookSinkTests {
    /// Collects what the sink logs.
    final class Log: Sendable {
        private let lines = Mutex<[String]>([])
        @Sendable func record(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    static func sink(
        _ settings: HookSettings, log: Log, firstRetryDelay: Duration = .milliseconds(10)
    ) -> HookSink {
        var retry = HookSink.RetryPolicy()
        retry.firstDelay = firstRetryDelay
        return HookSink(
            settings: settings, retry: retry, now: { utc("2027-03-03T00:00:00Z") }, log: log.record)
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
            configuration: PlannerConfiguration(), occurrencesAt: { _ in occurrences }
        ) { event in
            guard event.type == .reminderDue else { return }
            entries.append(
                JournalStore.Entry(
                    sequence: Int64(entries.count + 1), event: event, occurrence: occurrences.first, facts: .event,
                    recorded: event.time))
        }
        return entries
    }

    @Test func calendarTextNeverRunsAndReachesTheHookIntact() async throws {
        let hostile = "$(touch pwned) `touch pwned2`; touch pwned3 | cat && echo ${HOME}\nsecond line\t'quoted' \"double\""
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
        let sink = Self.sink(HookSettings(run: [script, "{summary}", "{location}", "literal {summary} text"]), log: log)
        await sink.deliver(entries)
        #expect(await sink.counts.succeeded == 3, "\(log.all)")
        let manager = FileManager.default
        for place in [folder, manager.currentDirectoryPath, NSTemporaryDirectory()] {
            for name in ["pwned", "pwned2", "pwned3"] { #expect(!manager.fileExists(atPath: place + "/" + name)) }
        }
        for minutes in [30, 15, 5] {
            let out = folder + "/run-\(minutes)/"
            func read(_ name: String) throws -> String { try String(contentsOfFile: out + name, encoding: .utf8) }
            #expect(try read("arg1") == hostile)
            #expect(try read("arg2") == locationRead)
            #expect(try read("argc") == "3")
            #expect(try read("env-summary") == hostile)
            #expect(try read("env-type") == "calwatch.reminderDue")
            let event = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "stdin.json")))
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
        let sink = Self.sink(HookSettings(run: [script, "{summary}"]), log: log)
        await sink.deliver(Array(entries.prefix(1)))
        #expect(await sink.counts.succeeded == 1, "\(log.all)")
        let stdin = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: folder + "/stdin-30.json"))) as? [String: Any]
        let summary = ((stdin?["data"] as? [String: Any])?["occurrence"] as? [String: Any])?["summary"] as? String
        #expect(summary == long)
        // The argument is cut at 64 KiB, at a character boundary: valid UTF-8, a prefix of the summary.
        let argument = try String(contentsOfFile: folder + "/arg-30", encoding: .utf8)
        #expect(argument.utf8.count <= 65_536 && argument.utf8.count > 65_000 && long.hasPrefix(argument))
    }

    @Test func aHookThatHangsIsStoppedAtItsTimeoutWithItsChildren() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script(
            """
            # A child that ignores SIGTERM, so that only the group's SIGKILL stops it.
            (trap '' TERM; exec sleep 300) &
            echo $! > "$(dirname "$0")/child.pid"
            echo "still working" >&2
            sleep 300
            """, in: folder)
        let log = Log()
        var settings = HookSettings(run: [script])
        settings.timeout = .seconds(1)
        let sink = Self.sink(settings, log: log)
        let started = ContinuousClock.now
        await sink.deliver(Array(entries.prefix(1)))
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(await sink.counts.timedOut == 1)
        #expect(log.all.count == 1 && log.all[0].contains("timeout") && log.all[0].contains("still working"))
        let child = try #require(Int32(try String(contentsOfFile: folder + "/child.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // Gone, or a zombie waiting for its new parent to reap it: either way, not running.
        var running = true
        for _ in 0..<200 where running {
            let stat = (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8)) ?? ""
            running = !stat.isEmpty && !stat.contains(") Z ")
            if running { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(!running, "the hook's child \(child) still runs")
    }

    @Test func exit75IsRetriedThenDelivered() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script(
            """
            count="$(dirname "$0")/count"
            n=$(( $(cat "$count" 2>/dev/null || echo 0) + 1 ))
            echo $n > "$count"
            [ $n -ge 3 ] || exit 75
            """, in: folder)
        let log = Log()
        let sink = Self.sink(HookSettings(run: [script]), log: log)
        await sink.deliver(Array(entries.prefix(1)))
        #expect(try String(contentsOfFile: folder + "/count", encoding: .utf8) == "3\n")
        #expect(await sink.counts == HookSink.Counts(succeeded: 1, failed: 0, retried: 2, timedOut: 0, skipped: 0))
        #expect(log.all.count == 1 && log.all[0].contains("exit 75"))
    }

    @Test func exit75StopsBeingRetriedOnceTheEventHasExpired() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script("echo run >> \"$(dirname \"$0\")/runs\"; exit 75", in: folder)
        let log = Log()
        var retry = HookSink.RetryPolicy()
        retry.firstDelay = .milliseconds(1)
        // The clock says the reminder expired long ago: the minimum attempts, then it gives up.
        let sink = HookSink(
            settings: HookSettings(run: [script]), retry: retry, now: { utc("2030-01-01T00:00:00Z") },
            log: log.record)
        await sink.deliver(Array(entries.prefix(1)))
        #expect(SinkFixtures.lines(folder + "/runs").count == 3)
        #expect(await sink.counts.failed == 1)
        #expect(log.all.last?.contains("giving up as the event has expired") == true)
    }

    @Test func aFailingHookIsLoggedWithWhatItSaidAndNotRetried() async throws {
        let entries = try Self.reminders(summary: "Standup", location: "")
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script(
            "echo run >> \"$(dirname \"$0\")/runs\"; echo 'cannot open display :0' >&2; exit 3", in: folder)
        let log = Log()
        let sink = Self.sink(HookSettings(run: [script]), log: log)
        await sink.deliver(Array(entries.prefix(1)))
        #expect(SinkFixtures.lines(folder + "/runs").count == 1)
        #expect(log.all.count == 1)
        #expect(log.all[0].contains("exit status 3") && log.all[0].contains("cannot open display :0"))
        #expect(await sink.counts.failed == 1)
    }

    @Test func filtersChooseTheEvents() async throws {
        let entries = try await SinkFixtures.wednesday()
        let folder = SinkFixtures.folder()
        let script = SinkFixtures.script(
            "echo \"$CALWATCH_EVENT $CALWATCH_MINUTES_BEFORE $CALWATCH_CALENDAR\" >> \"$(dirname \"$0\")/runs\"", in: folder)
        var settings = HookSettings(run: [script])
        settings.events = [.reminderDue]
        settings.offsets = [300]
        settings.calendars = ["Work"]
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
        var retry = HookSink.RetryPolicy()
        retry.firstDelay = .milliseconds(1)
        let sink = HookSink(
            settings: HookSettings(run: ["/nonexistent/calwatch-hook"]), retry: retry,
            now: { utc("2030-01-01T00:00:00Z") }, log: log.record)
        await sink.deliver(Array(entries.prefix(1)))
        #expect(log.all.first?.contains("could not start /nonexistent/calwatch-hook: No such file or directory") == true)
        #expect(await sink.counts.failed == 1)
    }
}
