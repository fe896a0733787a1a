import Foundation
import Yams

/// `sinks:` (each entry read by its kind), `metrics:` and `serve:`: where events and answers go.
extension ConfigurationReader {
    /// The sinks, each with its entry, and the line each one's entry starts on, by name.
    func readSinks(_ node: Node) -> ([(SinkSettings, ConfigurationSection)], [String: Int]) {
        var sinks: [(SinkSettings, ConfigurationSection)] = []
        var names: [String: Int] = [:]
        let items = list(node, at: "sinks", single: false)
        if items.count > Limits.sinks {
            note(node, "sinks", "lists \(items.count) sinks; calwatch runs at most \(Limits.sinks)")
            return ([], [:])
        }
        var read = items.compactMap { item in readSink(item.node, at: item.key) }
        // Unnamed sinks whose default names would be the same (two webhooks on one host): each named with a short
        // hash of what tells them apart as well, which never shows a path that may be a secret.
        let defaults = Dictionary(grouping: read.indices) { read[$0].0.name }
        for (_, indices) in defaults where indices.count > 1 {
            for index in indices where read[index].1["name"] == nil {
                guard let distinction = read[index].0.kind.distinction else { continue }
                read[index].0.name += " #" + String(SHA256.hex(Array(distinction.utf8)).prefix(6))
            }
        }
        for (sink, entry) in read {
            if let line = names[sink.name] {
                entry.note("has the same name as the sink on line \(line) ('\(sink.name)'); give one of them a `name:`")
                continue
            }
            names[sink.name] = entry.node.mark?.line ?? 0
            sinks.append((sink, entry))
        }
        return (sinks, names)
    }

    func readSink(_ node: Node, at path: String) -> (SinkSettings, ConfigurationSection)? {
        guard let sinkKinds else {
            return nil  // a command that delivers nothing does not read them
        }
        guard let keys = mapping(node, at: path, known: nil) else { return nil }
        let types = sinkKinds.kinds.map { $0.type }.joined(separator: ", ")
        guard let typeNode = keys["type"]?.value else {
            note(node, path, "has no `type:`; write one of \(types)")
            return nil
        }
        guard let type = string(typeNode, at: path + ".type") else { return nil }
        guard let kind = sinkKinds.kind(type) else {
            note(typeNode, path + ".type", "'\(type)' is not a sink type; write one of \(types)")
            return nil
        }
        let entry = ConfigurationSection(
            node: node, keys: rejectUnknown(keys, known: ["type", "name"] + kind.keys, at: path), path: path,
            reader: self)
        let name = entry["name"].flatMap { $0.string() }
        guard let settings = kind.init(entry) else { return nil }
        return (SinkSettings(name: name ?? settings.defaultName, kind: settings), entry)
    }

    func readMetrics(_ node: Node, into metrics: inout MetricsSettings) {
        guard let keys = mapping(node, at: "metrics", known: ["textfile", "every"]) else { return }
        if let (_, value) = keys["textfile"], let file = path(value, at: "metrics.textfile") {
            if file.hasSuffix(".prom") {
                metrics.textfile = file
            } else {
                note(
                    value, "metrics.textfile",
                    "node_exporter reads only files ending in .prom; name it like "
                        + "/var/lib/prometheus/node-exporter/calwatch.prom")
            }
        }
        if let (_, value) = keys["every"],
            let seconds = duration(value, at: "metrics.every", positive: true, atMost: Limits.day)
        {
            metrics.every = seconds
        }
    }

    /// `on`, `kinds`, `offsets` and `calendars` of a hook, webhook or MQTT sink.
    func readFilters(
        _ keys: [String: (key: Node, value: Node)], at path: String, into filters: inout some EventFilters
    ) {
        if let node = keys["on"]?.value {
            filters.events = Set(
                list(node, at: path + ".on").compactMap { item -> EventType? in
                    guard let text = string(item.node, at: item.key) else { return nil }
                    let bare = text.hasPrefix("calwatch.") ? String(text.dropFirst(9)) : text
                    guard let type = EventType(rawValue: bare) else {
                        note(
                            item.node, item.key,
                            "'\(text)' is not an event type; write one of "
                                + EventType.allCases.map(\.rawValue).joined(separator: ", "))
                        return nil
                    }
                    return type
                })
        }
        if let node = keys["kinds"]?.value {
            filters.kinds = Set(
                list(node, at: path + ".kinds").compactMap {
                    choice($0.node, at: $0.key, of: OccurrenceFacts.Kind.self)
                })
        }
        if let node = keys["offsets"]?.value {
            filters.offsets = Set(
                list(node, at: path + ".offsets").compactMap {
                    duration($0.node, at: $0.key, atMost: Limits.reminderOffset)
                })
        }
        if let node = keys["calendars"]?.value {
            filters.calendars = Set(list(node, at: path + ".calendars").compactMap { string($0.node, at: $0.key) })
        }
    }

    /// `serve: {listen: 127.0.0.1:8787}`, `serve: {listen: 0.0.0.0:8787, allowRemote: true, tls: {certificate: …,
    /// key: …}}`, or `serve: off`.
    func readServe(_ node: Node, into serve: inout ServeSettings) {
        if case .scalar = node {
            if let on = bool(node, at: "serve") { serve.enabled = on }
            return
        }
        guard let keys = mapping(node, at: "serve", known: ["listen", "allowRemote", "tls"]) else { return }
        if let allowNode = keys["allowRemote"]?.value, let allow = bool(allowNode, at: "serve.allowRemote") {
            serve.allowRemote = allow
        }
        if let tlsNode = keys["tls"]?.value,
            let tls = mapping(tlsNode, at: "serve.tls", known: ["certificate", "key"])
        {
            let certificate = tls["certificate"].flatMap { path($0.value, at: "serve.tls.certificate") }
            let key = tls["key"].flatMap { path($0.value, at: "serve.tls.key") }
            if let certificate, let key {
                serve.tls = ServeSettings.TLS(certificate: certificate, key: key)
            } else {
                note(tlsNode, "serve.tls", "names both files, PEM: { certificate: …/cert.pem, key: …/key.pem }")
            }
        }
        guard let listenNode = keys["listen"]?.value, let listen = string(listenNode, at: "serve.listen") else {
            if serve.allowRemote || serve.tls != nil {
                note(node, "serve", "has no listen: for allowRemote: and tls: to apply to")
            }
            return
        }
        if let address = ServeSettings.loopback(listen) {
            serve.listen = address
        } else if let address = ServeSettings.ipv4(listen), serve.allowRemote, serve.tls != nil {
            serve.listen = address
        } else if ServeSettings.ipv4(listen) != nil, serve.allowRemote {
            note(
                listenNode, "serve.listen",
                "'\(listen)' is reached by other machines, and the token would cross the network in the clear: add "
                    + "tls: { certificate: …, key: … }")
        } else if ServeSettings.ipv4(listen) != nil {
            note(
                listenNode, "serve.listen",
                "'\(listen)' is not loopback: to serve other machines add allowRemote: true and tls: { certificate: "
                    + "…, key: … }, or let a reverse proxy with TLS (Caddy, nginx) reach 127.0.0.1")
        } else {
            note(listenNode, "serve.listen", Self.notLoopback(listen))
        }
    }

    static func notLoopback(_ text: String) -> String {
        "'\(text)' is not an IPv4 address and port written plainly, such as 127.0.0.1:8787 (loopback; other "
            + "machines reach it through a reverse proxy with TLS, Caddy or nginx, or serve: allowRemote: with tls:)"
    }

    /// An earlier spelling of `serve: listen:` (a webhook's `answers: listen:`) gives the local server its address
    /// when `serve:` does not, and must agree with it when it does.
    func reconcileServe(_ configuration: inout Configuration) {
        for (node, path, address) in earlierServeListens {
            if configuration.serve.listen == nil { configuration.serve.listen = address }
            if configuration.serve.listen != address {
                note(
                    node, path,
                    "is \(address), but serve: listens on \(configuration.serve.listen!); the one server takes the "
                        + "answers: remove this listen:")
            }
        }
    }
}
