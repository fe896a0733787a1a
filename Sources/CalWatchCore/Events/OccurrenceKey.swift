/// Which occurrence an event is about, stable across moves: a series instance is named by its RECURRENCE-ID,
/// a single event by its UID alone, so that moving either is seen as a change of the same occurrence.
///
/// The calendar is where the occurrence was found, not part of what it is (RFC 5545: a UID names one calendar
/// object wherever it is stored): keys that differ only in calendar are equal, and event ids leave it out. So a
/// collection folder renamed, or an item moved to another calendar, keeps its events and is not reminded again,
/// and one invitation kept in two calendars is reminded once.
///
/// The scope is part of it: a fleet's watcher holds many people's calendars, and one invitation in two people's
/// calendars is two occurrences, each reminded (`CalendarSource.scope`; empty outside a fleet).
public struct OccurrenceKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var calendar: String
    public var uid: String
    /// The original start of a series instance; `nil` for a single event.
    public var recurrenceID: DateValueText?
    /// Whose calendar it is in a fleet; empty otherwise.
    public var scope: String

    /// Creates a key.
    public init(calendar: String, uid: String, recurrenceID: DateValueText?, scope: String = "") {
        self.calendar = calendar
        self.uid = uid
        self.recurrenceID = recurrenceID
        self.scope = scope
    }

    /// The key of an occurrence.
    public init(_ occurrence: Occurrence) {
        self.init(
            calendar: occurrence.calendar, uid: occurrence.uid, recurrenceID: occurrence.recurrenceID,
            scope: occurrence.scope)
    }

    public static func == (a: OccurrenceKey, b: OccurrenceKey) -> Bool {
        a.uid == b.uid && a.recurrenceID == b.recurrenceID && a.scope == b.scope
    }

    public func hash(into hasher: inout Swift.Hasher) {
        hasher.combine(uid)
        hasher.combine(recurrenceID)
        // Outside a fleet (no scope) hashed as before: keys are hashed on the planner's every lookup.
        if !scope.isEmpty { hasher.combine(scope) }
    }

    public static func < (a: OccurrenceKey, b: OccurrenceKey) -> Bool {
        (a.scope, a.uid, a.recurrenceID?.description ?? "") < (b.scope, b.uid, b.recurrenceID?.description ?? "")
    }

    public var description: String { "\(calendar)/\(uid)/\(recurrenceID?.description ?? "-")" }
}

extension Occurrence {
    /// Whether a CloudEvents subject names this occurrence: `UID/START` as `PlannedEvent.subject` writes it (START
    /// the RECURRENCE-ID of a series instance), or with the start it has now. Compared whole, so a UID holding a
    /// `/` is no trouble.
    public func isNamed(bySubject subject: String) -> Bool {
        guard subject.hasPrefix(uid), subject.dropFirst(uid.count).first == "/" else { return false }
        let instant = subject.dropFirst(uid.count + 1)
        return instant == start.description || recurrenceID.map { instant == $0.description } ?? false
    }
}
