import ArgumentParser
import CalWatchCore
import CalWatchRuntime
import Foundation

extension CalwatchCommand {
    /// What `snooze`, `dismiss` and `ack` share: which journal, and how an answer reaches the daemon.
    struct AnswerOptions: ParsableArguments {
        /// The `--help` text of `dismiss` and `ack`: what names an occurrence, and how the answer travels.
        static func occurrenceDiscussion(event: String) -> String {
            """
            EVENT is an event id (CE_ID) of any of its events, or SUBJECT the occurrence's UID/START as in \
            CE_SUBJECT, or a UID alone (its occurrence running now, else its next one). The answer is a \
            \(event) event; the running daemon applies it within a second, or it is kept in the journal for \
            the daemon's next start. The same answer given twice counts once.

            \(exitStatuses)
            """
        }

        /// The exit statuses an answer ends with, for every answer's `--help`.
        static let exitStatuses = """
            Exit status: 0 applied, or kept for the daemon's next start; 65 refused (why is on standard error: no \
            such occurrence, over, a snooze past its end, a live activity's id); 66 no journal at the path (a \
            mistyped --state is never created).
            """

        @OptionGroup var settings: ConfigurationOptions

        @Option(
            help: ArgumentHelp(
                "The daemon's journal (default: $CALWATCH_STATE, which hooks get, else the configuration's state).",
                valueName: "file"))
        var state: String?

        /// The journal the daemon keeps: --state, the hook's `CALWATCH_STATE`, or the configuration's `state`.
        func journalPath() throws -> String {
            if let state { return absolute(state) }
            if let fromHook = ProcessInfo.processInfo.environment["CALWATCH_STATE"], !fromHook.isEmpty {
                return fromHook
            }
            return try settings.loadOrExit(calendars: nil, useDefaultFile: true).statePath
        }

        private func absolute(_ path: String) -> String {
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        }

        /// Records the answer in the journal, rings the daemon, and says what became of it: the daemon's outcome
        /// when it takes the answer within a second and a half, else that it is kept for the daemon.
        func give(_ kind: JournalStore.Answer.Kind, target: String, seconds: Int64? = nil) async throws {
            guard !target.isEmpty else { throw ValidationError("Name the reminder: an event id (CE_ID) or a subject.") }
            let path = try journalPath()
            // A mistyped path would make a journal no daemon reads, and the answer would be lost.
            guard FileManager.default.fileExists(atPath: path) else {
                StandardStreams.error(
                    "calwatch: no journal at \(path); name the daemon's with --state (its configuration's state:), "
                        + "or start calwatch watch first\n")
                throw ExitCode.noInput
            }
            let journal = try CommandSupport.openJournalOrExit(path)
            switch try await journal.give(kind, target: target, seconds: seconds, given: CommandSupport.timestamp) {
            case .applied(let outcome): StandardStreams.report("calwatch: \(outcome)\n")
            case .refused(let reason):
                StandardStreams.error("calwatch: \(reason)\n")
                throw ExitCode.dataError
            case .kept:
                StandardStreams.report("calwatch: recorded in \(path); calwatch watch applies it when it runs\n")
            }
        }
    }

    /// `calwatch snooze`.
    struct Snooze: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Snooze a reminder: it comes again after the duration (default 5m).",
            discussion: """
                EVENT is the reminder's id, as a hook gets it in CE_ID. The snoozed reminderDue is marked \
                "snoozed": true with its count, and never comes after the occurrence's end (a flight's \
                departure); a snooze that would is refused. The answer is a calwatch.reminderSnoozed event on the \
                stream. The running daemon applies it within a second; with none running it is kept in the \
                journal for its next start. The same answer given twice counts once, so a hook may call it again.

                \(AnswerOptions.exitStatuses)

                Examples:
                  calwatch snooze "$CE_ID"            # in a hook: five minutes
                  calwatch snooze 3f2a…e9 10m
                """)

        @Argument(help: "The reminder's event id (CE_ID).")
        var event: String

        @Argument(help: "How long: 30s, 5m, 1h.")
        var duration = DurationArgument("5m")

        @OptionGroup var options: AnswerOptions

        func validate() throws {
            try duration.checked("", in: 1...86_400, example: "5m or 30s")
        }

        func run() async throws {
            try await options.give(.snooze, target: event, seconds: duration.seconds)
        }
    }

    /// `calwatch dismiss`.
    struct Dismiss: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Dismiss an occurrence's reminders: no more come, and its live activity ends (dismissed).",
            discussion: AnswerOptions.occurrenceDiscussion(event: "calwatch.reminderDismissed"))

        @Argument(help: "An event id (CE_ID), a subject UID/START (CE_SUBJECT), or a UID.")
        var event: String

        @OptionGroup var options: AnswerOptions

        func run() async throws { try await options.give(.dismiss, target: event) }
    }

    /// `calwatch ack`.
    struct Ack: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ack",
            abstract: "Acknowledge an occurrence's reminders: no more come, and its live activity goes on.",
            discussion: AnswerOptions.occurrenceDiscussion(event: "calwatch.reminderAcknowledged"))

        @Argument(help: "An event id (CE_ID), a subject UID/START (CE_SUBJECT), or a UID.")
        var event: String

        @OptionGroup var options: AnswerOptions

        func run() async throws { try await options.give(.ack, target: event) }
    }
}
