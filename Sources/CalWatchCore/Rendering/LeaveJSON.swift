/// The `leave` and `links` objects of event data (docs/design.md §11): when to leave and how that was worked out,
/// and links that open the way there in a map or a ride service. Written only for an occurrence with a time to leave.
package enum LeaveJSON {
    package static func write(_ leave: Leave?, to writer: inout JSONLineWriter) {
        guard let leave else { return }
        writer.beginObject(field: "leave")
        writer.field("by", leave.by)
        writer.field("travelSeconds", Int(leave.travelSeconds))
        writer.field("source", leave.source.rawValue)
        writer.field("mode", leave.mode?.rawValue)
        writePlace(leave.origin, field: "origin", to: &writer)
        writePlace(leave.destination, field: "destination", to: &writer)
        if let weather = leave.weather {
            writer.beginObject(field: "weather")
            writer.field("percent", weather.percent)
            writer.field("reason", weather.reason)
            writer.endObject()
        }
        if let confidence = leave.confidence {
            writer.field("confidence", confidence.rawValue)
            if leave.estimated { writer.field("estimated", true) }
        }
        if let prep = leave.prep, let prepareBy = leave.prepareBy {
            writer.field("prepareBy", prepareBy)
            writer.field("prepSeconds", Int(prep.seconds))
            writer.field("prepSource", prep.source.rawValue)
        }
        writer.endObject()
        guard let point = leave.destination?.at else { return }
        writer.beginObject(field: "links")
        for (name, link) in links(to: point) { writer.field(name, link) }
        writer.endObject()
    }

    /// The links to a point, in the documented forms of each service: RFC 5870's `geo:` URI, Google Maps' and Apple
    /// Maps' directions URLs (from where the user is), OpenStreetMap's map at the point, and Uber's universal link
    /// with the drop-off set.
    static func links(to point: GeoPoint) -> [(StaticString, String)] {
        let latitude = GeoPoint.text(point.latitude)
        let longitude = GeoPoint.text(point.longitude)
        return [
            ("geo", "geo:\(latitude),\(longitude)"),
            ("directions", directions(to: point)),
            ("appleMaps", "https://maps.apple.com/?daddr=\(latitude),\(longitude)"),
            (
                "openStreetMap",
                "https://www.openstreetmap.org/?mlat=\(latitude)&mlon=\(longitude)#map=17/\(latitude)/\(longitude)"
            ),
            (
                "ride",
                "https://m.uber.com/ul/?action=setPickup&pickup=my_location&dropoff%5Blatitude%5D=\(latitude)"
                    + "&dropoff%5Blongitude%5D=\(longitude)"
            ),
        ]
    }

    /// Google Maps' documented directions URL, from where the user is to `point`: what a hook opens.
    package static func directions(to point: GeoPoint) -> String {
        "https://www.google.com/maps/dir/?api=1&destination=\(GeoPoint.text(point.latitude))%2C"
            + GeoPoint.text(point.longitude)
    }

    private static func writePlace(_ place: Leave.Place?, field: StaticString, to writer: inout JSONLineWriter) {
        guard let place else { return writer.nullField(field) }
        writer.beginObject(field: field)
        writer.field("name", place.name)
        writer.field("lat", place.at?.latitude)
        writer.field("lon", place.at?.longitude)
        writer.endObject()
    }
}
