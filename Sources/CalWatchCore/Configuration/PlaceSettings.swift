import Foundation

/// A place of the user's (`places:` in config.yml): where the events whose LOCATION names it are, how long the way
/// there takes, and the hours the user is there when nothing else says.
public struct PlaceSettings: Sendable, Hashable {
    public var name: String
    public var at: GeoPoint?
    /// LOCATION patterns, compared whole and without regard to case; `*` stands for any text (`HQ *`).
    public var match: [String] = []
    /// A fixed time for the way there, from anywhere (seconds).
    public var travelTime: Int64?
    /// Where the user is at these clock hours (minutes after midnight, `from` to `to`, across midnight when `to` is
    /// earlier), when no event says otherwise.
    public var hours: ClockHours?
    /// Time to get ready before leaving for an event here (seconds), unless its rule says.
    public var prep: Int64?

    /// Clock hours, `18:00-08:00`.
    public struct ClockHours: Sendable, Hashable {
        public var from: Int
        public var to: Int

        /// Whether `minute` (after midnight) lies in the hours.
        public func contains(_ minute: Int) -> Bool {
            from <= to ? (from <= minute && minute < to) : (minute >= from || minute < to)
        }
    }

    public init(name: String) {
        self.name = name
    }

    /// Whether `text` (a LOCATION, or the title of Apple's structured location) names this place: its name, or one
    /// of its patterns.
    public func matches(_ text: String) -> Bool {
        let subject = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard !subject.isEmpty else { return false }
        return subject == name.lowercased() || match.contains { Self.glob($0.lowercased(), matches: subject) }
    }

    /// A pattern whose `*` stands for any text, compared with the whole of `text`.
    static func glob(_ pattern: String, matches text: String) -> Bool {
        let pieces = pattern.split(separator: "*", omittingEmptySubsequences: false)
        guard let head = pieces.first, let tail = pieces.last, pieces.count > 1 else { return pattern == text }
        guard head.count + tail.count <= text.count, text.hasPrefix(head), text.hasSuffix(tail) else { return false }
        var rest = text.dropFirst(head.count).dropLast(tail.count)
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let found = rest.range(of: piece) else { return false }
            rest = rest[found.upperBound...]
        }
        return true
    }
}
