/// The `flight` and `meeting` objects of `scan` and of event data (docs/design.md §7).
package enum ClassificationJSON {
    /// `"flight":{…}` or `"flight":null`. Departure and arrival are the occurrence's start and end; leave-by is
    /// also shown on the origin airport's clock (`leaveByLocal`), where the traveller is.
    package static func writeFlight(
        _ flight: FlightFacts?, departure: Instant, arrival: Instant, leaveBy: Instant?, to writer: inout JSONLineWriter
    ) {
        guard let flight else { return writer.nullField("flight") }
        writer.beginObject(field: "flight")
        writer.field("code", flight.code)
        writer.field("designator", flight.designator)
        writer.field("number", flight.number)
        writer.field("airline", flight.airline)
        writer.field("origin", flight.origin?.code)
        writer.field("destination", flight.destination?.code)
        writer.field("departure", departure)
        writer.field("arrival", arrival)
        writer.field("international", flight.international)
        writer.field("leaveBy", leaveBy)
        if let leaveBy, let zone = flight.origin.flatMap({ TimeZoneDatabase.rules(named: $0.zone) }) {
            writer.field("leaveByLocal", local: zone.wallClock(at: leaveBy), offset: zone.offset(at: leaveBy))
        } else {
            writer.nullField("leaveByLocal")
        }
        writer.field("terminal", flight.terminal)
        writer.field("gate", flight.gate)
        writer.field("seat", flight.seat)
        writer.field("bookingReference", flight.bookingReference)
        writer.field("tier", flight.tier)
        // Only with a pass: flights without one are written as before.
        if let pass = flight.pass {
            writer.beginObject(field: "pass")
            writer.field("seat", pass.seat)
            writer.field("compartment", pass.compartment)
            writer.field("sequence", pass.sequence)
            writer.field("bookingReference", pass.bookingReference)
            // A wallet pass's, when it gives them.
            if let gate = pass.gate { writer.field("gate", gate) }
            if let terminal = pass.terminal { writer.field("terminal", terminal) }
            if let boarding = pass.boarding { writer.field("boarding", boarding) }
            writer.endObject()
        }
        writer.endObject()
    }

    /// `"meeting":{…}` or `"meeting":null`.
    package static func writeMeeting(_ meeting: MeetingFacts?, to writer: inout JSONLineWriter) {
        guard let meeting else { return writer.nullField("meeting") }
        writer.beginObject(field: "meeting")
        writer.field("service", meeting.service)
        writer.field("joinURL", meeting.joinURL)
        writer.field("meetingId", meeting.meetingID)
        writer.field("passcode", meeting.passcode)
        writer.field("dialIn", meeting.dialIn)
        writer.endObject()
    }
}
