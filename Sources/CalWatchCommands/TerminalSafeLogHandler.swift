import CalWatchCore
import Logging

/// The daemon's log with calendar text made safe (`TerminalText`): a summary or a parser message quoted in a log
/// line shows its escape sequences on a terminal or in `journalctl` instead of running them.
struct TerminalSafeLogHandler: LogHandler {
    var inner: StreamLogHandler

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(TerminalText.safe(event.message.description, keepingLines: false))"
        event.metadata = event.metadata?.mapValues { .string(TerminalText.safe($0.description, keepingLines: false)) }
        inner.log(event: event)
    }
}
