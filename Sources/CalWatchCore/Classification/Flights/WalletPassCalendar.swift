import Foundation

/// A wallet pass's flight as a calendar item, for a flight the calendars do not have: the pass's first leg, at its
/// `relevantDate` (else its boarding time), an hour long (a pass has no arrival), declared a flight. It joins its
/// own pass, so it carries the seat, gate and boarding time; when a calendar has the same flight on that day, the
/// two are copies of one flight and the calendar's is the one planned (`SameMeetings`). A barcode alone has no time
/// and gives no item.
enum WalletPassCalendar {
    /// Its items' UIDs end so: how `SameMeetings` tells a pass's copy from a calendar's.
    static let uidSuffix = "@pass.calwatch"

    /// The item as iCalendar text; `nil` for a pass without a boarding pass's barcode or a time.
    static func text(_ archive: Data) -> String? {
        guard let wallet = try? WalletPass(archive: archive), let time = wallet.relevantDate ?? wallet.boarding,
            let pass = wallet.barcodes.lazy.compactMap({ try? BoardingPass(barcode: $0) }).first,
            let leg = pass.legs.first
        else { return nil }
        let stamp = stamp(time)
        let booking = String(leg.bookingReference.filter { $0.isASCII && ($0.isLetter || $0.isNumber) })
        return [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch//wallet pass//EN", "X-WR-CALNAME:Boarding passes",
            "BEGIN:VEVENT", "UID:\(booking)-\(leg.code)-\(leg.dayOfYear)\(uidSuffix)", "DTSTAMP:\(stamp)",
            "DTSTART:\(stamp)", "DURATION:PT1H", "SUMMARY:Flight \(leg.code) \(leg.origin) → \(leg.destination)",
            "X-CALWATCH-KIND:flight", "END:VEVENT", "END:VCALENDAR", "",
        ].joined(separator: "\r\n")
    }

    /// `20271122T224500Z`: the instant as calwatch prints it, in iCalendar's basic form.
    private static func stamp(_ instant: Instant) -> String {
        instant.description.filter { $0 != "-" && $0 != ":" }
    }
}
