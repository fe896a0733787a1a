import ArgumentParser
import CalWatchCore
import CalWatchDesktop
import CalWatchPostgres
import CalWatchRemote
import CalWatchRuntime
import Foundation
import Logging

/// What `scan` and `replay` share: the zone, the time arguments, the clock and problem reports.
enum CommandSupport {
    /// Refuses (exit 72) when calwatch's data files are missing or damaged: every flight would be a plain event,
    /// and its reminders at a plain event's times, with nothing to say why. `watch` logs instead and goes on.
    static func requireReferenceData() throws {
        let problems = ReferenceData.problems
        guard !problems.isEmpty else { return }
        for problem in problems { StandardStreams.error("calwatch: error: \(problem)\n") }
        StandardStreams.error(
            "calwatch: not classifying without them: flights would be taken for plain events; `calwatch check` "
                + "says the same\n")
        throw ExitCode.dataFilesMissing
    }

    /// The real clock, to the second.
    static var now: Instant { timestamp.instant }

    /// The real clock to the millisecond: when an event is emitted.
    static var timestamp: Timestamp { .now }

    /// `--tz`, or the system zone; IANA or Windows names.
    static func zone(_ name: String?) throws -> ZoneRules {
        let zoneName = name ?? TimeZoneDatabase.systemZoneName
        guard
            let zone = TimeZoneDatabase.rules(named: zoneName)
                ?? WindowsZones.ianaName(for: zoneName).flatMap(TimeZoneDatabase.rules)
        else {
            throw ValidationError("--tz '\(zoneName)' is not a known zone; use an IANA name such as Europe/Berlin.")
        }
        return zone
    }

    /// A time argument, with the option's name in the error.
    static func instant(_ text: String, zone: ZoneRules) throws -> Instant {
        do {
            return try TimeArgument.parse(text, zone: zone, now: now)
        } catch let invalid as TimeArgument.Invalid {
            throw ValidationError(invalid.description)
        }
    }

    /// `[from, to)`, checked.
    static func window(from: Instant, to: Instant) throws -> InstantWindow {
        guard from < to else { throw ValidationError("--to (\(to)) must be after --from (\(from)).") }
        return InstantWindow(start: from, end: to)
    }

    /// Something a command could not open, worded for the user.
    struct OpenFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Opens (or creates) the journal of emitted events; `throwaway` for one removed when the command ends.
    static func openJournal(_ path: String, throwaway: Bool = false) throws(OpenFailure) -> JournalStore {
        do {
            return try JournalStore(path: path, throwaway: throwaway)
        } catch {
            throw OpenFailure(description: "cannot open the journal \(path): \(error)")
        }
    }

    /// The journal's one-writer lock for `watch` and `replay`; a journal in use is said on standard error with who
    /// holds it, and exits 75 (try again later), as systemd's `RestartPreventExitStatus` can be told.
    static func lockJournalOrExit(_ path: String) throws -> JournalLock {
        do {
            return try JournalLock(journal: path)
        } catch {
            StandardStreams.error("calwatch: \(error)\n")
            throw ExitCode.journalBusy
        }
    }

    /// `openJournal`, with its failure on standard error and exit status 74.
    static func openJournalOrExit(_ path: String, throwaway: Bool = false) throws -> JournalStore {
        do {
            return try openJournal(path, throwaway: throwaway)
        } catch {
            StandardStreams.error("calwatch: \(error)\n")
            throw ExitCode.ioError
        }
    }

    /// Opens the configured sinks. `logger` hears about a repaired JSON Lines file and failed hook runs; a sink
    /// that cannot be opened throws `SinkError`, worded for the user. Sinks keep files of their own beside the
    /// journal at `state`.
    static func openSinks(_ settings: [SinkSettings], state: String, logger: Logger) throws(SinkError)
        -> [any EventSink]
    {
        let environment = SinkEnvironment(
            now: { now }, logger: logger, journal: state, release: CalwatchVersion.release)
        return try settings.map { (sink) throws(SinkError) in try sink.open(in: environment) }
    }

    /// `openSinks` for a command that ends on failure: problems on standard error, exit status 74.
    static func openSinksOrExit(_ settings: [SinkSettings], state: String, logger: Logger) throws -> [any EventSink] {
        do {
            return try openSinks(settings, state: state, logger: logger)
        } catch {
            StandardStreams.error("calwatch: \(error)\n")
            throw ExitCode.ioError
        }
    }

    /// The boarding passes of `passes:`; the files left out said on standard error.
    static func passes(of configuration: Configuration) async -> BoardingPasses {
        let passes = await BoardingPasses.read(folders: configuration.passes).withoutForgedSignatures()
        for problem in passes.problems { StandardStreams.error("calwatch: passes: \(problem)\n") }
        return passes
    }

    /// The classifier of a one-shot command, with where the day's ways start noted from `occurrences`. When
    /// `travel.geocoder` names a geocoder, the addresses `planning` needs are asked first (at most
    /// `addresses`, one a second, kept on disk for the next run); when `travel.routing` names an engine, then the
    /// ways (at most `requestsPerHour`). What either did not answer is said on standard error. `journal` names the
    /// journal whose ways' history (`RouteHistoryFile`) estimates a way the engine does not answer; `keepsHistory`
    /// adds this run's answers to it (a replay continuing its journal).
    static func classifier(
        _ configuration: Configuration, occurrences: [Occurrence], now: Instant, addresses: Int = 5,
        journal: String? = nil, keepsHistory: Bool = false, planning: (Classifier) -> Void = { _ in }
    ) async -> Classifier {
        let history = journal.map { RouteHistoryFile(journal: $0) }
        let routes = configuration.travel.routing.map { _ in history?.load() ?? RouteCache() }
        let geocodes = configuration.travel.geocoder.map(Geocoder.loadCache)
        let weather = configuration.travel.weather.map { _ in WeatherCache() }
        // What the flight-status service last said, as the daemon of that journal keeps it: a one-shot command
        // spends none of the month's requests.
        let statuses = configuration.flights.status.map { _ in
            FlightStatusFile.load(journal: journal ?? configuration.statePath)
        }
        let passes = await passes(of: configuration)
        let classifier = Classifier(
            configuration, routes: routes, geocodes: geocodes, weather: weather, passes: passes, statuses: statuses)
        if let geocoder = configuration.travel.geocoder, let geocodes {
            planning(classifier)
            if let failure = await Geocoder.answerWanted(in: geocodes, geocoder: geocoder, budget: addresses) {
                StandardStreams.error(
                    "calwatch: the geocoder at \(geocoder.shownURL) gave no answer: \(failure); "
                        + "those addresses have no place this time\n")
            }
        }
        classifier.noteStops(of: occurrences)
        guard let routing = configuration.travel.routing, let routes else { return classifier }
        planning(classifier)
        let asked = await RoutingClient.answerWanted(
            in: routes, routing: routing, budget: routing.requestsPerHour, now: now)
        if let failure = asked.failure {
            StandardStreams.error(
                "calwatch: the routing engine at \(routing.shownURL) gave no way: \(failure); "
                    + "those without one have an estimated time to leave\n")
        }
        if asked.unasked > 0 {
            StandardStreams.error(
                "calwatch: \(asked.unasked) ways were not asked (travel.routing.requestsPerHour is "
                    + "\(routing.requestsPerHour)); their time to leave is estimated\n")
        }
        // The weather of the ways now placed and timed (a flight's way to the airport needs the engine's answer
        // first), a day per place and request.
        if let settings = configuration.travel.weather, let weather {
            planning(classifier)
            if let failure = await WeatherClient.answerWanted(
                in: weather, weather: settings, budget: settings.requestsPerHour, now: now)
            {
                StandardStreams.error(
                    "calwatch: the weather forecast at \(settings.shownURL) gave no answer: \(failure); "
                        + "those ways go without weather\n")
            }
        }
        if keepsHistory, let history {
            do {
                try await history.save(routes)
            } catch {
                StandardStreams.error(
                    "calwatch: cannot keep the routing engine's answers in \(history.path): \(error)\n")
            }
        }
        return classifier
    }

    static func report(_ problems: [CalendarProblem]) {
        for problem in CalendarProblem.shown(problems) { StandardStreams.error("\(problem)\n") }
    }

    /// The configuration with its feeds fetched once into the cache and read from there like folders; a feed that
    /// fails is read from the copy kept, and each failure is a warning on standard error. With `freshAt`, one asked
    /// within its `every:` is read from its copy without asking (`FeedSync.fetch`).
    static func fetchingFeeds(_ configuration: Configuration, freshAt: Date? = nil) async -> Configuration {
        await fetchingFeedsNamed(configuration, freshAt: freshAt).configuration
    }

    /// `fetchingFeeds`, with each feed's folder named as the user knows it (`Team (https://…)`), its problems
    /// worded as coming from `source` (the configuration file, for `check`) at `severity`, and the feeds that
    /// failed.
    static func fetchingFeedsNamed(
        _ configuration: Configuration, source: String = "calwatch", severity: String = "warning",
        freshAt: Date? = nil
    ) async -> (configuration: Configuration, shown: [String: String], failed: [String]) {
        guard !configuration.sources.isEmpty else { return (configuration, [:], []) }
        let fetched = await FeedSync.fetch(configuration.sources, freshAt: freshAt)
        for problem in fetched.problems { StandardStreams.error("\(source): \(severity): \(problem)\n") }
        var configuration = configuration.withAccountAddresses()
        configuration.calendars += fetched.folders
        return (configuration, fetched.shown, fetched.failed.map(\.shown))
    }
}
