import CalWatchCore

/// The boarding passes of `passes:`, read on a thread of its own: a folder of wallet passes is up to 1,000 ZIP
/// archives to unpack and check, file work that must not hold one of the watch's few pool threads.
actor PassFolders {
    private let executor = BlockingExecutor(name: "calwatch-passes")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let folders: [String]

    init(_ folders: [String]) {
        self.folders = folders
    }

    func read() async -> BoardingPasses { await BoardingPasses.read(folders: folders).withoutForgedSignatures() }
}
