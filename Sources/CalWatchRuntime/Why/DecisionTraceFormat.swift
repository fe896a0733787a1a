public import CalWatchCore

/// `calwatch why` output: a report for people, or one JSON object (`$defs/whyTrace` in the JSON Schema).
extension DecisionTrace {
    /// The report: the occurrence, then each event by time with what became of it and of each sink's copy. Times
    /// are shown in `zone`, with the UTC instant JSON uses.
    public func text(zone: ZoneRules) -> String {
        func at(_ instant: Instant) -> String { DecisionTrace.shown(instant, in: zone) }
        var lines: [String] = []
        if let occurrence {
            lines.append(occurrence.heading)
            lines.append(
                "  \(at(occurrence.start)) to \(at(occurrence.end)) \(zone.identifier)"
                    + (occurrence.allDay ? ", all day" : "")
                    + (occurrence.status == .cancelled ? ", cancelled" : ""))
            var kind = "  \(facts.kind.rawValue)"
            if let confidence = classification?.confidence { kind += ", confidence \(Int(confidence * 100))%" }
            if let code = facts.flight?.code { kind += ", flight \(code)" }
            if let leaveBy = facts.leaveBy { kind += ", leave by \(at(leaveBy))" }
            if let service = facts.meeting?.service { kind += ", \(service)" }
            if facts.declined { kind += ", declined by you" }
            lines.append(kind)
            if let pass = facts.flight?.pass { lines.append("  boarding pass: \(pass.details)") }
            if let live = facts.flight?.live {
                lines.append("  flight status: " + live.details(calendar: occurrence.start, shown: at))
            }
        } else {
            lines.append(
                steps.contains { $0.type == .agendaDue }
                    ? "UID \(uid): agendas"
                    : steps.contains { $0.type == .accountSignInNeeded }
                        ? "account \(uid.dropFirst("account:".count)): sign-in notices"
                        : "UID \(uid): not in the calendars")
        }
        lines += notes.map { "  " + $0 }
        lines.append("")
        for step in steps {
            lines.append("  \(at(step.time))  \(step.type.rawValue), \(step.what): \(step.state.rawValue)")
            if let recorded = step.recorded, step.state == .emitted || step.state == .moved {
                lines.append(
                    "      emitted \(at(recorded.instant))" + (step.sequence.map { " (sequence \($0))" } ?? ""))
            }
            if let reason = step.reason { lines.append("      " + reason) }
            for delivery in step.deliveries {
                lines.append("      \(delivery.sink): \(delivery.state): \(delivery.detail)")
            }
        }
        if steps.isEmpty { lines.append("  nothing is planned for it and the journal holds nothing about it") }
        // Each line one line: notes, reasons and sink details quote calendar text and hooks' output.
        return lines.map { TerminalText.safe($0, keepingLines: false) }.joined(separator: "\n") + "\n"
    }

    /// One JSON object; keys as in `$defs/whyTrace` of schemas/calwatch-event.schema.json.
    public var json: String {
        var writer = JSONLineWriter(capacity: 4096)
        writer.beginObject()
        writer.field("uid", uid)
        writer.field("now", now)
        if let occurrence {
            writer.key("occurrence")
            OccurrenceJSON.write(occurrence, facts: facts, to: &writer, newline: false)
        } else {
            writer.nullField("occurrence")
        }
        writer.beginArray(field: "notes")
        for note in notes { writer.element(note) }
        writer.endArray()
        writer.beginArray(field: "events")
        for step in steps {
            writer.beginElement()
            writer.field("type", step.type.rawValue)
            writer.field("time", step.time)
            writer.field("what", step.what)
            writer.field("state", step.state.rawValue)
            writer.field("reason", step.reason)
            writer.field("id", step.id?.description)
            writer.field("sequence", step.sequence.map { Int($0) })
            if let recorded = step.recorded { writer.field("recorded", recorded) } else { writer.nullField("recorded") }
            writer.beginArray(field: "sinks")
            for delivery in step.deliveries {
                writer.beginElement()
                writer.field("name", delivery.sink)
                writer.field("state", delivery.state)
                writer.field("detail", delivery.detail)
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
