import ArgumentParser
import CalWatch
import Foundation

extension CalwatchCommand {
    /// `calwatch replay`: the event pipeline over a time window on a virtual clock.
    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the event pipeline over a time window on a virtual clock, as fast as the machine allows.",
            discussion: """
                Plans reminders (30, 15 and 5 minutes before each start) and live activities (from 15 minutes \
                before until the end, updated every minute) for every occurrence, commits each event to a journal, \
                and prints it as a CloudEvents 1.0 JSON line on standard output. A summary goes to standard error.

                Without --state the replay uses a fresh journal of its own, removed afterwards, so two replays of \
                the same input print the same events (apart from recordedtime) and the daemon's journal is never \
                touched. With --state it continues where that journal stopped: a replay interrupted at any point and \
                started again prints only the events it had not printed.

                Examples:
                  calwatch replay samples/calendars --from 2027-03-03 --to 2027-03-04 --tz Europe/Berlin
                  calwatch replay ~/.calendars --from today --to tomorrow | jq -c 'select(.type == "calwatch.reminderDue")'
                """
        )

        @OptionGroup var calendars: CalendarOptions

        @Option(help: "Start of the virtual clock.")
        var from: String

        @Option(help: "End of the virtual clock, exclusive.")
        var to: String

        @Option(help: "The journal to continue (default: a fresh one of this replay's own, removed afterwards).")
        var state: String?

        func validate() throws {
            let zone = try calendars.zone()
            _ = try CommandSupport.window(
                from: CommandSupport.instant(from, zone: zone), to: CommandSupport.instant(to, zone: zone))
        }

        func run() async throws {
            let started = Date()
            let zone = try calendars.zone()
            let window = try CommandSupport.window(
                from: CommandSupport.instant(from, zone: zone), to: CommandSupport.instant(to, zone: zone))
            let configuration = PlannerConfiguration()
            // Occurrences whose events can fall inside the window: from the longest live activity before it to
            // the earliest reminder or calendar alarm after it.
            var options = ExpansionOptions(window: window, defaultZone: zone)
            options.lookBehind = configuration.liveActivityMaxDuration + 86_400
            options.lookAhead = max(configuration.lookAhead, 8 * 86_400)
            let scan = CalendarScan(paths: calendars.paths, options: options).run()
            CommandSupport.report(scan.problems)
            if scan.nothingReadable { throw ExitCode(65) }

            let temporary = state == nil
            let path =
                state
                ?? FileManager.default.temporaryDirectory
                .appendingPathComponent("calwatch-replay-\(getpid())-\(UUID().uuidString).db").path
            defer {
                if temporary {
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                }
            }
            let journal: JournalStore
            do {
                journal = try JournalStore(path: path)
            } catch {
                StandardStreams.error("calwatch: cannot open the journal \(path): \(error)\n")
                throw ExitCode(74)
            }
            let replay = CalWatch.Replay(
                occurrences: scan.occurrences, configuration: configuration, journal: journal,
                sinks: [JSONLinesSink.standardOutput()], recordedTime: { CommandSupport.now })
            let summary: CalWatch.Replay.Summary
            do {
                summary = try replay.run(from: window.start, to: window.end)
            } catch is DescriptorWriter.Closed {
                return  // the reader went away (`| head`): a quiet end
            } catch {
                StandardStreams.error("calwatch: \(error)\n")
                throw ExitCode(74)
            }
            let seconds = Date().timeIntervalSince(started)
            let counts = EventType.allCases.compactMap { type in
                summary.counts[type].map { "\(type.rawValue) \($0)" }
            }
            var line = "calwatch replay \(window.start)..\(window.end): \(summary.total) events"
            if !counts.isEmpty { line += " (" + counts.joined(separator: ", ") + ")" }
            if summary.caughtUp > 0 { line += ", \(summary.caughtUp) caught up from the journal" }
            line += " to \(summary.sinks.joined(separator: ", ")) in \(String(format: "%.2f", seconds)) s"
            if seconds > 0 { line += " (\(Int(Double(summary.total) / seconds)) events/s)" }
            StandardStreams.error(line + "\n")
        }
    }
}
