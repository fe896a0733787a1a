/// The CloudEvents 1.0 JSON form of a calwatch event (docs/design.md §5), one object per JSON Lines record.
///
/// `schemas/calwatch-event.schema.json` describes it; `EventSchemaTests` checks this writer against it.
public enum CloudEventJSON {
    /// One event as a JSON object, without the newline.
    public static func render(
        _ event: PlannedEvent, occurrence: Occurrence?, facts: OccurrenceFacts = .event, sequence: Int64,
        recordedTime: Timestamp
    ) -> String {
        var writer = JSONLineWriter(capacity: 2048)
        write(event, occurrence: occurrence, facts: facts, sequence: sequence, recordedTime: recordedTime, to: &writer)
        return String(decoding: writer.bytes.dropLast(), as: UTF8.self)
    }

    /// The event's own part of `data` (reminder, liveActivity, flight, meeting) as one JSON object: what the SQLite
    /// sink stores, the occurrence being in its columns.
    package static func writeDetails(
        _ event: PlannedEvent, facts: OccurrenceFacts, flightAndMeeting: Bool = true, to writer: inout JSONLineWriter
    ) {
        writer.beginObject()
        writeDetails(of: event, facts: facts, flightAndMeeting: flightAndMeeting, to: &writer)
        writer.endObject()
    }

    private static func writeDetails(
        of event: PlannedEvent, facts: OccurrenceFacts, flightAndMeeting: Bool = true,
        occurrence fragments: OccurrenceJSON.Fragments? = nil, to writer: inout JSONLineWriter
    ) {
        if let reminder = event.reminder {
            writer.beginObject(field: "reminder")
            writer.field("minutesBefore", Int(reminder.secondsBefore / 60))
            writer.field("secondsBefore", Int(reminder.secondsBefore))
            writer.field("anchor", reminder.anchor.rawValue)
            writer.field("source", reminder.source.rawValue)
            writer.field("late", reminder.late)
            writer.field("lateness", Int(reminder.lateness))
            writer.field("snoozed", reminder.source == .snooze)
            writer.field("snoozeCount", reminder.snoozeCount)
            writer.field("deferred", reminder.deferredFrom != nil)
            writer.endObject()
        }
        if let answer = event.answer {
            writer.beginObject(field: "answer")
            writer.field("answered", answer.answered?.description)
            writer.field("until", answer.until)
            writer.field("count", answer.count)
            writer.endObject()
        }
        if let activity = event.liveActivity {
            writer.beginObject(field: "liveActivity")
            writer.field("phase", activity.phase.rawValue)
            writer.field("secondsToStart", Int(activity.secondsToStart))
            writer.field("secondsToEnd", Int(activity.secondsToEnd))
            writer.field("progress", activity.progress)
            if let reason = activity.endReason { writer.field("reason", reason.rawValue) }
            writer.endObject()
        }
        writeDayDetails(of: event, to: &writer)
        guard flightAndMeeting else { return }
        ClassificationJSON.writeFlight(
            facts.flight, departure: event.occurrenceStart, arrival: event.occurrenceEnd, leaveBy: facts.leaveBy,
            to: &writer)
        // Rendered once with the occurrence (the flight field before it always written, so its comma is due).
        if let fragments {
            fragments.append(.meeting, to: &writer)
        } else {
            ClassificationJSON.writeMeeting(facts.meeting, to: &writer)
        }
        LeaveJSON.write(facts.leave, to: &writer)
    }

    /// `conflict`, `overrun`, `invitation` and `agenda`: the detail of the day's events; `change`, a flight's;
    /// `account`, an account's notice.
    private static func writeDayDetails(of event: PlannedEvent, to writer: inout JSONLineWriter) {
        func late(_ lateness: Int64) {
            writer.field("late", lateness > 0)
            writer.field("lateness", Int(lateness))
        }
        switch event.payload {
        case .flightChanged(let change):
            writer.beginObject(field: "change")
            writer.field("provider", change.provider)
            writer.field("asked", change.asked)
            writer.beginArray(field: "changes")
            for difference in change.changes {
                writer.beginElement()
                writer.field("field", difference.field)
                writer.field("from", difference.from)
                writer.field("to", difference.to)
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
        case .conflictDetected(let conflict):
            writer.beginObject(field: "conflict")
            writer.key("with")
            write(conflict.with, to: &writer)
            writer.field("overlapStart", conflict.overlapStart)
            writer.field("overlapEnd", conflict.overlapEnd)
            writer.field("overlapSeconds", Int(conflict.overlapSeconds))
            writer.beginArray(field: "alsoWith")
            for other in conflict.alsoWith { element(other, to: &writer) }
            writer.endArray()
            writer.endObject()
        case .overrunDetected(let overrun):
            writer.beginObject(field: "overrun")
            writer.key("next")
            write(overrun.next, to: &writer)
            late(overrun.lateness)
            writer.beginArray(field: "alsoRunning")
            for other in overrun.alsoRunning { element(other, to: &writer) }
            writer.endArray()
            writer.endObject()
        case .invitationPending(let invitation):
            writer.beginObject(field: "invitation")
            writer.field("minutesBefore", Int(invitation.secondsBefore / 60))
            writer.field("secondsBefore", Int(invitation.secondsBefore))
            writer.field("partstat", "NEEDS-ACTION")
            writer.field("organizer", invitation.organizer)
            late(invitation.lateness)
            writer.endObject()
        case .agendaDue(let agenda):
            writer.beginObject(field: "agenda")
            writer.field("date", agenda.date)
            writer.field("zone", agenda.zone)
            late(agenda.lateness)
            writer.beginArray(field: "items")
            for item in agenda.items {
                writer.beginElement()
                writeFields(of: item.occurrence, to: &writer)
                writer.field("allDay", item.allDay)
                writer.field("location", item.location)
                writer.field("leaveBy", item.leaveBy)
                writer.field("participation", item.participation)
                writer.beginArray(field: "conflicts")
                for uid in item.conflicts { writer.element(uid) }
                writer.endArray()
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
        case .accountSignInNeeded(let notice):
            writer.beginObject(field: "account")
            writer.field("name", notice.account)
            writer.field("provider", notice.provider)
            writer.field("user", notice.user)
            writer.field("reason", notice.reason)
            writer.field("signIn", notice.signIn)
            writer.field("host", notice.host)
            writer.field("since", notice.since)
            if let device = notice.deviceCode {
                writer.beginObject(field: "deviceCode")
                writer.field("address", device.address)
                writer.field("code", device.code)
                writer.field("until", device.until)
                writer.endObject()
            } else {
                writer.nullField("deviceCode")
            }
            writer.field("signInPage", notice.signInPage)
            writer.endObject()
        default:
            break
        }
    }

    /// Another occurrence a day's event names, as an object.
    private static func write(_ other: OtherOccurrence, to writer: inout JSONLineWriter) {
        writer.beginObject()
        writeFields(of: other, to: &writer)
        writer.endObject()
    }

    /// Another occurrence as the next element of an array.
    private static func element(_ other: OtherOccurrence, to writer: inout JSONLineWriter) {
        writer.beginElement()
        writeFields(of: other, to: &writer)
        writer.endObject()
    }

    private static func writeFields(of other: OtherOccurrence, to writer: inout JSONLineWriter) {
        writer.field("uid", other.uid)
        writer.field("recurrenceId", other.recurrenceId)
        writer.field("calendar", other.calendar)
        writer.field("summary", other.summary)
        writer.field("start", other.start)
        writer.field("end", other.end)
        writer.field("kind", other.kind.rawValue)
        writer.field("joinUrl", other.joinUrl)
    }

    /// Appends one event. `occurrence` is the occurrence as planned (absent when it was deleted); `sequence`
    /// is the journal's; `recordedTime` is when the event was actually emitted.
    public static func write(
        _ event: PlannedEvent, occurrence: Occurrence?, facts: OccurrenceFacts = .event, sequence: Int64,
        recordedTime: Timestamp, to writer: inout JSONLineWriter
    ) {
        var cache = OccurrenceJSON.FragmentCache(limit: 0)
        write(
            event, occurrence: occurrence, facts: facts, sequence: sequence, recordedTime: recordedTime, cache: &cache,
            to: &writer)
    }

    /// Events as JSON Lines one after another in one buffer, each occurrence's per-component fields rendered once
    /// for all the events about it (a live activity's are one a minute): what the JSON Lines sink writes.
    public struct Lines {
        /// The lines written since the last `reset`.
        public private(set) var writer = JSONLineWriter()
        private var cache = OccurrenceJSON.FragmentCache()

        public init() {}

        /// Empties the buffer, keeping the rendered fragments.
        public mutating func reset() { writer.reset() }

        /// Appends a newline (after text that did not end in one).
        public mutating func newline() { writer.append(raw: [10]) }

        /// Appends one event's line, as `CloudEventJSON.write` renders it.
        public mutating func append(
            _ event: PlannedEvent, occurrence: Occurrence?, facts: OccurrenceFacts, sequence: Int64,
            recordedTime: Timestamp
        ) {
            CloudEventJSON.write(
                event, occurrence: occurrence, facts: facts, sequence: sequence, recordedTime: recordedTime,
                cache: &cache, to: &writer)
        }
    }

    private static func write(
        _ event: PlannedEvent, occurrence: Occurrence?, facts: OccurrenceFacts, sequence: Int64,
        recordedTime: Timestamp, cache: inout OccurrenceJSON.FragmentCache, to writer: inout JSONLineWriter
    ) {
        writer.beginObject()
        writer.field("specversion", "1.0")
        writer.field("id", event.id)
        // `source`, `subject` and `sequence` written in place, not made into strings first: one line per event.
        writer.field("source", prefix: "calwatch:", event.key.calendar)
        writer.field("type", event.type.cloudEventType)
        writer.field("subject", event.key.uid, slash: event.key.recurrenceID ?? .instant(event.occurrenceStart))
        writer.field("time", event.time)
        writer.field("datacontenttype", "application/json")
        writer.field("recordedtime", recordedTime)
        writer.field("expirytime", event.expiry)
        writer.field("sequence", quoted: sequence)
        writer.key("data")
        writeData(event, occurrence: occurrence, facts: facts, cache: &cache, to: &writer)
        writer.endObject(newline: true)
    }

    /// The event in CloudEvents' binary mode: its attributes (but `datacontenttype`) as a header carries them,
    /// each value the text the JSON form has, and its `data` alone as a JSON object.
    public static func binary(
        _ event: PlannedEvent, occurrence: Occurrence?, facts: OccurrenceFacts, sequence: Int64,
        recordedTime: Timestamp
    ) -> (attributes: [(name: String, value: String)], data: [UInt8]) {
        func text(_ write: (inout JSONLineWriter) -> Void) -> String {
            var writer = JSONLineWriter(capacity: 32)
            write(&writer)
            return String(decoding: writer.bytes, as: UTF8.self)
        }
        let attributes = [
            ("specversion", "1.0"), ("id", event.id.description), ("source", "calwatch:" + event.key.calendar),
            ("type", event.type.cloudEventType), ("subject", event.subject),
            ("time", text { $0.append(instant: event.time) }),
            ("recordedtime", text { $0.append(timestamp: recordedTime) }),
            ("expirytime", text { $0.append(instant: event.expiry) }), ("sequence", String(sequence)),
        ]
        var writer = JSONLineWriter(capacity: 2048)
        var cache = OccurrenceJSON.FragmentCache(limit: 0)
        writeData(event, occurrence: occurrence, facts: facts, cache: &cache, to: &writer)
        return (attributes.map { (name: $0.0, value: $0.1) }, writer.bytes)
    }

    /// The event's `data` object: the occurrence, then the event's own part.
    private static func writeData(
        _ event: PlannedEvent, occurrence: Occurrence?, facts: OccurrenceFacts,
        cache: inout OccurrenceJSON.FragmentCache, to writer: inout JSONLineWriter
    ) {
        writer.beginObject()
        var fragments: OccurrenceJSON.Fragments?
        if event.type == .agendaDue || event.type == .accountSignInNeeded {
            // About a day (its occurrences are the agenda's items), or an account.
        } else if let occurrence {
            // The occurrence object is the one `calwatch scan` prints.
            writer.key("occurrence")
            fragments = OccurrenceJSON.write(occurrence, facts: facts, cache: &cache, to: &writer)
        } else {
            writer.beginObject(field: "occurrence")
            writer.field("uid", event.key.uid)
            writer.field("recurrenceId", event.key.recurrenceID)
            writer.field("calendar", event.key.calendar)
            writer.field("start", event.occurrenceStart)
            writer.field("end", event.occurrenceEnd)
            writer.endObject()
        }
        writeDetails(of: event, facts: facts, occurrence: fragments, to: &writer)
        writer.endObject()
    }
}
