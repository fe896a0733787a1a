import ArgumentParser
import CalWatchCore
import CalWatchRuntime
import Foundation

extension CalwatchCommand {
    /// `calwatch explain`: why each item is a flight, a meeting or a plain event.
    struct Explain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show, for people, why each calendar item is a flight, a meeting or a plain event.",
            discussion: """
                For every item (a series once) it prints the kind and confidence, each rule that fired on which \
                text (+ for, − against, · a fact taken), and the flight's or meeting's facts: code, airports, \
                leave-by, join link.

                `me` (your addresses, to find your own RSVP and tell other attendees apart) and the flight leads \
                come from the configuration: --config, else the default file when it exists.

                Examples:
                  calwatch explain trip.ics
                  calwatch explain ~/.calendars/work --uid 040000008200E00074C5B7101A82E008
                """
        )

        @OptionGroup var calendars: CalendarOptions
        @OptionGroup var settings: ConfigurationOptions

        @Option(help: "Explain only the item with this UID.")
        var uid: String?

        func validate() throws {
            if calendars.paths.isEmpty {
                throw ValidationError("Name a calendar: a .ics file, a vdir folder, a CalDAV .xml export or -.")
            }
            _ = try calendars.zone()
        }

        func run() async throws {
            try CommandSupport.requireReferenceData()
            let configuration = await CommandSupport.fetchingFeeds(
                try settings.loadOrExit(calendars: calendars, useDefaultFile: true))
            let zone = try CommandSupport.zone(configuration.timeZone)
            // Every occurrence from 1970 to 2100, to find each item's first one (what a series is classified by).
            let window = InstantWindow(
                start: Instant(secondsSinceEpoch: 0), end: Instant(secondsSinceEpoch: 4_102_444_800))
            let scan = CalendarScan(
                paths: configuration.calendars, options: ExpansionOptions(window: window, defaultZone: zone)
            ).run()
            CommandSupport.report(scan.problems)
            if scan.nothingReadable { throw ExitCode.dataError }
            var seen: Set<ObjectIdentifier> = []
            let shown = scan.occurrences.filter {
                (uid == nil || $0.uid == uid) && seen.insert(ObjectIdentifier($0.source)).inserted
            }
            let classifier = await CommandSupport.classifier(
                configuration, occurrences: scan.occurrences, now: CommandSupport.now,
                journal: configuration.statePath,
                planning: { classifier in for occurrence in shown { _ = classifier.facts(for: occurrence) } })
            var text = ""
            for occurrence in shown {
                text += Self.explanation(of: occurrence, classifier: classifier) + "\n"
            }
            if seen.isEmpty {
                StandardStreams.error(
                    uid.map {
                        "calwatch: no item with UID \($0) in \(configuration.calendars.joined(separator: ", "))\n"
                    } ?? "calwatch: no items found\n")
                throw ExitCode.dataError
            }
            StandardStreams.report(text)
        }

        static func explanation(of occurrence: Occurrence, classifier: Classifier) -> String {
            let result = classifier.classification(of: occurrence)
            let facts = classifier.facts(for: occurrence)
            var lines = [occurrence.heading]
            let when =
                occurrence.allDay
                ? "all day" : "\(Int((occurrence.end.secondsSinceEpoch - occurrence.start.secondsSinceEpoch) / 60)) min"
            lines.append("  first occurrence \(occurrence.start) (\(when))")
            var kind = "  kind: \(result.kind.rawValue), confidence \(String(format: "%.2f", result.confidence))"
            if let tier = result.flight?.tier { kind += ", tier \(tier)" }
            if result.declined { kind += ", declined by you" }
            lines.append(kind)
            if result.evidence.isEmpty {
                lines.append("  no rule fired: nothing in it reads as a flight, a join link or other attendees")
            }
            lines += result.evidence.map { "    \($0)" }
            if let flight = result.flight {
                let route = "\(flight.origin?.code ?? "?") → \(flight.destination?.code ?? "?")"
                var text = "  flight: \(flight.code ?? "no number")"
                if let airline = flight.airline { text += " (\(airline))" }
                text += ", \(route)"
                if let international = flight.international { text += international ? ", international" : ", domestic" }
                lines.append(text)
                if let leaveBy = facts.leaveBy {
                    let departure = facts.flight?.live?.departure ?? Classifier.departure(of: flight, on: occurrence)
                    lines.append("  leave by \(leaveBy) (departure \(departure) − airport lead − travel time)")
                }
                // This occurrence's: a boarding pass is for one day of the flight.
                let occurring = facts.flight ?? flight
                let details = [
                    ("terminal", occurring.terminal), ("gate", occurring.gate), ("seat", occurring.seat),
                    ("booking", occurring.bookingReference),
                ].compactMap { name, value in value.map { "\(name) \($0)" } }
                if !details.isEmpty { lines.append("  " + details.joined(separator: ", ")) }
                if let pass = occurring.pass { lines.append("  boarding pass: " + pass.details) }
                if let live = occurring.live {
                    lines.append(
                        "  flight status: "
                            + live.details(calendar: occurrence.start, shown: { $0.description }))
                }
            }
            if let meeting = result.meeting {
                var text = "  meeting: \(meeting.service ?? "no join link")"
                if let url = meeting.joinURL { text += " \(url)" }
                lines.append(text)
                let details = [("id", meeting.meetingID), ("passcode", meeting.passcode), ("dial-in", meeting.dialIn)]
                    .compactMap { name, value in value.map { "\(name) \($0)" } }
                if !details.isEmpty { lines.append("  " + details.joined(separator: ", ")) }
            }
            if result.flight == nil, let leave = facts.leave {
                lines.append("  leave by \(leave.by) (start \(occurrence.start) − \(leave.explanation))")
            }
            // Each line one line: evidence quotes calendar text, which may hold newlines.
            return lines.map { TerminalText.safe($0, keepingLines: false) }.joined(separator: "\n") + "\n"
        }
    }
}
