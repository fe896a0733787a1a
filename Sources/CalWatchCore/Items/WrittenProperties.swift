/// Properties of one component read straight from its text, for what libical loses when it parses: it drops an
/// RRULE's year-0 UNTIL, wraps a BYDAY ordinal, and keeps only the first 500 values of a comma-separated EXDATE
/// or RDATE. The parser compares and takes these where libical fell short.
enum WrittenProperties {
    /// One property line, unfolded: its parameters (`TZID=Europe/Berlin;VALUE=DATE`) and its value.
    struct Line {
        var parameters: [(name: String, value: String)]
        var value: String

        /// The `TZID` parameter as a time reference (quotes removed), else floating.
        var reference: TimeReference {
            guard let tzid = parameters.first(where: { $0.name == "TZID" })?.value, !tzid.isEmpty else {
                return .floating
            }
            return .zone(tzid)
        }
    }

    /// The lines of property `name` (upper case) in `bytes`, in order.
    static func named(_ name: String, in bytes: ArraySlice<UInt8>) -> [Line] {
        let prefix = Array(name.utf8)
        var found: [Line] = []
        var line: [UInt8] = []
        func finish() {
            defer { line.removeAll(keepingCapacity: true) }
            guard line.count > prefix.count, line.prefix(prefix.count).map({ $0 & 0xDF }) == prefix,
                line[prefix.count] == UInt8(ascii: ":") || line[prefix.count] == UInt8(ascii: ";")
            else { return }
            // The value starts at the first colon outside a quoted parameter value.
            var quoted = false
            var colon: Int?
            for index in prefix.count..<line.count {
                if line[index] == UInt8(ascii: "\"") { quoted.toggle() }
                if line[index] == UInt8(ascii: ":") && !quoted {
                    colon = index
                    break
                }
            }
            guard let colon else { return }
            let parameters = String(decoding: line[(prefix.count)..<colon], as: UTF8.self).split(separator: ";")
                .compactMap { part -> (String, String)? in
                    let pieces = part.split(separator: "=", maxSplits: 1)
                    guard pieces.count == 2 else { return nil }
                    return (pieces[0].uppercased(), pieces[1].trimmingQuotes)
                }
            found.append(Line(parameters: parameters, value: String(decoding: line[(colon + 1)...], as: UTF8.self)))
        }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == 10 || byte == 13 {
                var next = index + 1
                if byte == 13, next < bytes.endIndex, bytes[next] == 10 { next += 1 }
                // A folded line goes on after a space or tab at the start of the next one.
                if next < bytes.endIndex, bytes[next] == 32 || bytes[next] == 9 {
                    index = next + 1
                    continue
                }
                finish()
                index = next
                continue
            }
            line.append(byte)
            index += 1
        }
        finish()
        return found
    }
}

extension Substring {
    fileprivate var trimmingQuotes: String {
        hasPrefix("\"") && hasSuffix("\"") && count >= 2 ? String(dropFirst().dropLast()) : String(self)
    }
}
