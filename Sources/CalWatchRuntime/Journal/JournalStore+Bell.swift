import Foundation

extension JournalStore {
    /// The folder a running daemon watches for answers another process (or a sink) recorded in its journal.
    public nonisolated var answerBell: String { path + ".answers" }

    /// Tells a running daemon that an answer waits: a file renamed into `answerBell` (which the daemon makes when
    /// it starts; without one, the answer waits in the journal for the next start).
    public nonisolated func ring() {
        let temporary = answerBell + "/.ring-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard FileManager.default.createFile(atPath: temporary, contents: Data()) else { return }
        if rename(temporary, answerBell + "/rang") != 0 { unlink(temporary) }
    }
}
