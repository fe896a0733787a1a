/// One day as the local server's page and `GET /v1/day` show it: every occurrence that touches the day, in order,
/// with what a person acts on (a conflict, an invitation not answered, a dismissal, how far along it is).
public struct DaySheet: Sendable {
    public struct Item: Sendable {
        public var occurrence: Occurrence
        public var facts: OccurrenceFacts
        /// `UID/START`, as `calwatch dismiss` and the answer routes take it (`CE_SUBJECT`).
        public var subject: String
        /// The subjects of the other timed occurrences it overlaps (neither cancelled, declined nor all-day).
        public var conflicts: [String] = []
        /// An invitation the user has not answered.
        public var needsAnswer: Bool
        public var dismissed: Bool
        /// Acknowledged (`calwatch ack`): no more reminders, the live activity goes on.
        public var acknowledged: Bool
        /// The latest snooze's instant, while it is to come.
        public var snoozedUntil: Instant?
        /// How far along it is, 0…1, while it runs.
        public var progress: Double?
    }

    public var date: CalendarDate
    public var now: Instant
    public var zone: ZoneRules
    public var items: [Item]

    /// The sheet of `date` (in `zone`) from `occurrences` classified by `facts`, at `now`.
    /// What the user answered of an occurrence (its `reminderDismissed`, `reminderAcknowledged` and
    /// `reminderSnoozed` events still in the journal).
    public struct Answered: Sendable, Hashable {
        public var dismissed = false
        public var acknowledged = false
        public var snoozedUntil: Instant?

        public init() {}

        /// The answers `events` give, by occurrence.
        public static func from(_ events: [PlannedEvent]) -> [OccurrenceKey: Answered] {
            var answered: [OccurrenceKey: Answered] = [:]
            for event in events {
                switch event.type {
                case .reminderDismissed: answered[event.key, default: Answered()].dismissed = true
                case .reminderAcknowledged: answered[event.key, default: Answered()].acknowledged = true
                case .reminderSnoozed:
                    if let until = event.answer?.until {
                        answered[event.key, default: Answered()].snoozedUntil = until
                    }
                default: break
                }
            }
            return answered
        }
    }

    public init(
        date: CalendarDate, occurrences: [Occurrence], facts: (Occurrence) -> OccurrenceFacts,
        answered: [OccurrenceKey: Answered], now: Instant, zone: ZoneRules
    ) {
        self.date = date
        self.now = now
        self.zone = zone
        let start = zone.instant(for: LocalDateTime(date: date))
        let end = zone.instant(for: LocalDateTime(date: date.adding(days: 1)))
        var items = occurrences.filter { $0.start < end && ($0.end > start || $0.start == $0.end && $0.start >= start) }
            .sorted { ($0.start, $0.end, $0.uid) < ($1.start, $1.end, $1.uid) }
            .map { occurrence -> Item in
                let facts = facts(occurrence)
                let answers = answered[OccurrenceKey(occurrence)] ?? Answered()
                let length = occurrence.end.secondsSinceEpoch - occurrence.start.secondsSinceEpoch
                let running = occurrence.start <= now && now < occurrence.end && length > 0
                return Item(
                    occurrence: occurrence, facts: facts,
                    subject: occurrence.uid + "/"
                        + (occurrence.recurrenceID?.description ?? occurrence.start.description),
                    needsAnswer: facts.participation == "NEEDS-ACTION" && !facts.declined,
                    dismissed: answers.dismissed, acknowledged: answers.acknowledged,
                    snoozedUntil: answers.snoozedUntil.flatMap { $0 > now ? $0 : nil },
                    progress: running
                        ? Double(now.secondsSinceEpoch - occurrence.start.secondsSinceEpoch) / Double(length) : nil)
            }
        // Sorted by start: each item is compared with those after it until one starts after it ends.
        let busy = items.indices.filter { index in
            let item = items[index]
            return !item.occurrence.allDay && !item.facts.declined && item.occurrence.status != .cancelled
                && item.occurrence.end > item.occurrence.start
        }
        for (position, first) in busy.enumerated() {
            for second in busy[(position + 1)...] {
                guard items[second].occurrence.start < items[first].occurrence.end else { break }
                items[first].conflicts.append(items[second].subject)
                items[second].conflicts.append(items[first].subject)
            }
        }
        self.items = items
    }

    /// `{"date":…,"now":…,"zone":…,"items":[{"subject":…,"occurrence":{…},"conflicts":[…],…}]}`, the occurrence as
    /// `calwatch next --format json` writes one (`schemas/calwatch-day.schema.json`).
    public var json: String {
        var writer = JSONLineWriter(capacity: 4096)
        writer.beginObject()
        writer.field("date", date.description)
        writer.field("now", now)
        writer.field("zone", zone.identifier)
        writer.beginArray(field: "items")
        for item in items {
            writer.beginElement()
            writer.field("subject", item.subject)
            writer.key("occurrence")
            OccurrenceJSON.write(item.occurrence, facts: item.facts, to: &writer, newline: false)
            writer.continueObject()
            if let leave = item.facts.leave {
                writer.beginObject(field: "leave")
                writer.field("by", leave.by)
                writer.field("prepareBy", leave.prepareBy)
                writer.field("travelSeconds", Int(leave.travelSeconds))
                writer.field("estimated", leave.estimated)
                writer.field("to", leave.destination?.name)
                writer.endObject()
            } else {
                writer.nullField("leave")
            }
            writer.beginArray(field: "conflicts")
            for subject in item.conflicts { writer.element(subject) }
            writer.endArray()
            writer.field("needsAnswer", item.needsAnswer)
            writer.field("dismissed", item.dismissed)
            writer.field("acknowledged", item.acknowledged)
            writer.field("snoozedUntil", item.snoozedUntil)
            writer.field("progress", item.progress.map { ($0 * 1000).rounded() / 1000 })
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
