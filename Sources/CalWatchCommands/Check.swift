import ArgumentParser
import CalWatchCore
import CalWatchDaemon
import CalWatchRuntime
import Foundation

extension CalwatchCommand {
    /// `calwatch check`: the configuration and every calendar, with all problems reported at once.
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the configuration, its sinks and every calendar, and report all problems at once.",
            discussion: """
                Reads the configuration (--config, else $XDG_CONFIG_HOME/calwatch/config.yml when it exists, else \
                the defaults), checks that each sink can write where it is told to and that each hook program \
                exists and is executable, names the desktop notification server of a notify sink (a warning when \
                there is no session bus), reads each webhook's secret once (never printing it) and reaches its \
                receiver with an OPTIONS request, connects to each MQTT broker (publishing nothing), connects to each \
                PostgreSQL database (its version, and whether \
                calwatch's tables there are current), fetches each ICS feed, CalDAV account and account of \
                `accounts:` once (a server that cannot be read, or a sign-in that lapsed, is an error with its cause; \
                the copy kept from before, if any, is still checked; a sign-in that ends within a day is a warning), asks the routing \
                engine of `travel.routing`, the geocoder of `travel.geocoder` and the forecast of `travel.weather` \
                once whether they answer, reads the fleet's token key (`fleet: tokenKey:`) as a watcher does (never \
                printing it) and names the folders of `fleet: roots:` that are not there, then \
                reads every calendar over the \
                planning horizon, and says which airport and airline data it uses (each file checked against the \
                SHA-256 its manifest records). With places or a routing engine it counts the next 7 days' \
                occurrences that get a time to leave and says why the others do not (a warning when none does). \
                Problems are printed as FILE:LINE: error|warning: KEY: REASON, each with what to change; nothing \
                is written but the servers' copies in calwatch's cache.

                Exit status: 0 all good (warnings allowed); 64 the configuration has errors (the fleet's token key \
                among them); 65 a calendar has \
                errors, none could be read, a feed, CalDAV account or account, the routing engine, the geocoder or the \
                forecast could not be read, or a data file was refused.

                Examples:
                  calwatch check --config config.yml
                  calwatch check ~/.calendars --tz Europe/Berlin
                  calwatch check --unsure       # and the items whose flight decision was close
                """
        )

        @OptionGroup var calendars: CalendarOptions
        @OptionGroup var settings: ConfigurationOptions

        @Flag(
            help: ArgumentHelp(
                "Also list the items whose flight decision was a close one, with what tipped it.",
                discussion: "Settle one with X-CALWATCH-KIND:flight|meeting|event in the item, or an entry of "
                    + "`classify:` in config.yml (by summary, calendars or uids)."))
        var unsure = false

        func run() async throws {
            var configurationErrors = 0
            let file = settings.file(useDefaultFile: true)
            var configuration: Configuration
            do {
                configuration = try settings.load(calendars: calendars, useDefaultFile: true)
            } catch {
                StandardStreams.error("\(error)\n")
                configurationErrors += error.problems.count
                guard !calendars.paths.isEmpty else {
                    StandardStreams.error(
                        "calwatch check: \(ConfigurationCheck.count(error.problems.count, "configuration problem")); "
                            + "calendars not checked (name them on the command line to check them anyway)\n")
                    throw ExitCode.usageError
                }
                var fallback = Configuration(home: ConfigurationLoader.home())
                fallback.calendars = calendars.paths
                fallback.timeZone = calendars.tz
                fallback.sinks = SinkKinds.calwatch.standard
                configuration = fallback
            }
            let source = file ?? "defaults"
            let zone = try CommandSupport.zone(configuration.timeZone)
            let check = await ConfigurationCheck.run(
                configuration, source: source, configurationErrors: configurationErrors, zone: zone,
                now: CommandSupport.now, unsure: unsure, release: CalwatchVersion.release)
            for message in check.messages { StandardStreams.error(message) }
            StandardStreams.report(check.report)
            if check.configurationErrors > 0 { throw ExitCode.usageError }
            if check.calendarErrors > 0 { throw ExitCode.dataError }
        }

    }
}
