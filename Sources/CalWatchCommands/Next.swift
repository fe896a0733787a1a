import ArgumentParser
import CalWatchCore
import CalWatchRemote
import CalWatchRuntime
import Foundation
import Logging

extension CalwatchCommand {
    /// `calwatch next`: the meeting or flight that matters now, for status bars, prompts and scripts.
    struct Next: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the meeting, flight or event that matters now, for status bars, prompts and scripts.",
            discussion: """
                While one is running (from its start to its end), that one, with the time left; otherwise the next \
                one within --within, with a countdown; a flight counts down to the time to leave for its airport \
                (leave-by), then to its departure. Declined and cancelled ones are skipped, and an all-day event is \
                never next. Of two running at once, the one that started last wins.

                Formats:
                  text      one line: `Standup in 12 min · zoom`, `Leave for BER in 1 h 05 (BA987 07:10)`
                  json      the occurrence (as `scan` prints it), its countdown and the rest of today; keys in \
                schemas/calwatch-event.schema.json ($defs/nextStatus)
                  waybar    a custom module's JSON: text, tooltip (the rest of today), class, percentage
                  polybar   a custom/script line, coloured by state
                  i3blocks  full text, short text and colour, one per line

                The class (waybar) and the colour follow the state: live (running), flight (a flight not yet in \
                the air), soon (within the live activity's lead, 15 min by default), upcoming, none.

                --follow prints a line every minute, and at once when it changes: a calendar file written, a \
                meeting starting or ending, the wall clock or the system zone set. It reads the calendars itself \
                with inotify, as `watch` does, and sleeps in between; a bar runs one process, not one a second. \
                samples/statusbar/ has configurations for waybar, polybar and i3blocks.

                The configuration (--config, else $XDG_CONFIG_HOME/calwatch/config.yml when it exists) gives the \
                calendars, the zone, `me` (whose declined meetings are skipped) and the flight leads.

                When `calwatch watch` runs on the same configuration, its local server answers over the socket \
                beside its journal (GET /v1/next) with the same line, without reading the calendars again. With \
                only --config, --format, --kinds, --calendars, --within, --max-width, --none and --markup, the \
                `calwatch` front asks it directly (the daemon links its socket under $XDG_RUNTIME_DIR/calwatch) \
                and prints the line in a few milliseconds. The daemon declines when it read another configuration \
                (edited since, without SIGHUP; paths that lead elsewhere for this user) or has not read the \
                calendars yet; then, as with --at, --follow or --no-daemon, `next` reads them itself.

                --open-page prints the address of the daemon's page (serve: { listen: … } in config.yml), with \
                the token that lets a browser in once (it then keeps a cookie), and opens it where a desktop runs.

                Examples:
                  calwatch next
                  calwatch next ~/.calendars --kinds meeting,flight --max-width 40
                  calwatch next --format waybar --follow
                  calwatch next --format json | jq -r '.occurrence.meeting.joinURL // empty'
                """
        )

        @OptionGroup var calendars: CalendarOptions
        @OptionGroup var settings: ConfigurationOptions

        @Option(help: "Output format: text, json, waybar, polybar or i3blocks.")
        var format: Format = .text

        /// `NextUpFormat`, as an argument.
        enum Format: String, ExpressibleByArgument, CaseIterable {
            case text, json, waybar, polybar, i3blocks
            var format: NextUpFormat { NextUpFormat(rawValue: rawValue)! }
        }

        @Option(
            help: ArgumentHelp(
                "i3blocks: the block's markup setting; pango escapes <, > and & as waybar's text is (default: none).",
                valueName: "none|pango"))
        var markup: Markup = .none

        /// i3blocks' `markup` setting.
        enum Markup: String, ExpressibleByArgument, CaseIterable {
            case none, pango
        }

        @Flag(help: "Keep running: a line every minute, and at once on every change.")
        var follow = false

        @Option(
            help: ArgumentHelp(
                "Kinds shown, comma-separated: meeting, flight, event (default: all).", valueName: "kinds"))
        var kinds: String?

        @Option(
            name: .customLong("calendars"),
            help: ArgumentHelp(
                "Calendars shown, comma-separated, by name without regard to case (default: all).",
                valueName: "names"))
        var calendarNames: String?

        @Option(help: ArgumentHelp("How far ahead to look for the next one.", valueName: "duration"))
        var within = DurationArgument("24h")

        @Option(help: ArgumentHelp("Cut the line to this many terminal columns, with …", valueName: "columns"))
        var maxWidth: Int?

        @Option(
            help: ArgumentHelp(
                "The line when nothing is coming (default: `Nothing in the next …` for text, empty for the bars).",
                valueName: "text"))
        var none: String?

        @Option(help: ArgumentHelp("Show what `next` would say at this time instead of now.", valueName: "time"))
        var at: String?

        @Flag(help: "Read the calendars even when a running daemon could answer.")
        var noDaemon = false

        @Flag(
            help: ArgumentHelp(
                "Print the address of the daemon's page (serve: listen:), with the token that lets a browser in "
                    + "once, and open it where a desktop runs."))
        var openPage = false

        func validate() throws {
            _ = try calendars.zone()
            _ = try kindSet()
            try within.checked("--within", in: 60...31 * 86_400, example: "12h or 2d")
            if let maxWidth, maxWidth < 1 { throw ValidationError("--max-width must be 1 or more.") }
            if follow && at != nil { throw ValidationError("--at shows one moment; it cannot be used with --follow.") }
            if markup == .pango && format != .i3blocks {
                throw ValidationError("--markup is for --format i3blocks (waybar's text is always escaped).")
            }
            if let at { _ = try CommandSupport.instant(at, zone: calendars.zone()) }
        }

        func kindSet() throws -> Set<OccurrenceFacts.Kind>? {
            guard let kinds else { return nil }
            var set = Set<OccurrenceFacts.Kind>()
            for name in kinds.split(separator: ",") {
                let name = name.trimmingCharacters(in: .whitespaces)
                guard let kind = OccurrenceFacts.Kind(rawValue: name) else {
                    throw ValidationError("--kinds: '\(name)' is not one of meeting, flight, event.")
                }
                set.insert(kind)
            }
            return set
        }

        func run() async throws {
            let loaded = try settings.loadOrExit(calendars: calendars, useDefaultFile: true)
            if openPage { return try Self.openPage(loaded) }
            if !follow, at == nil, !noDaemon, let line = await askDaemon(loaded) {
                StandardStreams.Output().write(Array((line + "\n").utf8))
                return
            }
            try CommandSupport.requireReferenceData()
            // A calendar on a server asked within its `every:` (by the daemon or a `next` before) is read from its copy.
            let configuration = await CommandSupport.fetchingFeeds(loaded, freshAt: Date())
            let zone = try CommandSupport.zone(configuration.timeZone)
            var options = NextUp.Options(
                configuration, kinds: try kindSet(),
                calendars: calendarNames.map {
                    $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                }, horizon: within.seconds ?? 86_400)
            let style = NextUpFormat.Style(maxWidth: maxWidth, none: none, pango: markup == .pango)

            guard follow else {
                let now = try at.map { try CommandSupport.instant($0, zone: zone) } ?? CommandSupport.now
                var expansion = ExpansionOptions(
                    window: InstantWindow(start: now, end: now.adding(seconds: options.horizon)), defaultZone: zone,
                    includeTodos: configuration.planner.includeTodos)
                expansion.lookBehind = options.lookBehind
                let scan = CalendarScan(paths: configuration.calendars, options: expansion).run()
                CommandSupport.report(scan.problems)
                if scan.nothingReadable { throw ExitCode.dataError }
                options.dismissed = try await Self.dismissed(in: configuration.statePath, at: now)
                let classifier = await CommandSupport.classifier(
                    configuration, occurrences: scan.occurrences, now: now, journal: configuration.statePath,
                    planning: { classifier in
                        _ = NextUp(
                            scan.occurrences, facts: classifier.facts(for:), options: options, now: now, zone: zone)
                    })
                let status = NextUp(
                    scan.occurrences, facts: classifier.facts(for:), options: options, now: now, zone: zone)
                StandardStreams.Output().write(Array((format.format.render(status, style: style) + "\n").utf8))
                return
            }

            let journal = try? Self.journal(configuration.statePath)
            let output = StandardStreams.Output()
            let follower = NextFollower(
                setup: .init(
                    configuration: configuration, options: options, format: format.format, style: style, zone: zone,
                    followsSystemZone: configuration.timeZone == nil, journal: journal ?? nil),
                clock: ContinuousClock(), wallClock: { CommandSupport.timestamp },
                systemZone: { TimeZoneDatabase.rules(named: TimeZoneDatabase.systemZoneName) },
                problems: { CommandSupport.report($0) },
                output: { line in
                    output.write(Array((line + "\n").utf8))
                    return true
                })
            // SIGTERM and SIGINT end it as they would any status-bar script: every line is written whole.
            guard !configuration.sources.isEmpty else { return try await follower.run() }
            // Calendars on servers polled on their `every:` meanwhile, into the folders the follower watches: a bar
            // without a daemon still sees a feed change. Their problems go to standard error, once per change.
            CommandLogHandler.bootstrap()
            let poller = FeedPoller(
                feeds: configuration.sources, clock: ContinuousClock(), logger: Logger(label: "calwatch.next"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await poller.run() }
                // The follower ends on a signal; the poller then goes with it.
                try await follower.run()
                group.cancelAll()
            }
        }

        /// The line as the daemon of `configuration`'s journal works it out (`GET /v1/next` on its local server),
        /// when one runs with the same configuration and holds what this `next` would read; `nil` otherwise.
        func askDaemon(_ configuration: Configuration) async -> String? {
            var query = [
                "format=\(format.rawValue)", "config=" + LocalServerClient.query(configuration.readFrom),
                "horizon=\(within.seconds ?? 86_400)",
            ]
            if let kinds { query.append("kinds=" + LocalServerClient.query(kinds.filter { $0 != " " })) }
            if let calendarNames {
                let names = calendarNames.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                query.append("calendars=" + LocalServerClient.query(names.joined(separator: ",")))
            }
            if let maxWidth { query.append("maxWidth=\(maxWidth)") }
            if let none { query.append("none=" + LocalServerClient.query(none)) }
            if markup == .pango { query.append("pango=1") }
            guard
                let answer = await LocalServerClient.get(
                    "/v1/next?" + query.joined(separator: "&"), journal: configuration.statePath),
                answer.status == 200, answer.body.hasSuffix("\n")
            else { return nil }
            return String(answer.body.dropLast())
        }

        /// `--open-page`: the page's address with the token, printed, and opened by `xdg-open` where a desktop runs.
        static func openPage(_ configuration: Configuration) throws {
            guard configuration.serve.enabled, let listen = configuration.serve.listen else {
                StandardStreams.error(
                    "calwatch: the page needs the local server on TCP: add serve: { listen: 127.0.0.1:8787 } to "
                        + "config.yml and restart calwatch watch\n")
                throw ExitCode.usageError
            }
            let tokenPath = ServeSettings.tokenPath(journal: configuration.statePath)
            guard let data = FileManager.default.contents(atPath: tokenPath), data.count < 1024 else {
                StandardStreams.error(
                    "calwatch: no token at \(tokenPath): calwatch watch makes it at its first start; start it first\n")
                throw ExitCode.noInput
            }
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            // Every interface is reached on this machine at loopback.
            let host = listen.host == "0.0.0.0" ? "127.0.0.1" : listen.host
            let address =
                (configuration.serve.tls == nil ? "http" : "https") + "://\(host):\(listen.port)/?token=\(token)"
            StandardStreams.Output().write(Array((address + "\n").utf8))
            let environment = ProcessInfo.processInfo.environment
            guard ["DISPLAY", "WAYLAND_DISPLAY"].contains(where: { !(environment[$0] ?? "").isEmpty }) else { return }
            let opener = Process()
            opener.executableURL = URL(fileURLWithPath: "/usr/bin/xdg-open")
            opener.arguments = [address]
            opener.standardOutput = FileHandle.nullDevice
            opener.standardError = FileHandle.nullDevice
            try? opener.run()
        }

        /// The daemon's journal, when there is one (`next` never makes one).
        static func journal(_ path: String) throws -> JournalStore? {
            FileManager.default.fileExists(atPath: path) ? try JournalStore(path: path) : nil
        }

        /// What the daemon's journal says was dismissed (`calwatch dismiss`): not shown.
        static func dismissed(in path: String, at now: Instant) async throws -> Set<OccurrenceKey> {
            try await journal(path)?.dismissed(at: now) ?? []
        }
    }
}
