/// Calendar text made safe to print for a person (docs/design.md §10: treat every calendar as a stranger's).
///
/// A summary, a TZID or a parser message can carry escape sequences: colours, cursor moves, OSC 52 (which writes
/// the clipboard), window titles. On a terminal they act instead of showing. Control characters become the
/// visible symbols of Unicode's Control Pictures block (ESC is `␛`, BEL `␇`), C1 controls and the bidirectional
/// overrides that reorder what a reader sees become `�`. JSON output needs none of this: it escapes them itself.
public enum TerminalText {
    /// `text` with nothing a terminal would act on; newlines and tabs are kept for multi-line reports.
    public static func safe(_ text: String, keepingLines: Bool = true) -> String {
        guard text.unicodeScalars.contains(where: { needsReplacing($0, keepingLines: keepingLines) }) else {
            return text
        }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsReplacing(scalar, keepingLines: keepingLines) else {
                result.append(scalar)
                continue
            }
            switch scalar.value {
            case 0..<0x20: result.append(Unicode.Scalar(0x2400 + scalar.value)!)
            case 0x7F: result.append("\u{2421}")
            default: result.append("\u{FFFD}")
            }
        }
        return String(result)
    }

    /// What a status bar would act on in text it shows.
    public enum Markup: Sendable {
        /// `<`, `>`, `&`: waybar's text and tooltip, i3blocks with `markup=pango`, desktop notifications.
        case pango
        /// `%{…}` tags (colours, and `%{A1:command:}`, which runs a command on a click).
        case polybar
    }

    /// `text` shown as it is by a reader of `markup`. Judged scalar by scalar, as the bars read bytes: a `%` or `<`
    /// that a prepend mark (U+0600) starts, or a combining mark ends, is one Swift `Character` unequal to `"%"`,
    /// and still the byte the bar obeys. polybar's `%%` escape is not reliable across versions, so every `%` is
    /// followed by a zero-width space, and no tag can begin.
    public static func inert(_ text: String, for markup: Markup) -> String {
        // These are ASCII: a text without their bytes has none of their scalars, and is shown as it is.
        let special: [UInt8] =
            markup == .pango ? [UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">")] : [UInt8(ascii: "%")]
        guard text.utf8.contains(where: special.contains) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch (markup, scalar) {
            case (.pango, "&"): result.append(contentsOf: "&amp;".unicodeScalars)
            case (.pango, "<"): result.append(contentsOf: "&lt;".unicodeScalars)
            case (.pango, ">"): result.append(contentsOf: "&gt;".unicodeScalars)
            case (.polybar, "%"): result.append(contentsOf: "%\u{200B}".unicodeScalars)
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    private static func needsReplacing(_ scalar: Unicode.Scalar, keepingLines: Bool) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: !keepingLines
        case 0..<0x20, 0x7F, 0x80...0x9F: true
        // LRE, RLE, PDF, LRO, RLO and the isolates LRI, RLI, FSI, PDI.
        case 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
