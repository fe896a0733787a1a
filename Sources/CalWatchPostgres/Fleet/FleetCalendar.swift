public import CalWatchCore
import Foundation

/// One calendar a fleet shares out, as its row in `calendars` has it: where it is read from, and who holds it.
/// A CalDAV account names the program that prints its password (run where the watcher runs), never the password.
public struct FleetCalendar: Sendable, Hashable {
    public enum Source: Sendable, Hashable {
        /// A file or folder (vdir, Radicale collection, CalDAV export) on storage every watcher reaches.
        case path(String)
        /// An ICS feed, polled every `every` seconds.
        case feed(url: String, every: Int64)
        /// A CalDAV account or collection.
        case caldav(url: String, username: String?, passwordCommand: [String]?, every: Int64)

        /// `path`, `feed` or `caldav`: the row's `kind`.
        public var kind: String {
            switch self {
            case .path: "path"
            case .feed: "feed"
            case .caldav: "caldav"
            }
        }

        /// The path or the URL (without a password: `fleet add` refuses one in it).
        public var address: String {
            switch self {
            case .path(let path): path
            case .feed(let url, _), .caldav(let url, _, _, _): url
            }
        }

        /// How a watcher reads it as a server's calendar; `nil` for a path.
        public func feed(named name: String) -> FeedSettings? {
            switch self {
            case .path: nil
            case .feed(let url, let every): FeedSettings(address: url, kind: .ics, name: name, every: every)
            case .caldav(let url, let username, let command, let every):
                FeedSettings(
                    address: url, kind: .caldav(username: username, passwordCommand: command), name: nil, every: every)
            }
        }
    }

    public var name: String
    public var source: Source
    /// Whose calendar it is: their address, which tells their own attendee entries apart (as `me:` does).
    public var person: String?

    public init(name: String, source: Source, person: String? = nil) {
        self.name = name
        self.source = source
        self.person = person
    }

    /// Why `name` cannot name a calendar of a fleet, or `nil`: it is kept in every event's record (`fleet:<name>`)
    /// and shown in status lines, so it is short, printable and has no `/` or spaces at its ends.
    public static func problem(withName name: String) -> String? {
        if name.isEmpty { return "a calendar needs a name" }
        if name.unicodeScalars.count > 200 { return "a calendar's name is at most 200 characters" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{7F}" }) {
            return "a calendar's name holds no control characters"
        }
        if name.trimmingCharacters(in: .whitespaces) != name {
            return "a calendar's name neither starts nor ends with a space"
        }
        return nil
    }
}
