public import CalWatchCore

extension JournalStore {
    /// What became of an answer given with `give`.
    public enum Given: Sendable, Equatable {
        /// The daemon applied it (now, or the same answer before): what it did.
        case applied(String)
        /// The daemon refused it: why (over, a snooze past the end, no such occurrence, …).
        case refused(String)
        /// Kept in the journal; no daemon took it within the wait (none runs, or it is busy).
        case kept
    }

    /// Records an answer, rings the daemon and waits up to `wait` for what it did with it: what `calwatch snooze`,
    /// `dismiss` and `ack` and the local server's answer routes share. An event id the journal never held names
    /// nothing a daemon could apply: refused at once, not kept.
    public func give(
        _ kind: Answer.Kind, target: String, seconds: Int64?, given: Timestamp, wait: Duration = .milliseconds(1500)
    ) async throws -> Given {
        if let id = EventID(hex: target), target.count == 32, try event(id: id) == nil {
            return .refused(
                "no event \(target) in \(path): give the id a hook got in CE_ID, from this daemon's journal (--state)")
        }
        let answer = try recordAnswer(kind, target: target, seconds: seconds, given: given)
        if let outcome = answer.outcome { return Self.given(outcome, before: true) }
        ring()
        // The daemon takes it within milliseconds when it is free: looked for often at first, then every 50 ms.
        var step = Duration.milliseconds(2)
        var waited = Duration.zero
        while waited < wait {
            try await Task.sleep(for: step)
            waited += step
            if let outcome = try self.answer(id: answer.id)?.outcome { return Self.given(outcome, before: false) }
            step = min(step * 2, .milliseconds(50))
        }
        return .kept
    }

    private static func given(_ outcome: String, before: Bool) -> Given {
        let text = before ? "given before: \(outcome)" : outcome
        return outcome.hasPrefix("applied") ? .applied(text) : .refused(text)
    }
}
