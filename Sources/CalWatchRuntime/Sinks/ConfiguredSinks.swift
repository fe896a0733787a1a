public import CalWatchCore
public import Logging

extension SinkSettings {
    /// Opens the sink these settings describe. A hook times its runs and retries on `clock`, reads expiry off
    /// `now` (the wall clock) and logs its failed runs to `logger`. A PostgreSQL sink is made by `postgres`
    /// (`PostgresSink.init` from the CalWatchPostgres module), so that only a program that offers one links libpq;
    /// a desktop notification sink by `notify` (CalWatchDesktop, libsystemd), which throws when there is none.
    public func open(
        clock: any Clock<Duration> = ContinuousClock(), now: @escaping @Sendable () -> Instant, logger: Logger,
        postgres: (PostgresSettings, _ name: String) throws -> any EventSink,
        notify: (NotifySettings, _ name: String) throws -> any EventSink = { _, name in
            throw SinkError(sink: name, reason: "this program has no desktop notifications")
        },
        webhook: (WebhookSettings, _ name: String) throws -> any EventSink = { _, name in
            throw SinkError(sink: name, reason: "this program sends no webhooks")
        },
        mqtt: (MQTTSettings, _ name: String) throws -> any EventSink = { _, name in
            throw SinkError(sink: name, reason: "this program speaks no MQTT")
        }
    ) throws -> any EventSink {
        switch output {
        case .jsonLines(path: nil): JSONLinesSink.standardOutput(name: name)
        case .jsonLines(path: let path?): try JSONLinesSink.file(path: path, name: name)
        case .sqlite(let path, let keep): try SQLiteSink(path: path, name: name, keep: keep)
        case .hook(let hook): HookSink(settings: hook, name: name, clock: clock, now: now, logger: logger)
        case .postgres(let settings): try postgres(settings, name)
        case .notify(let settings): try notify(settings, name)
        case .webhook(let settings): try webhook(settings, name)
        case .mqtt(let settings): try mqtt(settings, name)
        }
    }
}
