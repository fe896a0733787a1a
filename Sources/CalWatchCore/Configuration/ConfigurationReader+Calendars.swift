import Foundation
import Yams

/// `calendars:` (paths, and entries on servers read by their kinds), `fleet:`, and the programs that print passwords.
extension ConfigurationReader {
    /// `calendars:`: paths, and calendars on servers each read by its kind. A calendar on a server named twice is
    /// refused: two pollers would write one cache folder.
    func readCalendars(_ node: Node, into configuration: inout Configuration) {
        configuration.calendars = []
        // Each calendar on a server by its kind and identity: the entry that named it first.
        var servers: [String: String] = [:]
        for item in list(node, at: "calendars") {
            guard case .mapping = item.node else {
                if let path = path(item.node, at: item.key) { configuration.calendars.append(path) }
                continue
            }
            guard let source = readSource(item.node, at: item.key) else { continue }
            let identity = type(of: source.kind).type + "\n" + source.kind.identity
            if let first = servers[identity] {
                note(
                    item.node, item.key,
                    "is the same calendar as \(first) (one cache folder cannot keep it twice); keep one")
            } else {
                servers[identity] = item.key
                configuration.sources.append(source)
            }
        }
    }

    /// `accounts:`: calendar services signed in to (Microsoft 365, Google), each read by the kind whose `type` is
    /// `account` and added to the calendars on servers, so rules, `why`, the sinks and the fleet see their calendars
    /// like any other. Two accounts with one name are refused: the name is their calendars' prefix.
    func readAccounts(_ node: Node, into configuration: inout Configuration) {
        let kind = sourceKinds.accountKind
        var names: [String: String] = [:]
        for item in list(node, at: "accounts") {
            guard let kind else {
                note(item.node, item.key, "is an account, which this program does not read")
                continue
            }
            guard let keys = mapping(item.node, at: item.key, known: ["name", "every"] + kind.keys) else { continue }
            let entry = ConfigurationSection(node: item.node, keys: keys, path: item.key, reader: self)
            guard let (_, nameNode) = keys["name"] else {
                note(
                    item.node, item.key,
                    "has no `name:`; name the account, such as `name: work` (its calendars "
                        + "are then work/Calendar, …)")
                continue
            }
            guard let name = string(nameNode, at: item.key + ".name") else { continue }
            guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) })
            else {
                note(
                    nameNode, item.key + ".name",
                    "'\(name)' must be 1 to 64 letters, digits, '-', '_' or '.', such as work")
                continue
            }
            if let first = names[name] {
                note(nameNode, item.key + ".name", "is the name of \(first) too; give each account its own")
                continue
            }
            names[name] = item.key
            guard let settings = kind.init(address: name, entry: entry) else { continue }
            var source = SourceSettings(settings, every: 300)
            if let (_, everyNode) = keys["every"],
                let seconds = duration(everyNode, at: item.key + ".every", positive: true, atMost: Limits.day)
            {
                if seconds < 60 {
                    note(everyNode, item.key + ".every", "polls the service more than once a minute; use 1m or more")
                } else {
                    source.every = seconds
                }
            }
            configuration.sources.append(source)
        }
    }

    /// A `calendars:` entry on a server, read by the kind whose key it has: a feed `{url: https://…, name: Work,
    /// every: 10m}`, a CalDAV account `{caldav: https://…, username: me, passwordCommand: [pass, show, dav]}`.
    func readSource(_ node: Node, at path: String) -> SourceSettings? {
        let kinds = sourceKinds.calendarKinds
        let common = ["name", "every"]
        let everyKey = kinds.flatMap { [$0.type] + $0.keys }
        guard let keys = mapping(node, at: path, known: common + everyKey) else { return nil }
        let written = kinds.filter { keys[$0.type] != nil }
        guard let kind = written.first else {
            note(
                node, path,
                kinds.isEmpty
                    ? "is a calendar on a server, which this program does not read; write a path"
                    : "has no \(sourceKinds.typesShown); write the calendar's address, such as "
                        + kinds.map { "\($0.type): \($0.example)" }.joined(separator: ", or "))
            return nil
        }
        guard written.count == 1 else {
            note(
                node, path,
                "has both " + written.map { "`\($0.type):`" }.joined(separator: " and ") + "; "
                    + written.map { "\($0.title) is `\($0.type):`" }.joined(separator: ", ") + ": keep one")
            return nil
        }
        for (name, (keyNode, _)) in keys where !common.contains(name) && name != kind.type && !kind.keys.contains(name)
        {
            let owner = kinds.first { $0.keys.contains(name) }
            note(
                keyNode, path + "." + name,
                "is for \(owner?.title ?? "another kind") (`\(owner?.type ?? name):`), not \(kind.title) (`\(kind.type):`)"
            )
        }
        let addressNode = keys[kind.type]!.value
        let key = path + "." + kind.type
        guard let address = string(addressNode, at: key) else { return nil }
        let lowered = address.lowercased()
        guard kind.schemes.contains(where: { lowered.hasPrefix($0 + "://") }) else {
            note(
                addressNode, key,
                "'\(ConnectionString(address).redacted)' is not an address for \(kind.title) (`\(kind.type):`); "
                    + "write one starting with \(kind.schemes.map { $0 + "://" }.listedWithOr)")
            return nil
        }
        let entry = ConfigurationSection(node: node, keys: keys, path: path, reader: self)
        guard let settings = kind.init(address: address, entry: entry) else { return nil }
        var source = SourceSettings(settings)
        if let (_, nameNode) = keys["name"] { source.name = string(nameNode, at: path + ".name") }
        if let (_, everyNode) = keys["every"],
            let seconds = duration(everyNode, at: path + ".every", positive: true, atMost: Limits.day)
        {
            if seconds < 60 && !source.isLoopback {
                note(
                    everyNode, path + ".every",
                    "polls a server more than once a minute; use 1m or more (only a server on this machine, "
                        + "localhost, may be polled more often)")
            } else {
                source.every = seconds
            }
        }
        return source
    }

    /// A program and its arguments as a list (never one text for a shell), its program given as a relative path
    /// found next to the configuration, like every other path in it.
    func readArgv(_ node: Node, at key: String, example: String, empty: String) -> [String]? {
        if case .scalar = node, let text = node.string, text.contains(" ") {
            note(
                node, key,
                "is one text with spaces; programs never run through a shell, so write the program and each "
                    + "argument as a list item, such as \(example)")
            return nil
        }
        var argv = list(node, at: key).compactMap { string($0.node, at: $0.key) }
        guard let program = argv.first, !program.isEmpty else {
            note(node, key, "is empty; " + empty)
            return nil
        }
        if program.contains("/"), let resolved = path(node, at: key + "[0]", text: program) { argv[0] = resolved }
        return argv
    }

    /// `fleet:`: the folders a fleet's `path` rows may name, the credentials its CalDAV rows may name, and the one
    /// that seals its accounts' tokens.
    func readFleetAccess(_ node: Node) -> FleetAccess {
        var access = FleetAccess()
        guard let keys = mapping(node, at: "fleet", known: ["roots", "credentials", "tokenKey"]) else { return access }
        if let (_, value) = keys["roots"] {
            access.roots = list(value, at: "fleet.roots").compactMap { path($0.node, at: $0.key) }
        }
        if let (_, value) = keys["credentials"], let entries = mapping(value, at: "fleet.credentials", known: nil) {
            for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
                let key = "fleet.credentials." + name
                if let problem = FleetAccess.problem(withCredentialName: name) {
                    note(entry.key, key, problem)
                } else if let argv = readArgv(
                    entry.value, at: key, example: "[pass, show, dav/carol]",
                    empty:
                        "write the program that prints the password and its arguments, such as [pass, show, dav/carol]"
                ) {
                    access.credentials[name] = argv
                }
            }
        }
        if let (key, value) = keys["tokenKey"], let name = string(value, at: "fleet.tokenKey") {
            if let problem = FleetAccess.problem(withCredentialName: name) {
                note(key, "fleet.tokenKey", problem)
            } else {
                access.tokenKey = name
            }
        }
        return access
    }

    // MARK: Values
}
