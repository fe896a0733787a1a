public import CalWatchCore
import Foundation

/// Answers (snooze, dismiss, from a card, a phone or `calwatch snooze`) as the journal records and settles them.
extension JournalStore {
    /// An answer as `calwatch snooze`, `dismiss` or `ack` left it.
    public struct Answer: Sendable, Hashable {
        public enum Kind: String, Sendable { case snooze, dismiss, ack }
        public var id: Int64
        public var kind: Kind
        /// An event id (32 hex digits, as hooks get it in `CE_ID`) or a subject `UID/START`.
        public var target: String
        /// A snooze's duration.
        public var seconds: Int64?
        public var given: Timestamp
        /// What the daemon did with it; `nil` while it waits.
        public var outcome: String?
    }

    /// Records an answer; returns it as kept, an earlier identical one included (the same answer twice is one).
    public func recordAnswer(_ kind: Answer.Kind, target: String, seconds: Int64?, given: Timestamp) throws -> Answer {
        let insert = try connection.prepare(
            "INSERT OR IGNORE INTO answers (kind, target, seconds, given) VALUES (?1, ?2, ?3, ?4)")
        try insert.bind([
            .text(kind.rawValue), .text(target), seconds.map { .integer($0) } ?? .null,
            .integer(given.millisecondsSinceEpoch),
        ])
        try insert.step()
        return try answers(where: "kind = ?1 AND target = ?2", [.text(kind.rawValue), .text(target)])[0]
    }

    /// Answers the daemon has not handled yet, oldest first.
    public func pendingAnswers() throws -> [Answer] {
        try answers(where: "outcome IS NULL", [])
    }

    /// An answer by its row id.
    public func answer(id: Int64) throws -> Answer? {
        try answers(where: "id = ?1", [.integer(id)]).first
    }

    /// Records what became of an answer.
    public func settleAnswer(_ id: Int64, outcome: String) throws {
        let statement = try connection.prepare("UPDATE answers SET outcome = ?2 WHERE id = ?1")
        try statement.bind([.integer(id), .text(outcome)])
        try statement.step()
    }

    func answers(where condition: String, _ values: [SQLiteValue]) throws -> [Answer] {
        let statement = try connection.prepare(
            "SELECT id, kind, target, seconds, given, outcome FROM answers WHERE \(condition) ORDER BY id")
        try statement.bind(values)
        var answers: [Answer] = []
        while try statement.step() {
            guard let kind = statement.text(1).flatMap(Answer.Kind.init) else { continue }
            answers.append(
                Answer(
                    id: statement.integer(0), kind: kind, target: statement.text(2) ?? "",
                    seconds: statement.isNull(3) ? nil : statement.integer(3),
                    given: Timestamp(millisecondsSinceEpoch: statement.integer(4)), outcome: statement.text(5)))
        }
        return answers
    }

    /// The occurrences dismissed (`calwatch dismiss`) whose answer has not expired by `instant`: what
    /// `calwatch next` leaves out.
    public func dismissed(at instant: Instant) throws -> Set<OccurrenceKey> {
        let statement = try connection.prepare(
            "SELECT calendar, uid, recurrence_id, scope FROM events WHERE type = 'reminderDismissed' AND expiry >= ?1")
        try statement.bind([.integer(instant.secondsSinceEpoch)])
        var keys = Set<OccurrenceKey>()
        while try statement.step() {
            keys.insert(
                OccurrenceKey(
                    calendar: statement.text(0) ?? "", uid: statement.text(1) ?? "",
                    recurrenceID: statement.text(2).flatMap(DateValueText.init(text:)),
                    scope: statement.text(3) ?? ""))
        }
        return keys
    }

    /// The answers (dismissed, acknowledged, snoozed) whose events have not expired by `instant`, by occurrence, in
    /// the order given: what the local server's day shows of them.
    public func answerEvents(at instant: Instant) throws -> [Journaled] {
        let statement = try connection.prepare(
            "SELECT \(EventColumn.list) FROM events WHERE type IN ('reminderDismissed', 'reminderAcknowledged', "
                + "'reminderSnoozed') AND expiry >= ?1 ORDER BY seq")
        try statement.bind([.integer(instant.secondsSinceEpoch)])
        var rows: [Journaled] = []
        while try statement.step() {
            if let journaled = Self.journaled(statement) { rows.append(journaled) }
        }
        return rows
    }
}
