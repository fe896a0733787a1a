import Foundation
import Synchronization

/// SIGINT and SIGTERM ask a long command to stop at its next consistent point instead of dying mid-way.
enum StopSignals {
    private static let flag = Atomic(false)

    static func install() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber) { _ in StopSignals.flag.store(true, ordering: .relaxed) }
        }
    }

    @Sendable static func received() -> Bool { flag.load(ordering: .relaxed) }
}
