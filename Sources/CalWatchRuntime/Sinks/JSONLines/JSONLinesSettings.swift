public import CalWatchCore
import Logging

/// `type: jsonl`: one CloudEvents JSON object per line, to a file or (`path: "-"`, or none) standard output.
public struct JSONLinesSettings: SinkDriver {
    public static let type = "jsonl"
    public static let keys = ["path"]
    /// The file; `nil`, standard output.
    public var path: String?

    public init(path: String?) {
        self.path = path
    }

    public init?(_ entry: ConfigurationSection) {
        if let value = entry["path"], let text = value.string(), text != "-" {
            guard let path = value.filePath() else { return nil }
            self.path = path
        }
    }

    public var defaultName: String { "jsonl:" + (path ?? "-") }

    /// Standard output, the sink of a configuration that names none.
    public static let standardOutput = SinkSettings(name: "jsonl:-", kind: JSONLinesSettings(path: nil))

    public func open(named name: String, in environment: SinkEnvironment) throws -> any EventSink {
        guard let path else { return JSONLinesSink.standardOutput(name: name) }
        let file = try JSONLinesSink.file(path: path, name: name)
        if file.repairedBytes > 0 {
            environment.logger.warning(
                """
                \(name): cut off a partial last line (\(file.repairedBytes) bytes) left by an interrupted write; its \
                events are written again
                """,
                metadata: ["sink.name": "\(name)", "sink.repaired_bytes": "\(file.repairedBytes)"])
        }
        return file
    }

    public func check(named name: String, in environment: SinkEnvironment) async -> [SinkFinding] {
        path.flatMap(FileAccess.writeProblem).map { [.error($0)] } ?? []
    }

    public func delivery(of row: JournalStore.Journaled, sink name: String, in lookup: DeliveryLookup) async throws
        -> DecisionTrace.Delivery
    {
        guard let path else {
            return DecisionTrace.Delivery(state: "delivered", sink: name, detail: "written to standard output")
        }
        return lookup.records.jsonLines(path).contains(row.event.id.description)
            ? DecisionTrace.Delivery(state: "delivered", sink: name, detail: "written to \(path)")
            : DecisionTrace.Delivery(
                state: "missing", sink: name,
                detail: "the sink took it, but \(path) has no line with its id (cut, replaced or edited since)")
    }
}

extension SinkKinds {
    /// The sinks of this module: JSON Lines (standard output without `sinks:`), SQLite and hooks.
    public static let runtime = SinkKinds(
        [JSONLinesSettings.self, SQLiteSettings.self, HookSettings.self], standard: [JSONLinesSettings.standardOutput])
}
