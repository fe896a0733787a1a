import Foundation
import Yams

/// `calendars:` entries on servers, `fleet:`, and the programs that print their passwords.
extension ConfigurationReader {
    /// A `calendars:` entry on a server: a feed `{url: https://…, name: Work, every: 10m}`, or a CalDAV account
    /// `{caldav: https://…, username: me, passwordCommand: [pass, show, dav], every: 5m}`.
    func readFeed(_ node: Node, at path: String) -> FeedSettings? {
        guard
            let keys = mapping(
                node, at: path, known: ["url", "caldav", "name", "every", "username", "passwordCommand"])
        else { return nil }
        let addressNode: Node
        var kind = FeedSettings.Kind.ics
        switch (keys["url"]?.value, keys["caldav"]?.value) {
        case (let url?, nil):
            addressNode = url
            for key in ["username", "passwordCommand"] where keys[key] != nil {
                note(
                    keys[key]!.key, path + "." + key,
                    "is for CalDAV (`caldav:`); a feed address carries its own secret, or https://user:password@…")
            }
        case (nil, let caldav?):
            addressNode = caldav
            var username: String?
            var command: [String]?
            if let (_, value) = keys["username"] { username = string(value, at: path + ".username") }
            if let (_, value) = keys["passwordCommand"] {
                command = readArgv(
                    value, at: path + ".passwordCommand", example: "[pass, show, nextcloud]",
                    empty: "name the program that prints the password, such as [pass, show, nextcloud]")
            }
            kind = .caldav(username: username, passwordCommand: command)
        case (_?, _?):
            note(node, path, "has both `url:` and `caldav:`; a feed is one .ics address, CalDAV a server: keep one")
            return nil
        case (nil, nil):
            note(
                node, path,
                "has no `url:` or `caldav:`; write the calendar's address, such as webcal://example.org/calendar.ics, "
                    + "or a CalDAV server's, such as caldav: https://cloud.example.org/remote.php/dav/")
            return nil
        }
        let key = path + (kind == .ics ? ".url" : ".caldav")
        guard let address = string(addressNode, at: key) else { return nil }
        let lowered = address.lowercased()
        let schemes = kind == .ics ? ["https://", "http://", "webcal://"] : ["https://", "http://"]
        guard schemes.contains(where: { lowered.hasPrefix($0) }) else {
            note(
                addressNode, key,
                "'\(address)' is not an \(kind == .ics ? "http, https or webcal" : "http or https") address")
            return nil
        }
        var feed = FeedSettings(address: address, kind: kind)
        if let (_, nameNode) = keys["name"] { feed.name = string(nameNode, at: path + ".name") }
        if let (_, everyNode) = keys["every"],
            let seconds = duration(everyNode, at: path + ".every", positive: true, atMost: Limits.day)
        {
            if seconds < 60 && !feed.isLoopback {
                note(
                    everyNode, path + ".every",
                    "polls a server more than once a minute; use 1m or more (only a server on this machine, "
                        + "localhost, may be polled more often)")
            } else {
                feed.every = seconds
            }
        }
        return feed
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

    /// `fleet:`: the folders a fleet's `path` rows may name, and the credentials its CalDAV rows may name.
    func readFleetAccess(_ node: Node) -> FleetAccess {
        var access = FleetAccess()
        guard let keys = mapping(node, at: "fleet", known: ["roots", "credentials"]) else { return access }
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
        return access
    }

    // MARK: Values
}
