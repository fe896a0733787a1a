import Yams

/// One value of config.yml and where it stands, for a part read outside the core (a sink kind) to read it with the
/// same problems, lines and suggestions as the rest of the file. Each reading notes what is wrong on the file's
/// list of problems and returns `nil`; the reading goes on, so `calwatch check` shows every problem at once.
public struct ConfigurationValue {
    let node: Node
    /// The key path it stands at, such as `sinks[2].url`.
    public let path: String
    let reader: ConfigurationReader

    /// Notes a problem with this value: `message` follows its key path, as in "sinks[2].url: message".
    public func note(_ message: String) {
        reader.note(node, path, message)
    }

    /// The value as text without noting anything: `nil` for a list, a section or nothing.
    public var text: String? {
        guard case .scalar(let scalar) = node, node.null == nil else { return nil }
        return scalar.string
    }

    /// Whether it is a single value (not a list or a section).
    public var isScalar: Bool {
        if case .scalar = node { true } else { false }
    }

    /// `true` or `false` when it is written as one, without noting anything.
    public var boolIfWritten: Bool? { isScalar ? node.bool : nil }

    public func string() -> String? { reader.string(node, at: path) }
    public func bool() -> Bool? { reader.bool(node, at: path) }
    public func integer(in range: ClosedRange<Int>) -> Int? { reader.integer(node, at: path, in: range) }

    /// A duration (`45s`, `30m`, `1h30m`) in seconds, no longer than `atMost`.
    public func duration(positive: Bool = false, atMost: Int64) -> Int64? {
        reader.duration(node, at: path, positive: positive, atMost: atMost)
    }

    public func choice<Choice: RawRepresentable & CaseIterable>(of type: Choice.Type) -> Choice?
    where Choice.RawValue == String {
        reader.choice(node, at: path, of: type)
    }

    /// A path with `~` and `$VARS` expanded, relative to the configuration's folder.
    public func filePath() -> String? { reader.path(node, at: path) }

    /// An http or https address.
    public func webAddress() -> String? {
        guard let url = string(), reader.isWebAddress(url, node: node, at: path) else { return nil }
        return url
    }

    /// A program and its arguments as a list, never one text for a shell; a relative program is found beside the
    /// configuration. `example` shows a right one, `empty` says what to write when it is empty.
    public func argv(example: String, empty: String) -> [String]? {
        reader.readArgv(node, at: path, example: example, empty: empty)
    }

    /// The items of a list; a single value counts as a list of one.
    public func list() -> [ConfigurationValue] {
        reader.list(node, at: path).map { ConfigurationValue(node: $0.node, path: $0.key, reader: reader) }
    }

    /// The value as a section of `known` keys (`nil`: any key); unknown keys are noted with a suggestion.
    public func section(known: [String]?) -> ConfigurationSection? {
        guard let keys = reader.mapping(node, at: path, known: known) else { return nil }
        return ConfigurationSection(node: node, keys: keys, path: path, reader: reader)
    }

    /// A loopback address written as the earlier spelling of `serve: listen:` (a webhook's `answers: listen:`):
    /// it gives the local server its address when `serve:` does not, and must agree with it when it does. `false`
    /// when it is refused (and noted).
    public func offerServeListen() -> Bool {
        guard let listen = string() else { return false }
        guard let address = ServeSettings.loopback(listen) else {
            note(ConfigurationReader.notLoopback(listen))
            return false
        }
        reader.earlierServeListens.append((node, path, address))
        return true
    }
}

/// A section of config.yml (key: value pairs) and where it stands: a sink's entry, or a section inside one.
public struct ConfigurationSection {
    let node: Node
    let keys: [String: (key: Node, value: Node)]
    /// The key path it stands at, such as `sinks[2]`.
    public let path: String
    let reader: ConfigurationReader

    /// The value of `key`, when the section has it.
    public subscript(key: String) -> ConfigurationValue? {
        keys[key].map { ConfigurationValue(node: $0.value, path: path + "." + key, reader: reader) }
    }

    /// The keys the section has, in order.
    public var names: [String] { keys.keys.sorted() }

    /// Notes a problem with the section as a whole ("sinks[2]: has no `url:`; …").
    public func note(_ message: String) {
        reader.note(node, path, message)
    }

    /// Notes a problem with a key of the section (at the key's own line).
    public func note(key: String, _ message: String) {
        reader.note(keys[key]?.key ?? node, path + "." + key, message)
    }

    /// `on`, `kinds`, `offsets` and `calendars`: which events a sink takes.
    public func filters(into filters: inout some EventFilters) {
        reader.readFilters(keys, at: path, into: &filters)
    }
}
