/// A boarding pass's barcode: IATA Resolution 792's Bar Coded Boarding Pass (BCBP), format `M`, the text inside the
/// PDF417 or Aztec code of every airline's pass (what `zbarimg` prints). Its mandatory items are read by position;
/// the conditional items (check-in source, baggage tags, frequent flyer numbers) and the security data are stepped
/// over by the sizes the barcode gives, never read past its end. A stranger's text: at most `largest` characters,
/// printable ASCII only, every field checked before use. Read as leniently as airlines write it: a short pass that
/// ends after a leg's date, a missing electronic ticket indicator, an ICAO designator.
public struct BoardingPass: Sendable, Hashable {
    /// One flight of the pass.
    public struct Leg: Sendable, Hashable {
        /// The operating carrier's booking reference (PNR).
        public var bookingReference: String
        /// IATA airport codes.
        public var origin: String
        public var destination: String
        /// The operating carrier's designator (`AC`; some carriers write their ICAO code, `EZY`).
        public var designator: String
        /// The flight number, leading zeros dropped (`0834` → 834).
        public var number: Int
        /// The day of the year of the flight (1–366) on the departure airport's calendar: the pass carries no year.
        public var dayOfYear: Int
        /// The class of service (`J`, `Y`); `nil` when blank.
        public var compartment: String?
        /// The seat, leading zeros dropped (`003A` → `3A`; `INF` for an infant); `nil` when blank.
        public var seat: String?
        /// The check-in sequence number; `nil` when blank.
        public var sequence: Int?
        /// What a wallet pass (`.pkpass`) adds beside its barcode; `nil` for a barcode alone.
        public var gate: String?
        public var terminal: String?
        public var boarding: Instant?

        /// `AC834`: designator and number, as `FlightFacts.code` writes it.
        public var code: String { designator + String(number) }

        /// What the pass adds to its flight, as people read it: `seat 3A, class J, check-in 27, booking AB12C3`.
        public var details: String {
            var parts: [String] = []
            if let seat { parts.append("seat \(seat)") }
            if let compartment { parts.append("class \(compartment)") }
            if let sequence { parts.append("check-in \(sequence)") }
            if let gate { parts.append("gate \(gate)") }
            if let terminal { parts.append("terminal \(terminal)") }
            if let boarding { parts.append("boarding \(boarding)") }
            parts.append("booking \(bookingReference)")
            return parts.joined(separator: ", ")
        }
    }

    /// Why a text is not a boarding pass, at which character (1-based).
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        public var position: Int
        public var reason: String

        public var description: String { "character \(position): \(reason)" }
    }

    /// The passenger, as the pass writes it (`DESMARAIS/LUC`).
    public var passenger: String
    public var legs: [Leg]
    /// For a wallet pass (`.pkpass`), whether it carries its issuer's signature (not checked against Apple's
    /// certificates); `nil` for a barcode alone.
    public var signed: Bool?

    /// The most characters a barcode is read from: a PDF417 code holds at most about 1,850 text characters.
    public static let largest = 2048

    /// Reads `barcode` (surrounding white space ignored).
    public init(barcode: String) throws(Problem) {
        var reader = try Reader(barcode)
        guard try reader.take(1, "the format code") == "M" else {
            throw Problem(position: 1, reason: "not an IATA boarding pass (they start with M and the number of legs)")
        }
        guard let count = Int(try reader.take(1, "the number of legs")), (1...9).contains(count) else {
            throw Problem(position: 2, reason: "the number of legs is not a digit from 1 to 9")
        }
        let name = try reader.take(20, "the passenger's name")
        passenger = name.trimmingSpaces
        guard !passenger.isEmpty else { throw Problem(position: 3, reason: "the passenger's name is blank") }
        // The electronic ticket indicator (E); some carriers leave it out of short passes.
        _ = try reader.take(1, "the electronic ticket indicator")
        legs = []
        for index in 1...count {
            legs.append(try reader.leg(index, last: index == count))
        }
    }

    /// The barcode's characters, read forward; every read bounded by what is left.
    private struct Reader {
        let characters: [UInt8]
        var offset = 0

        init(_ text: String) throws(Problem) {
            let bytes = Array(text.utf8)
            var start = 0
            var end = bytes.count
            while start < end, Self.isWhite(bytes[start]) { start += 1 }
            while end > start, Self.isWhite(bytes[end - 1]) { end -= 1 }
            guard end - start <= BoardingPass.largest else {
                throw Problem(
                    position: BoardingPass.largest + 1,
                    reason: "longer than a boarding pass's barcode (\(BoardingPass.largest) characters at most)")
            }
            characters = Array(bytes[start..<end])
            if let bad = characters.firstIndex(where: { !(0x20...0x7E).contains($0) }) {
                throw Problem(
                    position: bad + 1, reason: "a character a boarding pass does not use (printable ASCII only)")
            }
        }

        /// Line breaks and tabs around the text; not spaces, which pad a barcode's last fields.
        private static func isWhite(_ byte: UInt8) -> Bool { (0x09...0x0D).contains(byte) }

        var left: Int { characters.count - offset }

        /// The next `count` characters, or a problem naming `what` when fewer are left.
        mutating func take(_ count: Int, _ what: String) throws(Problem) -> String {
            guard count <= left else {
                throw Problem(
                    position: offset + 1, reason: "the barcode ends before \(what) (\(count) characters, \(left) left)")
            }
            defer { offset += count }
            return String(decoding: characters[offset..<offset + count], as: UTF8.self)
        }

        /// The next `count` characters, or `nil` (nothing consumed) when the barcode has ended: the items after a
        /// last leg's date, which a carrier's short pass may leave out.
        mutating func optional(_ count: Int) -> String? {
            guard count <= left, left > 0 else {
                offset = characters.count
                return nil
            }
            defer { offset += count }
            return String(decoding: characters[offset..<offset + count], as: UTF8.self)
        }

        /// A leg's mandatory items, then its conditional ones stepped over.
        mutating func leg(_ index: Int, last: Bool) throws(Problem) -> Leg {
            let start = offset + 1
            let booking = try take(7, "leg \(index)'s booking reference").trimmingSpaces
            let origin = try take(3, "leg \(index)'s departure airport")
            let destination = try take(3, "leg \(index)'s arrival airport")
            for (code, position, what) in [(origin, start + 7, "departure"), (destination, start + 10, "arrival")]
            where !code.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) {
                throw Problem(
                    position: position, reason: "leg \(index)'s \(what) airport '\(code)' is not an IATA code")
            }
            let designator = try take(3, "leg \(index)'s carrier").trimmingSpaces
            guard (2...3).contains(designator.utf8.count),
                designator.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) })
            else {
                throw Problem(
                    position: start + 13, reason: "leg \(index)'s carrier '\(designator)' is not a designator")
            }
            // Four digits and an operational suffix letter or a space; some carriers write fewer digits.
            let flight = try take(5, "leg \(index)'s flight number")
            guard let number = Int(flight.trimmingSpaces.prefix { $0.isASCII && $0.isNumber }),
                (1...9999).contains(number)
            else {
                throw Problem(position: start + 16, reason: "leg \(index)'s flight number '\(flight)' is not a number")
            }
            let day = try take(3, "leg \(index)'s date").trimmingSpaces
            guard let dayOfYear = Int(day), (1...366).contains(dayOfYear),
                day.utf8.allSatisfy({ (0x30...0x39).contains($0) })
            else {
                throw Problem(
                    position: start + 21, reason: "leg \(index)'s date '\(day)' is not a day of the year (001–366)")
            }
            var leg = Leg(
                bookingReference: booking, origin: origin, destination: destination, designator: designator,
                number: number, dayOfYear: dayOfYear)
            // A short pass (a booking confirmation's) may end after the date.
            let rest: (compartment: String?, seat: String?, sequence: String?, status: String?, size: String?)
            if last {
                rest = (optional(1), optional(4), optional(5), optional(1), optional(2))
            } else {
                rest = (
                    try take(1, "leg \(index)'s class"), try take(4, "leg \(index)'s seat"),
                    try take(5, "leg \(index)'s check-in number"), try take(1, "leg \(index)'s passenger status"),
                    try take(2, "leg \(index)'s conditional size")
                )
            }
            leg.compartment = rest.compartment.map(\.trimmingSpaces).flatMap { $0.isEmpty ? nil : $0 }
            leg.seat = rest.seat.map(\.trimmingSpaces).flatMap(Self.seat)
            leg.sequence = rest.sequence.map(\.trimmingSpaces).flatMap { Int($0.prefix { $0.isASCII && $0.isNumber }) }
            if let size = rest.size {
                guard let count = Int(size, radix: 16) else {
                    throw Problem(
                        position: offset - 1, reason: "leg \(index)'s conditional size '\(size)' is not hexadecimal")
                }
                // The conditional items, read by nobody here. A last leg's may have lost its trailing spaces
                // (copied, or printed by a scanner): nothing after it is read, so it ends the barcode; before
                // another leg, a size past the end is the barcode's error.
                if last && count > left {
                    offset = characters.count
                    return leg
                }
                guard count <= left else {
                    throw Problem(
                        position: offset - 1,
                        reason: "leg \(index)'s conditional items are \(count) characters, only \(left) follow")
                }
                offset += count
            }
            return leg
        }

        /// `003A` → `3A`; a seat of letters only (`INF`, `GATE`) as written.
        private static func seat(_ text: String) -> String? {
            guard !text.isEmpty else { return nil }
            let digits = text.prefix { $0 == "0" }
            let rest = text.dropFirst(digits.count)
            return rest.isEmpty ? text : String(rest)
        }
    }
}

extension String {
    /// Without leading and trailing spaces (a BCBP field is padded with them).
    fileprivate var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " }),
            let last = scalars.lastIndex(where: { $0 != " " })
        else { return "" }
        return String(scalars[first...last])
    }
}
