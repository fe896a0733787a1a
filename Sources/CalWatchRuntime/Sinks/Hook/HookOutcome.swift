/// How one run of a hook program ended: what the hook sink acts on, the metrics count and the journal keeps for
/// `calwatch why`.
public enum HookOutcome: Hashable, Sendable, CustomStringConvertible {
    /// The exit status that asks for the event again later (`EX_TEMPFAIL`).
    public static let retryStatus: Int32 = 75

    case exited(Int32)
    case signaled(Int32)
    /// Still running at the timeout: its group got SIGTERM, then SIGKILL.
    case timedOut
    /// The program could not be started (not found, not executable).
    case notStarted(String)

    /// Whether the program did its work: it exited 0.
    public var succeeded: Bool { self == .exited(0) }

    /// `exit 0`, `exit 75 (asked for a retry)`, `killed by signal 9`, `timed out`, `not started: …`: as the
    /// journal keeps it, and as `calwatch why` shows it.
    public var description: String {
        switch self {
        case .exited(Self.retryStatus): "exit \(Self.retryStatus) (asked for a retry)"
        case .exited(let status): "exit \(status)"
        case .signaled(let signal): "killed by signal \(signal)"
        case .timedOut: "timed out"
        case .notStarted(let problem): "not started: \(problem)"
        }
    }

    /// Reads back the text `description` wrote into the journal; `nil` for text it never writes.
    public init?(journalText text: String) {
        func number(after prefix: String) -> Int32? {
            guard text.hasPrefix(prefix) else { return nil }
            return Int32(text.dropFirst(prefix.count).prefix { $0.isNumber })
        }
        if let status = number(after: "exit ") {
            self = .exited(status)
        } else if let signal = number(after: "killed by signal ") {
            self = .signaled(signal)
        } else if text == "timed out" {
            self = .timedOut
        } else if text.hasPrefix("not started: ") {
            self = .notStarted(String(text.dropFirst("not started: ".count)))
        } else {
            return nil
        }
    }
}
