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
        // Only with the status service's answer, likewise.
        if let live = flight.live {
            writer.beginObject(field: "live")
            writer.field("status", live.status.state.rawValue)
            writer.field("provider", live.status.provider)
            writer.field("asked", live.status.asked)
            writer.field("scheduled", live.status.scheduled)
            writer.field("expected", live.status.expected)
            writer.field("expectedField", live.status.expectedField)
            writer.field("departure", live.departure ?? departure)
            writer.field(
                "delaySeconds", Int((live.departure ?? departure).secondsSinceEpoch - departure.secondsSinceEpoch))
            writer.field("gate", live.status.gate)
            writer.field("terminal", live.status.terminal)
            writer.field("divertedTo", live.status.divertedTo)
            writer.endObject()
        }
        if flight.pass != nil || flight.live != nil { writeSources(flight, to: &writer) }
        writer.endObject()
    }

    /// Where the departure, gate, terminal, seat and boarding time came from: `calendar`, `pass` or the status
    /// service's name; `null` where none gives it.
    private static func writeSources(_ flight: FlightFacts, to writer: inout JSONLineWriter) {
        let live = flight.live?.status
        let provider = live?.provider
        func source(status: Bool, pass: Bool, calendar: Bool) -> String? {
            status ? provider : pass ? "pass" : calendar ? "calendar" : nil
        }
        writer.beginObject(field: "sources")
        writer.field("departure", flight.live?.departure != nil ? provider : "calendar")
        writer.field(
            "gate", source(status: live?.gate != nil, pass: flight.pass?.gate != nil, calendar: flight.gate != nil))
        writer.field(
            "terminal",
            source(status: live?.terminal != nil, pass: flight.pass?.terminal != nil, calendar: flight.terminal != nil))
        writer.field("seat", source(status: false, pass: flight.pass?.seat != nil, calendar: flight.seat != nil))
        writer.field("boarding", flight.pass?.boarding != nil ? "pass" : nil)
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
