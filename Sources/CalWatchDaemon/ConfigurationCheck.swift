public import CalWatchCore
import CalWatchRemote
import CalWatchRuntime
import Foundation
import Logging

/// `calwatch check` without the command line: what it finds about a configuration, its sinks, its calendars and
/// the services it names, returned for the command to print. Nothing is sent but the one request each service is
/// asked to show it is there.
public struct ConfigurationCheck: Sendable {
    /// What goes to standard error, in the order found: each problem or warning a whole line, naming where it
    /// comes from.
    public var messages: [String]
    /// Problems of the configuration (the file, its sinks, the files it names): exit status 64.
    public var configurationErrors: Int
    /// Problems of the calendars, the data files and the services asked: exit status 65.
    public var calendarErrors: Int
    /// The report for standard output.
    public var report: String

    /// Checks `configuration`, read from `source` (its file, or "defaults") where `configurationErrors` problems
    /// were found already, at `now` in `zone`. `unsure` lists the items whose flight decision was close; `release`
    /// is what sinks tell their receivers.
    public static func run(
        _ configuration: Configuration, source: String, configurationErrors: Int, zone: ZoneRules, now: Instant,
        unsure: Bool, release: String
    ) async -> ConfigurationCheck {
        var configuration = configuration
        var configurationErrors = configurationErrors
        var messages: [String] = []
        for (line, problem) in Self.fileProblems(configuration) {
            messages.append("\(source)\(line.map { ":\($0)" } ?? ""): error: \(problem)\n")
            configurationErrors += 1
        }
        // Each sink checks itself without sending anything: what it reached (a database's layout, a desktop's
        // notification server, a receiver, a broker) is listed; what keeps it from working is an error; what
        // it waits out (a receiver down now, whose events the journal keeps) a warning.
        var databases: [String] = []
        let environment = SinkEnvironment(
            now: { now }, logger: Logger(label: "calwatch.check"), journal: configuration.statePath, release: release)
        for sink in configuration.sinks {
            let at = source + (configuration.sinkLines[sink.name].map { ":\($0)" } ?? "")
            for finding in await sink.driver?.check(named: sink.name, in: environment) ?? [] {
                switch finding {
                case .found(let text): databases.append("  \(sink.name): \(text)")
                case .warning(let text): messages.append("\(at): warning: \(sink.name): \(text)\n")
                case .error(let text):
                    messages.append("\(at): error: \(sink.name): \(text)\n")
                    configurationErrors += 1
                }
            }
        }

        // Each feed and account fetched once into the cache, and read from there like a folder: one that cannot
        // be read now is an error (its copy kept, if any, is still checked).
        var (shown, failed): ([String: String], [String]) = ([:], [])
        if !configuration.sources.isEmpty {
            let fetched = await FeedSync.fetch(configuration.sources)
            for problem in fetched.problems { messages.append("\(source): error: \(problem)\n") }
            configuration = configuration.withAccountAddresses()
            configuration.calendars += fetched.folders
            (shown, failed) = (fetched.shown, fetched.failed.map(\.shown))
        }
        // A sign-in that ends within a day (Google's testing mode ends them after 7): said while it still works.
        for account in configuration.sources.compactMap({ $0.kind as? AccountSettings }) {
            if let record = try? AccountTokens.record(
                account: account.name, folder: account.tokens ?? AccountTokens.folder()),
                record.endsSoon(at: Date(timeIntervalSince1970: TimeInterval(now.secondsSinceEpoch))),
                let ends = record.refreshExpires
            {
                messages.append(
                    "\(source): warning: accounts: \(account.name): its sign-in ends \(ends.formatted(.iso8601)) "
                        + "(Google's testing mode); sign in again with `calwatch account add \(account.name)`, and "
                        + "publish the application for one that lasts (docs/accounts.md)\n")
            }
        }
        // A fleet's token key read once, as a watcher reads it, never shown: a watcher without it holds the
        // fleet's account calendars and reads none. Folders for `path` rows that are not there are named.
        if configuration.fleetAccess.tokenKey != nil {
            do throws(AccountFailure) {
                _ = try await configuration.fleetAccess.sealingKey()
            } catch {
                messages.append("\(source): error: fleet.tokenKey: \(error.reason)\n")
                configurationErrors += 1
            }
        }
        for root in configuration.fleetAccess.roots {
            var folder: ObjCBool = false
            if FileManager.default.fileExists(atPath: root, isDirectory: &folder), folder.boolValue { continue }
            messages.append(
                "\(source): warning: fleet.roots: \(root) is not a folder here; the fleet's rows under it are not "
                    + "read by this watcher\n")
        }
        // A week at least, for what `travelLines` says about times to leave.
        let horizonEnd = now.adding(seconds: configuration.planner.horizon)
        let window = InstantWindow(
            start: now.adding(seconds: -86_400), end: max(horizonEnd, now.adding(seconds: Self.travelWeek)))
        var calendarErrors = failed.count
        // The routing engine asked once, for a way of no length: any answer in its own shape (a way, or its
        // "no route") says it is there.
        if let routing = configuration.travel.routing, let problem = await RoutingClient.unreachable(routing) {
            messages.append("\(source): error: travel.routing: \(routing.shownURL): \(problem)\n")
            calendarErrors += 1
        }
        // The geocoder asked once where Berlin is: the one request a check sends it.
        if let geocoder = configuration.travel.geocoder, let problem = await Geocoder.unreachable(geocoder) {
            messages.append("\(source): error: travel.geocoder: \(geocoder.shownURL): \(problem)\n")
            calendarErrors += 1
        }

        // The forecast asked once for today in Berlin: the one request a check sends it.
        if let weather = configuration.travel.weather,
            let problem = await WeatherClient.unreachable(weather, now: now)
        {
            messages.append("\(source): error: travel.weather: \(weather.shownURL): \(problem)\n")
            calendarErrors += 1
        }

        var lines = failed.filter { !shown.values.contains($0) }.map { "  \($0): not read (the error above)" }
        let passes = await BoardingPasses.read(folders: configuration.passes).withoutForgedSignatures()
        let classifier = Classifier(configuration, passes: passes)
        var attendeesSeen = false
        var flightsSeen = 0
        var flightsAhead: [Occurrence] = []
        var week: [Occurrence] = []
        for (index, path) in configuration.calendars.enumerated() {
            let result = CalendarScan(paths: [path], options: ExpansionOptions(window: window, defaultZone: zone))
                .run()
            // A folder of passes without wallet passes is no calendar missing.
            if path.hasSuffix(SourceDiscovery.walletPasses) && result.sourceCount == 0 { continue }
            messages += CalendarProblem.shown(result.problems).map { "\($0)\n" }
            let errors = result.problems.filter { $0.severity == .error }.count
            let warnings = result.problems.count - errors
            if result.nothingReadable { calendarErrors += max(1, errors) } else { calendarErrors += errors }
            classifier.noteStops(of: result.occurrences, origin: Int32(index))
            week += result.occurrences.filter { $0.start >= now && $0.start < now.adding(seconds: Self.travelWeek) }
            let occurrences = result.occurrences.filter { $0.start < horizonEnd }
            let kinds = occurrences.map { classifier.classification(of: $0).kind }
            if unsure { lines += Self.unsure(occurrences, classifier: classifier) }
            attendeesSeen = attendeesSeen || occurrences.contains { !$0.source.component.attendees.isEmpty }
            flightsSeen += kinds.filter { $0 == .flight }.count
            if !passes.isEmpty { flightsAhead += zip(occurrences, kinds).filter { $0.1 == .flight }.map(\.0) }
            lines.append(
                "  \(shown[path] ?? path): \(Self.count(result.sourceCount, "source")) read, "
                    + "\(Self.count(occurrences.count, "occurrence")) in the next "
                    + "\(DurationText.text(configuration.planner.horizon)) ("
                    + "\(Self.count(kinds.filter { $0 == .flight }.count, "flight")), "
                    + "\(Self.count(kinds.filter { $0 == .meeting }.count, "meeting"))), "
                    + "\(Self.count(errors, "error")), " + Self.count(warnings, "warning"))
        }
        // The data files classification uses, with their versions; a refused one is an error.
        let data = ReferenceData.loaded
        for problem in ReferenceData.problems {
            messages.append("calwatch: error: \(problem)\n")
            calendarErrors += 1
        }
        lines.append(
            "  data (\(data.folder ?? "not found")): "
                + data.files.map { file in
                    "\(file.name) \(file.version), \(file.rows) rows, sha256 \(file.checksum.prefix(12))… "
                        + (file.problem == nil ? "verified" : "REFUSED")
                }.joined(separator: "; "))
        if configuration.me.isEmpty && attendeesSeen {
            lines.append(
                "  note: `me` is not set, so your own RSVP cannot be read (declined meetings still get reminders) "
                    + "and attendees make a meeting only when there are two or more; set `me: [you@example.com]`")
        }
        if !configuration.places.isEmpty || configuration.travel.routing != nil {
            let (line, warning) = Self.travelLines(week, classifier: classifier, configuration: configuration)
            lines.append(line)
            if let warning { messages.append("\(source): warning: \(warning)\n") }
        }
        if !passes.isEmpty || !passes.problems.isEmpty {
            let legs = flightsAhead.compactMap { classifier.facts(for: $0).flight?.pass }
            lines.append(
                "  passes (\(configuration.passes.joined(separator: ", "))): "
                    + "\(Self.count(Set(passes.entries.map(\.file)).count, "boarding pass")), "
                    + "\(Self.count(passes.entries.count, "leg")); \(Self.count(legs.count, "flight")) of the calendars "
                    + "with a pass")
            messages += passes.problems.map { "\(source): warning: passes: \($0)\n" }
            // A pass is joined with a calendar's flight, never planned on its own: one that joins none is said.
            let joined = Set(legs)
            let windowDays = (window.end.secondsSinceEpoch - now.secondsSinceEpoch) / 86_400
            for entry in passes.entries where !joined.contains(entry.leg) {
                messages.append(
                    "\(source): warning: passes: \(entry.file): \(entry.leg.code) \(entry.leg.origin)–"
                        + "\(entry.leg.destination) on day \(entry.leg.dayOfYear) of the year joins no flight of the "
                        + "calendars from yesterday to \(windowDays) days ahead (a pass is only joined); add the flight to a calendar to be reminded of it\n"
                )
            }
        }
        // The status service's key read, and the month's count said; no request is spent on a check.
        if let status = configuration.flights.status {
            switch FlightStatusClient.key(status) {
            case .failure(let failure):
                messages.append("\(source): error: flights.status: \(failure.reason)\n")
                calendarErrors += 1
            case .success:
                let spent = FlightStatusFile.load(journal: configuration.statePath).spent(at: now)
                lines.append(
                    "  flights.status (\(status.provider.name) at \(status.shownURL)): \(spent) of \(status.budget) "
                        + "requests spent this month")
            }
        }
        lines.append(Self.serveLine(configuration))
        if configuration.serve.enabled, ServeSettings.socketPath(journal: configuration.statePath).utf8.count >= 108 {
            messages.append(
                "\(source): warning: serve: the socket beside the journal would be longer than a Unix socket's "
                    + "108 bytes, so the local server cannot listen there; give state: a shorter path\n")
        }
        if let day = configuration.planner.day {
            lines += Self.describe(
                day, rules: configuration.planner.rules, flights: flightsSeen, me: configuration.me)
        }
        var report = "calwatch check: configuration \(source): "
        report +=
            configurationErrors == 0 ? "OK" : "\(configurationErrors) error" + (configurationErrors == 1 ? "" : "s")
        report += "; sinks: " + configuration.sinks.map(\.name).joined(separator: ", ") + "\n"
        report += (databases + lines).joined(separator: "\n") + "\n"
        return ConfigurationCheck(
            messages: messages, configurationErrors: configurationErrors, calendarErrors: calendarErrors,
            report: report)
    }

    /// What the daemon's local server will bind, and where its token is.
    static func serveLine(_ configuration: Configuration) -> String {
        guard configuration.serve.enabled else { return "  serve: off (calwatch next reads the calendars itself)" }
        let journal = configuration.statePath
        var line = "  serve: \(ServeSettings.socketPath(journal: journal)) (a Unix socket, mode 0600)"
        if let listen = configuration.serve.listen {
            let reach =
                listen.host.hasPrefix("127.")
                ? "loopback" : listen.host == "0.0.0.0" ? "every interface" : "reached by other machines"
            let tls = configuration.serve.tls.map { ", TLS with \($0.certificate)" } ?? ""
            line +=
                " and \(configuration.serve.tls == nil ? "http" : "https")://\(listen) (\(reach)\(tls); every route "
                + "but /healthz asks for the token in \(ServeSettings.tokenPath(journal: journal)), made at the "
                + "first start)"
        }
        return line
    }

    /// The items among `occurrences` whose flight decision was close, once each: where, what it was taken
    /// for, and what tipped it.
    static func unsure(_ occurrences: [Occurrence], classifier: Classifier) -> [String] {
        var seen: Set<ObjectIdentifier> = []
        var lines: [String] = []
        for occurrence in occurrences where seen.insert(ObjectIdentifier(occurrence.source)).inserted {
            let result = classifier.classification(of: occurrence)
            // One the user settled is not left to the judgement.
            guard let close = result.evidence.last(where: { $0.rule == Evidence.closeDecision }),
                !result.evidence.contains(where: { $0.rule.hasPrefix(KindRule.settledPrefix) })
            else { continue }
            lines.append(
                TerminalText.safe(
                    "  unsure: \(occurrence.heading): taken for \(result.kind == .flight ? "a flight" : "no flight"), "
                        + close.text, keepingLines: false))
        }
        if !lines.isEmpty {
            lines.append(
                "  settle one with X-CALWATCH-KIND:flight|meeting|event in the item, or a `classify:` entry in "
                    + "config.yml (summary, calendars or uids, and kind)")
        }
        return lines
    }

    /// How far ahead `check` looks for times to leave.
    static let travelWeek: Int64 = 7 * 86_400

    /// How many of the week's occurrences get a time to leave and why the others do not; a warning when places
    /// or a routing engine are configured and none does, since then nothing is ever counted back from leaving.
    static func travelLines(
        _ week: [Occurrence], classifier: Classifier, configuration: Configuration
    ) -> (line: String, warning: String?) {
        let timed = week.filter { !$0.allDay && $0.status != .cancelled }
        var missing: [TravelTimes.Missing: Int] = [:]
        for occurrence in timed {
            if let reason = classifier.missingLeave(for: occurrence) { missing[reason, default: 0] += 1 }
        }
        let getting = timed.count - missing.values.reduce(0, +)
        let reasons = TravelTimes.Missing.allCases.compactMap { reason -> String? in
            guard let count = missing[reason] else { return nil }
            func counted(_ singular: String, _ plural: String) -> String {
                "\(count) " + (count == 1 ? singular : plural)
            }
            switch reason {
            case .noTravelTime:
                return counted("has", "have")
                    + " no travel time of its own, of its place or of its rule, and there is no routing engine "
                    + "(travel.routing)"
            case .noPoint:
                return counted("is", "are")
                    + " at no known point (no GEO, no place with `at` matching the LOCATION"
                    + (configuration.travel.geocoder == nil ? ", no travel.geocoder" : "") + ")"
            case .noStart:
                return counted("has", "have")
                    + " nowhere for the way to start (no event just before, no place with `at` whose hours hold "
                    + "the time): give your home `hours: \"00:00-24:00\"`, or, with no hours anywhere, keep one "
                    + "place or name one Home"
            }
        }
        let line =
            "  travel: \(getting) of \(count(timed.count, "timed occurrence")) in the next 7 days get a time to "
            + "leave" + (reasons.isEmpty ? "" : "; " + reasons.joined(separator: "; "))
        guard getting == 0, !timed.isEmpty else { return (line, nil) }
        return (
            line,
            (configuration.places.isEmpty ? "travel.routing" : "places")
                + ": no occurrence in the next 7 days gets a time to leave, so reminders count from the start: "
                + reasons.joined(separator: "; ")
        )
    }

    /// "1 error", "2 errors".
    public static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)" + (number == 1 ? "" : "s") }

    /// What would keep the journal or the metrics file from being written, with the line of config.yml it
    /// comes from, where known.
    static func fileProblems(_ configuration: Configuration) -> [(line: Int?, problem: String)] {
        var problems: [(line: Int?, problem: String)] = []
        if let problem = FileAccess.writeProblem(configuration.statePath) {
            problems.append((nil, "state: " + problem))
        }
        if let textfile = configuration.metrics.textfile, let problem = FileAccess.writeProblem(textfile) {
            problems.append((nil, "metrics.textfile: " + problem))
        }
        return problems
    }

    /// What `day:` will do, in words, and what it cannot do without `me`.
    static func describe(_ day: DaySettings, rules: [ReminderRule], flights: Int, me: [String]) -> [String] {
        var parts: [String] = []
        if let conflicts = day.conflicts {
            let answers = DaySettings.Answer.allCases.filter(conflicts.include.contains).map(\.rawValue)
            parts.append(
                "conflicts of your own and \(answers.joined(separator: ", ")) ones over "
                    + "\(DurationText.text(conflicts.minOverlap)), \(DurationText.text(conflicts.ahead)) ahead")
        }
        if day.overruns { parts.append("overruns") }
        if day.endingSoon > 0 { parts.append("ending soon \(DurationText.text(day.endingSoon)) before the end") }
        if !day.pendingInvitations.isEmpty {
            parts.append(
                "unanswered invitations " + day.pendingInvitations.map(DurationText.text).joined(separator: " and ")
                    + " before")
        }
        let ownAgendas = rules.filter { $0.agendaAt != nil }.count
        if let at = day.agendaAt {
            parts.append(String(format: "the agenda at %02d:%02d", at / 60, at % 60))
        }
        if ownAgendas > 0 { parts.append("\(count(ownAgendas, "rule")) with an agenda of its own") }
        if day.travelZone { parts.append("the zone of your trips, from \(count(flights, "flight")) found") }
        var lines = ["  day: " + (parts.isEmpty ? "nothing" : parts.joined(separator: "; "))]
        if me.isEmpty && (day.conflicts != nil || !day.pendingInvitations.isEmpty) {
            lines.append(
                "  note: `me` is not set, so no invitation is known to be yours: none is unanswered, and every timed "
                    + "item counts as your own in conflicts; set `me: [you@example.com]`")
        }
        return lines
    }
}
