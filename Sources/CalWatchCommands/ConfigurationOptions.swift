import ArgumentParser
import CalWatchCore
import CalWatchDaemon
import CalWatchRuntime
import Foundation

/// `--config`, and the configuration it names merged with the command line: paths given replace the configured
/// calendars, and `--tz` replaces the configured zone.
struct ConfigurationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The configuration file (see config.yml for every key).", valueName: "file"))
    var config: String?

    /// `$XDG_CONFIG_HOME/calwatch/config.yml`, or `~/.config/calwatch/config.yml`.
    static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ConfigurationLoader.home(environment: environment) + "/.config"
        return base + "/calwatch/config.yml"
    }

    /// The configuration file to read: `--config`, else the default file when `useDefaultFile` and it exists.
    func file(useDefaultFile: Bool) -> String? {
        if let config { return config }
        return useDefaultFile && FileManager.default.fileExists(atPath: Self.defaultPath) ? Self.defaultPath : nil
    }

    /// Reads the configuration (or takes the defaults) and applies the command line to it.
    func load(calendars: CalendarOptions?, useDefaultFile: Bool) throws(ConfigurationError) -> Configuration {
        var configuration: Configuration
        if let file = file(useDefaultFile: useDefaultFile) {
            configuration = try ConfigurationLoader.load(path: file, sinks: .calwatch, sources: .calwatch)
        } else {
            configuration = Configuration(home: ConfigurationLoader.home())
            configuration.sinks = SinkKinds.calwatch.standard
            configuration.sourceKinds = .calwatch
        }
        // Calendars named on the command line replace the file's, its feeds too; an address there is a feed.
        if let calendars, !calendars.paths.isEmpty {
            configuration.calendars = calendars.files
            configuration.sources = calendars.feeds
        } else {
            // The wallet passes of `passes:` are flights of their own where the calendars lack them.
            configuration.calendars += configuration.passRoots
        }
        if let tz = calendars?.tz { configuration.timeZone = tz }
        configuration.settleReadFrom()
        return configuration
    }

    /// `load`, with its problems on standard error and exit status 64.
    func loadOrExit(calendars: CalendarOptions?, useDefaultFile: Bool) throws -> Configuration {
        do {
            return try load(calendars: calendars, useDefaultFile: useDefaultFile)
        } catch {
            StandardStreams.error("\(error)\n")
            throw ExitCode.usageError
        }
    }
}
