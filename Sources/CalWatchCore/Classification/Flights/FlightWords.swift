/// The words the flight scan reads, as data (`flight-words.txt`, checked against the manifest like the airport
/// tables): flight words per language, words and phrases that veto, labels of booking exports, words that join a
/// route. A new language or producer is a line in the file, not a change to `FlightClassifier`. Each table's use is
/// documented where `FlightClassifier` loads it. Without the file (refused by its checksum, or missing) the tables
/// are empty and `calwatch check` says why.
final class FlightWords: Sendable {
    static let shared = FlightWords(ReferenceData.text("flight-words"))

    /// Each table's entries in the file's order: the word or phrase, and what it means where the table says.
    private let tables: [String: [(entry: String, meaning: String?)]]

    init(_ text: String?) {
        var tables: [String: [(entry: String, meaning: String?)]] = [:]
        for line in (text ?? "").split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false)
            guard fields.count == 2 || fields.count == 3, !fields[0].isEmpty, !fields[1].isEmpty else { continue }
            tables[String(fields[0]), default: []].append(
                (String(fields[1]), fields.count == 3 ? String(fields[2]) : nil))
        }
        self.tables = tables
    }

    /// `table|word` lines.
    func set(_ table: String) -> Set<String> { Set((tables[table] ?? []).map(\.entry)) }

    /// `table|word` lines, in the file's order.
    func list(_ table: String) -> [String] { (tables[table] ?? []).map(\.entry) }

    /// `table|word|meaning` lines: the word to what it means.
    func map(_ table: String) -> [String: String] {
        Dictionary((tables[table] ?? []).compactMap { row in row.meaning.map { (row.entry, $0) } }) { first, _ in first
        }
    }

    /// `table|first second|meaning` lines: two-word phrases, in the file's order (the first that matches wins).
    func phrases(_ table: String) -> [(String, String, String)] {
        (tables[table] ?? []).compactMap { row in
            let words = row.entry.split(separator: " ")
            guard words.count == 2, let meaning = row.meaning else { return nil }
            return (String(words[0]), String(words[1]), meaning)
        }
    }

    /// `table|words…|strong` or `…|weak` lines: word sequences with a flag, in the file's order.
    func wordLists(_ table: String) -> [(words: [String], strong: Bool)] {
        (tables[table] ?? []).map { row in (row.entry.split(separator: " ").map(String.init), row.meaning == "strong") }
    }
}
