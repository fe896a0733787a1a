import Foundation

/// A text cut into words, numbers and the symbols between them, for rules that look at a word's neighbours
/// ("BA 286", "FRA → JFK", "Terminal 2E", "Room 101").
struct TextTokens {
    struct Token {
        enum Kind: Equatable {
            /// Letters only.
            case word
            /// Digits only.
            case digits
            /// Letters and digits: `BA286`, `U2`, `14A`.
            case mixed
            /// A dash of any kind: `-`, `–`, `—`.
            case dash
            /// An arrow (`→`, `->`, `>`, `⇒`, `»`) or a plane (`✈`, `🛫`): a route's separator.
            case arrow
            case slash
            case open, close, colon
            /// `.`, `,`, `;`, `!`, `?`
            case punctuation
            case other
        }

        var text: Substring
        var kind: Kind
        /// Whether white space came before it.
        var spaceBefore: Bool
        /// The text lower case, without accents (`Flüge` → `fluge`), worked out once: rules compare it often.
        let folded: String

        init(text: Substring, kind: Kind, spaceBefore: Bool) {
            self.text = text
            self.kind = kind
            self.spaceBefore = spaceBefore
            folded = kind == .word || kind == .mixed ? AirportDatabase.fold(String(text)) : String(text)
        }
        var isUpper: Bool { text.allSatisfy { !$0.isLetter || $0.isUppercase } }
        var isPlane: Bool { text.first.map { Self.planes.contains($0) } ?? false }

        static let planes: Set<Character> = ["✈", "✈️", "✈︎", "🛫", "🛬", "🛩", "🛩️"]
    }

    let tokens: [Token]

    /// The text with its links (`https://…`, `www.…` up to the next space) blanked out: a meeting link's
    /// `…?pwd=Z292` is not flight Z2 92.
    static func withoutLinks(_ text: String) -> String {
        // Only text with a slash or "www." can hold a link; checked on bytes, as most summaries have neither.
        let bytes = text.utf8
        guard bytes.contains(UInt8(ascii: "/")) || bytes.contains(UInt8(ascii: "w")) else { return text }
        return text.split(separator: " ", omittingEmptySubsequences: false).map { word in
            guard word.utf8.contains(UInt8(ascii: "/")) || word.utf8.contains(UInt8(ascii: ".")) else {
                return String(word)
            }
            let lower = word.lowercased()
            return lower.contains("://") || lower.hasPrefix("www.") ? "" : String(word)
        }.joined(separator: " ")
    }

    init(_ text: String) {
        var tokens: [Token] = []
        var index = text.startIndex
        var space = false
        while index < text.endIndex {
            let character = text[index]
            if character.isWhitespace {
                space = true
                index = text.index(after: index)
                continue
            }
            let letter = character.isLetter
            if letter || character.isNumber {
                var end = text.index(after: index)
                // Some ideographs are numbers too (京 is 10¹⁶): they count as letters, so "北京" is a word.
                var letters = letter
                var digits = !letter
                var ideographic = letter && !character.isASCII && Self.isIdeographic(character)
                while end < text.endIndex {
                    let next = text[end]
                    if next.isLetter {
                        // "羽田HND", "東京(HND)行き": a code glued to a name in another script is a word of its own.
                        let nextIdeographic = !next.isASCII && Self.isIdeographic(next)
                        if letters && nextIdeographic != ideographic { break }
                        ideographic = nextIdeographic
                        letters = true
                    } else if next.isNumber {
                        digits = true
                    } else {
                        break
                    }
                    end = text.index(after: end)
                }
                let kind: Token.Kind = letters && digits ? .mixed : letters ? .word : .digits
                tokens.append(Token(text: text[index..<end], kind: kind, spaceBefore: space))
                index = end
                space = false
                continue
            }
            let next = text.index(after: index)
            var kind: Token.Kind
            switch character {
            // `〜` and `～` join a route's two ends in Japanese and Chinese ("羽田〜伊丹").
            case "-", "‐", "‑", "‒", "–", "—", "―", "−", "~", "〜", "～", "⁓": kind = .dash
            case "→", "⟶", "➔", "➜", "➝", "➞", "➙", "➛", "➟", "➠", "➡", "➡️", "⮕", "⇒", "⇨", "⇾", "⇢", "↦", "↠", "⭢",
                "🡒", "🡆", "🠖", "▶", "▶️", "►", ">", "＞", "»", "›", "》", "〉", "⟹":
                kind = .arrow
            case "/": kind = .slash
            case "(", "[", "{": kind = .open
            case ")", "]", "}": kind = .close
            case ":", "：": kind = .colon
            case ".", ",", ";", "!", "?": kind = .punctuation
            default: kind = Token.Kind.other
            }
            if Token.planes.contains(character) { kind = .arrow }
            // `->` and `=>` are one arrow.
            if kind == .arrow, !space, let last = tokens.last, last.kind == .dash || last.text == "=" {
                tokens.removeLast()
                let start = last.text.startIndex
                tokens.append(Token(text: text[start..<next], kind: .arrow, spaceBefore: last.spaceBefore))
            } else {
                tokens.append(Token(text: text[index..<next], kind: kind, spaceBefore: space))
            }
            index = next
            space = false
        }
        self.tokens = tokens
    }

    /// Han, kana and hangul: scripts written without spaces, so a Latin code beside them is glued to the name.
    static func isIdeographic(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first?.value, scalar >= 0x1100 else { return false }
        return (0x3040...0x30FF).contains(scalar) || (0x3400...0x9FFF).contains(scalar)
            || (0xAC00...0xD7AF).contains(scalar) || (0xF900...0xFAFF).contains(scalar)
            || (0xFF66...0xFF9F).contains(scalar) || (0x1100...0x11FF).contains(scalar)
    }

    var count: Int { tokens.count }
    subscript(index: Int) -> Token { tokens[index] }

    /// The token at `index`, or `nil` past either end.
    func at(_ index: Int) -> Token? { tokens.indices.contains(index) ? tokens[index] : nil }
}

/// `Key: value` lines of a description, keys folded (`Flight number`, `Booking reference`, `Terminal`).
struct LabelledFields {
    private(set) var fields: [(key: String, value: String)] = []

    init(_ text: String) {
        guard text.unicodeScalars.contains(where: { $0 == ":" || $0 == "：" }) else { return }
        for line in text.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(where: { $0 == ":" || $0 == "：" }) else { continue }
            // "• Meeting ID", "- Seat": list bullets are not part of the label.
            let key = AirportDatabase.fold(
                String(line[..<colon]).trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "•*-–·>"))))
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty, key.count <= 40, !value.isEmpty, !value.hasPrefix("//") else { continue }
            fields.append((key, value))
        }
    }

    /// The value of the first field whose key is one of `keys`.
    func value(_ keys: Set<String>) -> String? { fields.first { keys.contains($0.key) }?.value }
}
