/// The longest property calwatch hands to libical.
///
/// libical's line reader is quadratic in the length of one unfolded property: 16 MiB took 58 s, during which a
/// `watch` daemon sends nothing. Nothing calwatch reads is that long (an Outlook HTML description is tens of
/// kilobytes; inline attachments are the usual giants and calwatch never reads them), so a longer property is left
/// out, with a warning naming its line, and the rest of its item is still read.
enum PropertyLengthLimit {
    /// 1 MiB unfolded, folds included: libical reads that in about a fifth of a second.
    static let maximumBytes = 1 << 20

    /// Removes every property (a line with its folded continuations) longer than `maximumBytes` from `text`.
    static func removeLongProperties(from text: inout [UInt8], limit: Int = maximumBytes) -> [ParseProblem] {
        // Finding them is one pass that copies nothing; only a text that has one is rebuilt.
        var removals: [(range: Range<Int>, line: Int)] = []
        var propertyStart = 0
        var propertyLine = 1
        var line = 1
        var start = 0
        let count = text.count
        text.withUnsafeBufferPointer { bytes in
            while start < count {
                var end = start
                while end < count && bytes[end] != 10 { end += 1 }
                let next = min(end + 1, count)
                let continues = start > 0 && (bytes[start] == 32 || bytes[start] == 9)
                if !continues {
                    if start - propertyStart > limit { removals.append((propertyStart..<start, propertyLine)) }
                    propertyStart = start
                    propertyLine = line
                }
                line += 1
                start = next
            }
            if count - propertyStart > limit { removals.append((propertyStart..<count, propertyLine)) }
        }
        guard !removals.isEmpty else { return [] }
        var problems: [ParseProblem] = []
        var kept: [UInt8] = []
        kept.reserveCapacity(count - removals.reduce(0) { $0 + $1.range.count })
        var position = 0
        for removal in removals {
            kept += text[position..<removal.range.lowerBound]
            // An empty line in its place keeps every later line number as written.
            let lines = text[removal.range].reduce(0) { $1 == 10 ? $0 + 1 : $0 }
            kept += repeatElement(10, count: lines)
            position = removal.range.upperBound
            problems.append(
                ParseProblem(
                    line: removal.line,
                    message: "\(name(of: text[removal.range])) is \(megabytes(removal.range.count)) long and is left "
                        + "out: calwatch reads properties up to 1 MiB. The rest of the item is read; link a large "
                        + "attachment with ATTACH;VALUE=URI instead of writing it inline."))
        }
        kept += text[position...]
        text = kept
        return problems
    }

    /// The property's name as written (up to its first `;` or `:`), at most 40 characters.
    private static func name(of bytes: ArraySlice<UInt8>) -> String {
        let head = bytes.prefix(80).prefix { $0 != 59 && $0 != 58 && $0 != 13 && $0 != 10 }
        let name = String(decoding: head.prefix(40), as: UTF8.self).uppercased()
        return name.isEmpty || !name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" })
            ? "a property" : "the \(name) property"
    }

    private static func megabytes(_ count: Int) -> String {
        let tenths = (count * 10 + (1 << 19)) >> 20
        return "\(tenths / 10).\(tenths % 10) MiB"
    }
}
