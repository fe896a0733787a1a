import Foundation

/// One kind of calendar on a server as a `calendars:` entry writes it (`url:` for an ICS feed, `caldav:` for a
/// CalDAV account): the key that holds its address, the other keys of its entry, and its settings read from that
/// entry. The remote module's `SourceDriver` adds how it is fetched into a folder of calwatch's cache, which the
/// rest of calwatch reads like any vdir; each kind lives beside its client, and the executable hands the list to
/// the loader (`SourceKinds`), so the core names none of them. A path in `calendars:` is not a kind: it is what
/// every kind ends in.
public protocol SourceKind: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The key that holds the address and says what kind the entry is (`url`, `caldav`).
    static var type: String { get }
    /// What the kind is called in messages ("an ICS feed", "CalDAV").
    static var title: String { get }
    /// The keys its entry may have besides `type`, `name` and `every`; any other is refused with a suggestion.
    static var keys: [String] { get }
    /// The schemes its addresses may have (`https`, `http`, `webcal`).
    static var schemes: [String] { get }
    /// An address of the kind, for messages that ask for one.
    static var example: String { get }
    /// Reads the settings from the entry, whose `address` (the value of `type`) has one of `schemes`, noting each
    /// problem on the entry (with its line); `nil` when the entry cannot be used.
    init?(address: String, entry: ConfigurationSection)
    /// The address as written. It may hold a password: messages show `SourceSettings.shownAddress`.
    var address: String { get }
    /// What makes two entries the same calendar, kept in one cache folder (the address as the client sends it, and
    /// the account): a second entry with the same is refused, since two pollers would write one folder.
    var identity: String { get }
}

/// Settings are printed whole by reflection (swift-service-lifecycle logs each service at debug level): with the
/// address's password left out.
extension SourceKind {
    public var description: String { "\(Self.type): \(ConnectionString(address).redacted)" }
    public var debugDescription: String { description }
}

/// One calendar on a server: its kind's settings, its name and how often it is fetched.
public struct SourceSettings: Sendable, Hashable {
    public var kind: any SourceKind
    /// The calendar's name in events and filters; the server's own when `nil` (for CalDAV, each collection's).
    public var name: String?
    /// Seconds between polls.
    public var every: Int64

    public init(_ kind: any SourceKind, name: String? = nil, every: Int64 = 600) {
        self.kind = kind
        self.name = name
        self.every = every
    }

    /// The address, as written.
    public var address: String { kind.address }

    /// The address without a password, for every message and log.
    public var shownAddress: String { ConnectionString(address).redacted }

    /// Whether the address is this machine (`localhost`, `127.0.0.1`, `[::1]`), which may be polled more often
    /// than once a minute.
    public var isLoopback: Bool {
        guard let host = URLComponents(string: address)?.host?.lowercased() else { return false }
        return ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host)
    }

    public static func == (left: SourceSettings, right: SourceSettings) -> Bool {
        left.name == right.name && left.every == right.every && AnyHashable(left.kind) == AnyHashable(right.kind)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(every)
        hasher.combine(AnyHashable(kind))
    }
}

/// Settings are printed whole by reflection (swift-service-lifecycle logs each service at debug level): without
/// their passwords.
extension SourceSettings: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "SourceSettings(\(shownAddress))" }
    public var debugDescription: String { description }
}

/// The kinds of calendar on a server a program offers, handed by the executable to `ConfigurationLoader`.
public struct SourceKinds: Sendable {
    public var kinds: [any SourceKind.Type]

    public init(_ kinds: [any SourceKind.Type]) {
        self.kinds = kinds
    }

    /// No calendars on servers: a `calendars:` entry with an address is refused.
    public static let none = SourceKinds([])

    /// These and more.
    public static func + (kinds: SourceKinds, more: [any SourceKind.Type]) -> SourceKinds {
        SourceKinds(kinds.kinds + more)
    }

    /// The kind whose entries are written under `accounts:` rather than `calendars:` (a service signed in to).
    static let accountType = "account"

    /// The kinds a `calendars:` entry may be.
    var calendarKinds: [any SourceKind.Type] { kinds.filter { $0.type != Self.accountType } }

    /// The kind of `accounts:` entries, when the program reads accounts.
    var accountKind: (any SourceKind.Type)? { kinds.first { $0.type == Self.accountType } }

    /// "`url:` or `caldav:`".
    var typesShown: String { calendarKinds.map { "`\($0.type):`" }.listedWithOr }
}

extension [String] {
    /// "a", "a or b", "a, b or c".
    var listedWithOr: String {
        count < 2 ? joined() : dropLast().joined(separator: ", ") + " or " + last!
    }
}
