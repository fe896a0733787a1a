public import CalWatchCore
public import ServiceLifecycle

extension Replay {
    /// A replay of `[from, to)` as a service: on a graceful shutdown (SIGTERM or SIGINT to its `ServiceGroup`) it
    /// stops at its next consistent point, everything journaled delivered or kept, and its summary says so.
    public final class Run: Service, Sendable {
        private let replay: Replay
        private let from: Instant
        private let to: Instant
        private let finished = Outcome<Summary>()
        private let shutDown = Outcome<Void>()

        public init(_ replay: Replay, from: Instant, to: Instant) {
            self.replay = replay
            self.from = from
            self.to = to
        }

        public func run() async throws {
            let shutDown = shutDown
            let summary = try await replay.run(from: from, to: to) {
                guard Task.isShuttingDownGracefully else { return false }
                shutDown.set()
                return true
            }
            finished.set(summary)
        }

        /// What the replay did, once it has ended.
        public var summary: Summary? { finished.value }

        /// Whether a graceful shutdown stopped it before the end.
        public var stoppedByShutdown: Bool { shutDown.isSet }
    }
}
