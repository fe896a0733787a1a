import CalWatchCore
import CalWatchRuntime
import Foundation

/// `type: file-per-event`: each event as a JSON file of its own, named by its id, in `folder:`.
struct FilePerEventSettings: SinkDriver {
    static let type = "file-per-event"
    static let keys = ["folder"]
    var folder: String

    /// Reads the entry; a problem is noted on it, with its line, and the sink is left out.
    init?(_ entry: ConfigurationSection) {
        guard let value = entry["folder"] else {
            entry.note("has no `folder:`; write where the files go, such as ~/calwatch-events")
            return nil
        }
        guard let folder = value.filePath() else { return nil }
        self.folder = folder
    }

    var defaultName: String { "file-per-event:" + folder }

    func open(named name: String, in environment: SinkEnvironment) throws -> any EventSink {
        try FilePerEventSink(name: name, folder: folder)
    }

    /// What `calwatch check` says: the folder must be writable.
    func check(named name: String, in environment: SinkEnvironment) async -> [SinkFinding] {
        FileAccess.writeProblem(folder + "/.check").map { [.error($0)] } ?? []
    }
}

/// Writes on a thread of its own (`BlockingExecutor`): file writes never block Swift's cooperative pool.
actor FilePerEventSink: EventSink {
    nonisolated let name: String
    private let folder: URL
    private let executor = BlockingExecutor(name: "calwatch-file-per-event")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(name: String, folder: String) throws {
        self.name = name
        self.folder = URL(fileURLWithPath: folder)
        try FileManager.default.createDirectory(at: self.folder, withIntermediateDirectories: true)
    }

    /// Each event of the batch, in order; a failure throws, and the bus gives the batch again later.
    func deliver(_ batch: [JournalStore.Entry]) throws {
        for entry in batch {
            let json = CloudEventJSON.render(
                entry.event, occurrence: entry.occurrence, facts: entry.facts, sequence: entry.sequence,
                recordedTime: entry.recorded)
            do {
                let file = folder.appendingPathComponent(entry.event.id.description + ".json")
                try Data(json.utf8).write(to: file, options: .atomic)
            } catch {
                throw SinkError(sink: name, reason: "cannot write into \(folder.path): \(error.localizedDescription)")
            }
        }
    }
}
