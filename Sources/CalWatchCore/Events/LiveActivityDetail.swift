/// The state a live activity reports.
public struct LiveActivityDetail: Hashable, Sendable {
    /// Before the occurrence starts, while it runs, and in its last minutes (`day.endingSoon`).
    public enum Phase: String, Sendable { case upcoming, inProgress, endingSoon }
    /// Why a live activity ended.
    public enum EndReason: String, Sendable { case ended, cancelled, removed, rescheduled, expired, dismissed }

    public var phase: Phase
    public var secondsToStart: Int64
    public var secondsToEnd: Int64
    /// 0 before the start, then the share of the occurrence that has passed (0...1).
    public var progress: Double
    /// Set on `liveActivityEnd` only (`PlannedEvent.liveActivity` sets it from the payload's reason).
    public var endReason: EndReason?

    /// The state of an occurrence `[start, end)` as seen at `instant`; within `endingSoon` seconds of its end it is
    /// `endingSoon` (0: never).
    public init(start: Instant, end: Instant, at instant: Instant, endingSoon: Int64 = 0, endReason: EndReason? = nil) {
        let toStart = start.secondsSinceEpoch - instant.secondsSinceEpoch
        let toEnd = end.secondsSinceEpoch - instant.secondsSinceEpoch
        let length = end.secondsSinceEpoch - start.secondsSinceEpoch
        phase = toStart > 0 ? .upcoming : (endingSoon > 0 && toEnd <= endingSoon ? .endingSoon : .inProgress)
        secondsToStart = max(0, toStart)
        secondsToEnd = max(0, toEnd)
        progress = toStart > 0 ? 0 : (length <= 0 ? 1 : min(1, Double(-toStart) / Double(length)))
        self.endReason = endReason
    }

    /// This state with the reason the activity ended.
    func ending(_ reason: EndReason) -> LiveActivityDetail {
        var ended = self
        ended.endReason = reason
        return ended
    }
}
