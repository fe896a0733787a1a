/// The JSON shape of an occurrence printed by `calwatch scan` (DESIGN §7).
public enum OccurrenceJSON {
    /// Appends one occurrence as a JSON Lines record.
    public static func write(_ occurrence: Occurrence, to writer: inout JSONLineWriter) {
        writer.beginObject()
        writer.field("uid", occurrence.uid)
        writer.field("recurrenceId", occurrence.recurrenceID?.description)
        writer.field("calendar", occurrence.calendar)
        writer.field("summary", occurrence.summary)
        writer.field("start", occurrence.start)
        writer.field("end", occurrence.end)
        writer.field(
            "startLocal", local: occurrence.startLocal, offset: occurrence.displayZone.offset(at: occurrence.start))
        writer.field("timeZone", occurrence.timeZone?.identifier)
        writer.field("allDay", occurrence.allDay)
        writer.field("status", statusText(occurrence.status))
        writer.field("kind", "event")
        writer.field("confidence", nil as Double?)
        writer.field("flight", nil as String?)
        writer.field("meeting", nil as String?)
        writer.field("location", occurrence.location)
        writer.endObject(newline: true)
    }

    /// `confirmed`, `tentative`, `cancelled`, or `null` when the calendar says nothing (or something else).
    static func statusText(_ status: CalendarComponent.Status?) -> String? {
        switch status {
        case .confirmed: "confirmed"
        case .tentative: "tentative"
        case .cancelled: "cancelled"
        case .other, nil: nil
        }
    }
}

/// The JSON shape of an alarm trigger printed by `calwatch scan --alarms`.
public enum AlarmJSON {
    /// Appends one trigger as a JSON Lines record.
    public static func write(_ trigger: AlarmTrigger, to writer: inout JSONLineWriter) {
        writer.beginObject()
        writer.field("uid", trigger.occurrence.uid)
        writer.field("recurrenceId", trigger.occurrence.recurrenceID?.description)
        writer.field("calendar", trigger.occurrence.calendar)
        writer.field("summary", trigger.occurrence.summary)
        writer.field("trigger", trigger.trigger)
        writer.field("action", trigger.alarm.action)
        writer.field("repetition", trigger.repetition)
        writer.field("description", trigger.alarm.description)
        writer.field("occurrenceStart", trigger.occurrence.start)
        writer.field("allDay", trigger.occurrence.allDay)
        writer.endObject(newline: true)
    }
}
