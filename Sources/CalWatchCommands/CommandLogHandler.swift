import Logging

/// How a finite command (`replay`, `check`) reports what the runtime logs: `calwatch: <message>` on standard
/// error, as its other problems read; the structured metadata is for the daemon's log.
struct CommandLogHandler: LogHandler {
    var logLevel: Logger.Level = .notice
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        StandardStreams.error("calwatch: \(event.message)\n")
    }

    /// Routes every logger of the process here; once, before anything logs.
    static func bootstrap() {
        LoggingSystem.bootstrap { _ in CommandLogHandler() }
    }
}
