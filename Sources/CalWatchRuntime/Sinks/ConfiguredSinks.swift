public import CalWatchCore
extension SinkSettings {
    /// Opens the sink these settings describe. `now` is the real clock and `log` hears about failed hook runs.
    public func open(
        now: @escaping @Sendable () -> Instant, log: @escaping @Sendable (String) -> Void
    ) throws -> any EventSink {
        switch output {
        case .jsonLines(path: nil): JSONLinesSink.standardOutput(name: name)
        case .jsonLines(path: let path?): try JSONLinesSink.file(path: path, name: name)
        case .sqlite(path: let path, keep: let keep): try SQLiteSink(path: path, name: name, keep: keep)
        case .hook(let hook): HookSink(settings: hook, name: name, now: now, log: log)
        }
    }
}
