import CalWatchCore
import CalWatchDaemon

extension ConfigurationLoader {
    /// The loader as the program calls it: with every kind of sink and of calendar on a server calwatch offers.
    static func parse(
        _ text: String, file: String, directory: String, environment: [String: String]? = nil
    ) throws(ConfigurationError) -> Configuration {
        try parse(
            text, file: file, directory: directory, environment: environment, sinks: .calwatch, sources: .calwatch)
    }

    static func load(path: String, environment: [String: String]? = nil) throws(ConfigurationError) -> Configuration {
        try load(path: path, environment: environment, sinks: .calwatch, sources: .calwatch)
    }
}
