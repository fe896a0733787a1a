public import CalWatchCore
import CalWatchRuntime
import Foundation

/// The routing engine's earlier answers (`RouteCache`'s history, the estimate when the engine has none) in a file
/// beside the journal, `<journal>.routes.json`, mode 0600 (the ways are the user's comings and goings). Beside the
/// journal rather than in the cache folder, so a daemon keeps its own and a replay of its own journal is the same
/// however often it runs. Written on a thread of its own.
public actor RouteHistoryFile {
    private let executor = BlockingExecutor(name: "calwatch-routes")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    public nonisolated let path: String
    /// The count of answers the cache had recorded when last written.
    private var written = 0

    /// The most a history file may be: 2,000 ways of a few answers each are far less.
    static let largest = 8 << 20

    public init(journal: String) {
        path = journal + ".routes.json"
    }

    /// A route cache holding the history the file keeps (none when it is missing, too large or unreadable).
    public nonisolated func load() -> RouteCache {
        guard let handle = FileHandle(forReadingAtPath: path),
            let data = try? handle.read(upToCount: Self.largest + 1), data.count <= Self.largest
        else { return RouteCache() }
        try? handle.close()
        return RouteCache(history: data)
    }

    /// Writes the cache's history when it recorded answers since the last write.
    public func save(_ cache: RouteCache) throws {
        let (data, recorded) = cache.encodedHistory()
        guard recorded != written else { return }
        try AtomicFile.replace(path, with: data, mode: 0o600)
        written = recorded
    }
}
