import Foundation

/// What the accounts' converters (`GraphEvent`, `GoogleEvent`) need to write iCalendar text from a service's JSON:
/// values escaped, parameters quoted, lines folded, times in the basic form.
enum ICalendarLines {
    /// The most of an event's text kept (a description pasted whole from a long mail).
    static let textLimit = 32 << 10

    /// `2026-11-29T10:00:00Z` (or with fractions) as `20261129T100000Z`.
    static func utc(_ text: String) -> String? {
        let digits = text.prefix(19).filter(\.isNumber)
        return digits.count == 14 ? digits.prefix(8) + "T" + digits.suffix(6) + "Z" : nil
    }

    static func isWebAddress(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return (lowered.hasPrefix("https://") || lowered.hasPrefix("http://")) && text.count < 4096
    }

    /// `;CN="…"` for a name, quoted, without the characters a parameter cannot hold.
    static func name(_ name: String?) -> String {
        guard let name, !name.isEmpty else { return "" }
        let clean = name.unicodeScalars.filter { $0 != "\"" && !CharacterSet.controlCharacters.contains($0) }
        return ";CN=\"" + String(String.UnicodeScalarView(clean)).prefix(200) + "\""
    }

    /// A TEXT value escaped (RFC 5545 3.3.11), control characters other than line ends left out.
    static func text(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case ";": result += "\\;"
            case ",": result += "\\,"
            case "\n": result += "\\n"
            case "\r": break
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { continue }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A content line folded at 75 octets (RFC 5545 3.1), never inside a character.
    static func folded(_ line: String) -> String {
        guard line.utf8.count > 75 else { return line }
        var result = ""
        var width = 0
        for character in line {
            let size = character.utf8.count
            if width + size > 75 {
                result += "\r\n "
                width = 1
            }
            result.append(character)
            width += size
        }
        return result
    }
}
