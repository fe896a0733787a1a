import Foundation

/// One kind of sink (`type: jsonl`, `type: webhook`, …) as config.yml writes it: its `type:` name, the keys of its
/// entry, and its settings read from that entry. The runtime's `SinkDriver` adds how it opens, checks itself and
/// explains a delivery; each kind lives beside its sink, and the executable hands the list to the loader
/// (`SinkKinds`), so the core names none of them.
public protocol SinkKind: Sendable, Hashable {
    /// What `type:` selects it.
    static var type: String { get }
    /// The keys its entry may have besides `type` and `name`; any other is refused with a suggestion.
    static var keys: [String] { get }
    /// Reads the settings from the sink's entry, noting each problem on it (with its line); `nil` when the entry
    /// cannot be used.
    init?(_ entry: ConfigurationSection)
    /// The sink's name without `name:`: its kind and where it writes, never a secret.
    var defaultName: String { get }
    /// What tells two unnamed sinks of the same default name apart (a webhook's whole address): a short hash of it
    /// is added to both names. `nil`: two such sinks need a `name:`.
    var distinction: String? { get }
    /// Once the whole file is read: what the settings take from the rest of it (`instance:`, `serve:`), and the
    /// problems only the whole file shows, noted on `entry`.
    mutating func settle(in configuration: Configuration, entry: ConfigurationSection)
}

extension SinkKind {
    public var distinction: String? { nil }
    public func settle(in configuration: Configuration, entry: ConfigurationSection) {}
}

/// One configured sink: its name and its kind's settings.
public struct SinkSettings: Sendable, Hashable {
    /// The sink's cursor name in the journal and its name in messages. Renaming a sink starts it from the
    /// beginning of what the journal holds.
    public var name: String
    public var kind: any SinkKind

    public init(name: String, kind: any SinkKind) {
        self.name = name
        self.kind = kind
    }

    public static func == (left: SinkSettings, right: SinkSettings) -> Bool {
        left.name == right.name && AnyHashable(left.kind) == AnyHashable(right.kind)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(AnyHashable(kind))
    }
}

/// The kinds of sink a program offers, handed by the executable to `ConfigurationLoader`.
public struct SinkKinds: Sendable {
    public var kinds: [any SinkKind.Type]
    /// What a configuration without `sinks:` delivers to.
    public var standard: [SinkSettings]

    public init(_ kinds: [any SinkKind.Type], standard: [SinkSettings]) {
        self.kinds = kinds
        self.standard = standard
    }

    /// The kind `type:` names.
    public func kind(_ type: String) -> (any SinkKind.Type)? {
        kinds.first { $0.type == type }
    }

    /// These and more.
    public static func + (kinds: SinkKinds, more: [any SinkKind.Type]) -> SinkKinds {
        SinkKinds(kinds.kinds + more, standard: kinds.standard)
    }
}
