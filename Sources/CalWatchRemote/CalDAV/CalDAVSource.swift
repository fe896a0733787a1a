import CalWatchCore
import CalWatchRuntime
public import Foundation

/// A CalDAV account or collection (`calendars: - caldav: …`): its calendars copied into calwatch's cache as a
/// vdir tree (`<cache>/caldav/<hash>/<collection>/<item>.ics`, with `displayname` and `color`), which the rest of
/// calwatch reads and follows like a folder vdirsyncer keeps.
public struct CalDAVAccount: Sendable, Hashable {
    /// Where discovery starts: a server root, a principal or a calendar collection.
    public var url: URL
    public var username: String?
    /// A password written in the address (`https://user:secret@…`), taken out of it: `url` never holds one.
    var password: String?
    public var passwordCommand: [String]?
    /// A file whose first line is the password (`CalDAVSettings.passwordFile`).
    public var passwordFile: String?
    /// The calendar's name when the account holds one collection; otherwise each collection's `displayname`.
    public var name: String?
    public var every: Duration
    /// `CalDAVSettings.scope`.
    public var scope: String?

    public init?(_ settings: CalDAVSettings, name: String? = nil, every: Int64 = 600) {
        guard let url = URL(string: settings.address.trimmingCharacters(in: .whitespaces)),
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil
        else { return nil }
        self.url = url.withoutCredentials
        username = settings.username ?? url.user(percentEncoded: false)
        password = url.password(percentEncoded: false)
        passwordCommand = settings.passwordCommand
        passwordFile = settings.passwordFile
        scope = settings.scope
        self.name = name
        self.every = .seconds(every)
    }

    /// The address as messages show it, without a user or password.
    public var shownURL: String { url.shown }

    /// The account's folder in the cache: `caldav/` and 16 hex digits of the SHA-256 of its address and user.
    public func folder(root: String) -> String {
        root + "/caldav/" + String(SHA256.hex(Array(identity.utf8)).prefix(16))
    }

    /// The address and the user (and the scope): one account, one folder.
    var identity: String { url.absoluteString + "\n" + (username ?? "") + (scope.map { "\n" + $0 } ?? "") }
}

/// Keeps one account's copy in step with its server. Each poll costs one PROPFIND when nothing changed: the
/// calendar home lists every collection's `sync-token` (RFC 6578) or `getctag`, and a collection whose token is the
/// one kept is not asked again. A changed collection is asked what changed (`sync-collection` from the token kept;
/// without sync support, every item's `getetag` compared), and only changed items are fetched, by
/// `calendar-multiget`. Items are renamed into place, so the daemon's watcher re-plans exactly them.
public final class CalDAVClient: RemoteCalendar {
    public let account: CalDAVAccount
    public let folder: String
    /// Requests sent and bytes received since the client was made (for `check` and the benchmarks).
    public var requests: Int { counts.withLock { $0.requests } }
    public var bytesReceived: Int { counts.withLock { $0.bytes } }

    private let counts = Locked((requests: 0, bytes: 0))
    /// The password, from `passwordCommand` once; asked again after the server refused it.
    private let password = Locked<String?>(nil)
    private let timeout: Duration = .seconds(60)
    /// Whether to use `sync-collection` when the server offers it (off: the `getctag`/`getetag` fallback, tested).
    let usesSyncCollection: Bool

    public init(account: CalDAVAccount, root: String = FeedCache.root(), usesSyncCollection: Bool = true) {
        self.account = account
        folder = account.folder(root: root)
        self.usesSyncCollection = usesSyncCollection
    }

    /// What the cache remembers between polls, in `.calwatch-caldav.json` beside the collections (hidden: the
    /// watcher and the calendar reader skip it).
    struct State: Codable, Equatable {
        var url: String
        /// The calendar home found by discovery (or the collection itself), an absolute URL.
        var home: String?
        /// Whether `home` is one collection rather than a home of collections.
        var single = false
        var collections: [String: Collection] = [:]

        struct Collection: Codable, Equatable {
            var folder: String
            var syncToken: String?
            var ctag: String?
            /// Items by href: their file in `folder` and their etag.
            var items: [String: Item] = [:]
        }

        struct Item: Codable, Equatable {
            var file: String
            var etag: String?
        }

        /// The state as `JSONDecoder` reads it back (keys sorted), written directly: `JSONEncoder` first builds a
        /// tree of the whole state, 54 MB for a collection of 100,000 items whose file is 9. A field added to the
        /// state is written here too (`theCopysRecordIsReadBackAsWritten` reads a state with every field set back).
        func json() -> [UInt8] {
            var writer = JSONLineWriter(capacity: 256 + collections.values.reduce(0) { $0 + $1.items.count * 128 })
            writer.beginObject()
            writer.beginObject(field: "collections")
            for (href, collection) in collections.sorted(by: { $0.key < $1.key }) {
                writer.key(href)
                writer.beginObject()
                if let ctag = collection.ctag { writer.field("ctag", ctag) }
                writer.field("folder", collection.folder)
                writer.beginObject(field: "items")
                for (href, item) in collection.items.sorted(by: { $0.key < $1.key }) {
                    writer.key(href)
                    writer.beginObject()
                    if let etag = item.etag { writer.field("etag", etag) }
                    writer.field("file", item.file)
                    writer.endObject()
                }
                writer.endObject()
                if let token = collection.syncToken { writer.field("syncToken", token) }
                writer.endObject()
            }
            writer.endObject()
            if let home { writer.field("home", home) }
            writer.field("single", single)
            writer.field("url", url)
            writer.endObject()
            return writer.bytes
        }
    }

    private var statePath: String { folder + "/.calwatch-caldav.json" }

    public var shownURL: String { account.shownURL }
    public var every: Duration { account.every }
    public var hasCopy: Bool { !loadState().collections.isEmpty }
    public var traffic: (requests: Int, bytes: Int)? { (requests, bytesReceived) }
    public func fetch() async -> FeedFetcher.Outcome { await sync() }

    func loadState() -> State {
        let fresh = State(url: account.url.absoluteString)
        guard let data = FileManager.default.contents(atPath: statePath),
            let state = try? JSONDecoder().decode(State.self, from: data), state.url == fresh.url
        else { return fresh }
        return state
    }

    private func save(_ state: State) throws {
        // Written from the bytes rendered, not a copy of them (9 MB for 100,000 items, at the sync's peak).
        try FeedCache.replace(statePath, with: state.json())
    }

    /// A failure worded for the user: what happened at which address (never the password), and what to do.
    struct Failure: Error {
        var reason: String
    }

    /// Brings the copy in step once. `.changed` counts the bytes of the items written.
    public func sync() async -> FeedFetcher.Outcome {
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var state = loadState()
            let before = state
            var written = 0
            var changed = false
            let calendars = try await listing(&state)
            var seen: Set<String> = []
            // One collection that fails (a 403, a broken item list) is said; the others are still read.
            var failures: [String] = []
            for calendar in calendars {
                seen.insert(calendar.href)
                do {
                    let (bytes, moved) = try await follow(calendar, count: calendars.count, &state)
                    written += bytes
                    changed = changed || moved
                } catch let failure as Failure {
                    failures.append(failure.reason)
                }
            }
            for (href, gone) in state.collections where !seen.contains(href) {
                try? FileManager.default.removeItem(atPath: folder + "/" + gone.folder)
                state.collections[href] = nil
                changed = true
            }
            if state != before {
                // The items written are on disk before the record of their etags is: a power cut must not leave
                // an item empty that the record says is current (it would never be fetched again).
                if written > 0 { try AtomicFile.syncFileSystem(holding: folder) }
                try save(state)
            }
            if !failures.isEmpty {
                let others = calendars.count - failures.count
                return .failed(
                    failures.joined(separator: "; ")
                        + (others > 0 ? " (the account's \(others) other calendars are read)" : ""), retryAfter: nil)
            }
            return changed ? .changed(bytes: written) : .unchanged
        } catch let failure as Failure {
            return .failed(failure.reason, retryAfter: nil)
        } catch {
            return .failed("cannot keep \(account.shownURL) in \(folder): \(error)", retryAfter: nil)
        }
    }

    // MARK: Discovery

    private static let listingBody = """
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/" \
        xmlns:i="http://apple.com/ns/ical/"><d:prop><d:resourcetype/><d:displayname/><i:calendar-color/>\
        <cs:getctag/><d:sync-token/></d:prop></d:propfind>
        """

    /// The calendar collections, from the home kept or found again (when there is none yet, or it is gone).
    private func listing(_ state: inout State) async throws -> [DAVMultistatus.Response] {
        for attempt in 0..<2 {
            if state.home == nil || attempt == 1 { try await discover(&state) }
            guard let home = state.home.flatMap(URL.init(string:)) else { break }
            let (status, answer) = try await send(
                "PROPFIND", home, depth: state.single ? "0" : "1", body: Self.listingBody)
            if status == 404 && attempt == 0 { continue }
            try expect(status, 207, "PROPFIND", home)
            let calendars = try read(answer, "PROPFIND", home).responses.filter(\.isCalendar)
            if calendars.isEmpty && attempt == 0 { continue }
            return calendars.map { response in
                var response = response
                response.href = resolve(response.href, against: home).absoluteString
                return response
            }
        }
        throw Failure(
            reason: "\(account.shownURL): no calendars found; give the server's CalDAV address (Nextcloud: "
                + "https://host/remote.php/dav/, Radicale: https://host/) or a calendar's own address")
    }

    private static let discoveryBody = """
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:resourcetype/>\
        <d:current-user-principal/><c:calendar-home-set/></d:prop></d:propfind>
        """

    /// From the address given to the calendar home: the address itself when it is a calendar, its
    /// `calendar-home-set`, or its `current-user-principal`'s (RFC 6764 §6).
    private func discover(_ state: inout State) async throws {
        var target = account.url
        for _ in 0..<3 {
            let (status, answer) = try await send("PROPFIND", target, depth: "0", body: Self.discoveryBody)
            try expect(status, 207, "PROPFIND", target)
            guard let response = try read(answer, "PROPFIND", target).responses.first else { break }
            if response.isCalendar {
                (state.home, state.single) = (target.absoluteString, true)
                return
            }
            if let home = response["calendar-home-set"], !home.isEmpty {
                (state.home, state.single) = (resolve(home, against: target).absoluteString, false)
                return
            }
            guard let principal = response["current-user-principal"], !principal.isEmpty else { break }
            let next = resolve(principal, against: target)
            if next == target { break }
            target = next
        }
        state.home = nil
    }

    // MARK: Following a collection

    /// Brings one collection's folder in step (`count`: how many the account has; the configured name goes to a
    /// lone one): returns the bytes written and whether anything changed.
    private func follow(_ calendar: DAVMultistatus.Response, count: Int, _ state: inout State) async throws -> (
        Int, Bool
    ) {
        let url = URL(string: calendar.href)!
        var kept =
            state.collections[calendar.href]
            ?? State.Collection(
                folder: Self.folderName(for: url, avoiding: Set(state.collections.values.map(\.folder))))
        let path = folder + "/" + kept.folder
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var changed = false
        let name = (count == 1 ? account.name : nil) ?? calendar["displayname"].flatMap { $0.isEmpty ? nil : $0 }
        changed = try Self.keep(name.map(CalendarReader.calendarName), in: path + "/displayname") || changed
        changed = try Self.keep(calendar["calendar-color"], in: path + "/color") || changed

        let token = calendar["sync-token"].flatMap { $0.isEmpty ? nil : $0 }
        let ctag = calendar["getctag"].flatMap { $0.isEmpty ? nil : $0 }
        if state.collections[calendar.href] != nil,
            (token != nil && token == kept.syncToken) || (token == nil && ctag != nil && ctag == kept.ctag)
        {
            return (0, changed)
        }
        // What changed: by sync-collection from the token kept, else by every etag.
        var changes: (etags: [String: String?], gone: Set<String>, complete: Bool, token: String?)
        if token != nil && usesSyncCollection {
            changes = try await syncCollection(url, from: kept.syncToken)
        } else {
            changes = try await etags(url)
        }
        var gone = changes.gone
        if changes.complete { gone.formUnion(Set(kept.items.keys).subtracting(changes.etags.keys)) }
        let wanted = changes.etags.filter { href, etag in etag == nil || kept.items[href]?.etag != etag }.map(\.key)
            .sorted()
        // The files in use, kept up to date as items come: a first sync of thousands must not gather them per item.
        var taken = Set(kept.items.values.map(\.file))
        var written = 0
        for start in stride(from: 0, to: wanted.count, by: 200) {
            let batch = Array(wanted[start..<min(start + 200, wanted.count)])
            let fetched = try await multiget(url, batch)
            for response in fetched {
                // The listing's own string for the href: one per item is kept, not a second from each answer.
                let listed = changes.etags.index(forKey: response.href)
                let href = listed.map { changes.etags.keys[$0] } ?? response.href
                if response.status == 404 {
                    gone.insert(href)
                    continue
                }
                guard let data = response["calendar-data"], !data.isEmpty else { continue }
                var item = kept.items[href] ?? State.Item(file: Self.fileName(for: href, avoiding: taken))
                taken.insert(item.file)
                item.etag = response["getetag"] ?? listed.flatMap { changes.etags.values[$0] }
                var bytes = Array(data.utf8)
                if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
                try FeedCache.replace(path + "/" + item.file, with: bytes, durable: false)
                kept.items[href] = item
                written += bytes.count
                changed = true
            }
        }
        for href in gone {
            guard let item = kept.items.removeValue(forKey: href) else { continue }
            taken.remove(item.file)
            try? FileManager.default.removeItem(atPath: path + "/" + item.file)
            changed = true
        }
        kept.syncToken = changes.token ?? token
        kept.ctag = ctag
        state.collections[calendar.href] = kept
        return (written, changed)
    }

    /// RFC 6578: what changed since `token` (everything, from no token). A token the server no longer knows
    /// (`valid-sync-token`, 403 or 409) starts again from none.
    private func syncCollection(_ url: URL, from token: String?) async throws
        -> (etags: [String: String?], gone: Set<String>, complete: Bool, token: String?)
    {
        func body(_ token: String?) -> String {
            """
            <?xml version="1.0" encoding="utf-8"?>
            <d:sync-collection xmlns:d="DAV:"><d:sync-token>\(Self.escaped(token ?? ""))</d:sync-token>\
            <d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>
            """
        }
        var (status, answer) = try await send("REPORT", url, depth: nil, body: body(token))
        var complete = token == nil
        if token != nil, status == 403 || status == 409 || status == 400 {
            (status, answer) = try await send("REPORT", url, depth: nil, body: body(nil))
            complete = true
        }
        try expect(status, 207, "REPORT sync-collection", url)
        let read = try read(answer, "REPORT sync-collection", url)
        var etags: [String: String?] = [:]
        var gone: Set<String> = []
        for response in read.responses {
            let href = resolve(response.href, against: url).absoluteString
            guard href != url.absoluteString else { continue }
            if response.status == 404 {
                gone.insert(href)
            } else {
                etags[href] = response["getetag"]
            }
        }
        return (etags, gone, complete, read.syncToken)
    }

    /// Without sync support: every item's etag, by a Depth 1 PROPFIND of the collection.
    private func etags(_ url: URL) async throws
        -> (etags: [String: String?], gone: Set<String>, complete: Bool, token: String?)
    {
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getetag/></d:prop></d:propfind>
            """
        let (status, answer) = try await send("PROPFIND", url, depth: "1", body: body)
        try expect(status, 207, "PROPFIND", url)
        var etags: [String: String?] = [:]
        for response in try read(answer, "PROPFIND", url).responses {
            let href = resolve(response.href, against: url).absoluteString
            guard href != url.absoluteString, !href.hasSuffix("/") else { continue }
            etags[href] = response["getetag"]
        }
        return (etags, [], true, nil)
    }

    /// RFC 4791 §7.9: the items at `hrefs`, with their data and etags.
    private func multiget(_ url: URL, _ hrefs: [String]) async throws -> [DAVMultistatus.Response] {
        let list = hrefs.map { "<d:href>\(Self.escaped(URL(string: $0)?.path(percentEncoded: true) ?? $0))</d:href>" }
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/>\
            <c:calendar-data/></d:prop>\(list.joined())</c:calendar-multiget>
            """
        let (status, answer) = try await send("REPORT", url, depth: "1", body: body)
        try expect(status, 207, "REPORT calendar-multiget", url)
        return try read(answer, "REPORT calendar-multiget", url).responses.map { response in
            var response = response
            response.href = resolve(response.href, against: url).absoluteString
            return response
        }
    }

    // MARK: HTTP

    /// One request, with Basic authentication when the account has a user; the password comes from
    /// `passwordCommand` once, and again after a 401.
    private func send(_ method: String, _ url: URL, depth: String?, body: String) async throws -> (Int, Data) {
        var request = HTTPClient.Request(
            method: method, url: url, headers: ["Content-Type": "application/xml; charset=utf-8"],
            body: Data(body.utf8))
        if let depth { request.headers["Depth"] = depth }
        request.credentials = try await credentials()
        let answer: HTTPClient.Answer
        switch await HTTPClient.send(request, limits: HTTPClient.Limits(deadline: timeout)) {
        case .success(let got): answer = got
        case .failure(let failure): throw Failure(reason: "\(url.shown): \(failure.reason)")
        }
        counts.withLock {
            $0.requests += 1
            $0.bytes += answer.received
        }
        if answer.status == 401 {
            password.withLock { $0 = nil }
            let who = account.username.map { "the user \($0) and its password" } ?? "no user (write `username:`)"
            throw Failure(
                reason: "\(url.shown): HTTP 401: the server refused \(who); check username and passwordCommand")
        }
        return (answer.status, answer.body)
    }

    /// The account's user and password, for the origin of the address it was given (its discovery may lead
    /// elsewhere; the password does not follow).
    private func credentials() async throws -> HTTPClient.Credentials? {
        guard let user = account.username else { return nil }
        var secret = password.withLock { $0 } ?? account.password
        if secret == nil, account.passwordCommand != nil || account.passwordFile != nil {
            do {
                if let command = account.passwordCommand {
                    secret = try await PasswordCommand.run(command)
                } else if let file = account.passwordFile {
                    secret = try await PasswordCommand.firstLine(ofFile: file)
                }
            } catch {
                throw Failure(reason: "\(account.shownURL): \(error.description)")
            }
            password.withLock { $0 = secret }
        }
        return HTTPClient.Credentials(user: user, password: secret ?? "", origin: account.url.origin)
    }

    private func expect(_ status: Int, _ wanted: Int, _ what: String, _ url: URL) throws {
        guard status != wanted else { return }
        let advice: String
        switch status {
        case 200..<300: advice = "; not a WebDAV answer: is this the server's CalDAV address?"
        case 403: advice = "; the account may not read it"
        case 404: advice = "; nothing there (moved?)"
        case 405, 501: advice = "; the server does not speak CalDAV there"
        case 500...: advice = "; the server failed, tried again later"
        default: advice = ""
        }
        throw Failure(reason: "\(url.shown): \(what) answered HTTP \(status)\(advice)")
    }

    private func read(_ data: Data, _ what: String, _ url: URL) throws -> DAVMultistatus {
        do {
            return try DAVMultistatus(data: data)
        } catch {
            let line = error.line.map { "line \($0): " } ?? ""
            throw Failure(reason: "\(url.shown): the answer to \(what) is not WebDAV XML (\(line)\(error.reason))")
        }
    }

    private func resolve(_ href: String, against base: URL) -> URL {
        URL(string: href, relativeTo: base)?.absoluteURL ?? base
    }

    // MARK: Names in the cache

    /// Writes `value` (or removes the file for `nil`) when it differs; whether it did.
    private static func keep(_ value: String?, in path: String) throws -> Bool {
        let current = try? String(contentsOfFile: path, encoding: .utf8)
        guard current != value else { return false }
        if let value {
            try FeedCache.replace(path, with: Data(value.utf8))
        } else {
            try? FileManager.default.removeItem(atPath: path)
        }
        return true
    }

    /// A folder for a collection: its href's last segment made safe (`work`, `personal_1`).
    static func folderName(for url: URL, avoiding taken: Set<String>) -> String {
        unique(safe(url.lastPathComponent, fallback: "calendar"), avoiding: taken)
    }

    /// A file for an item: its href's last segment made safe, ending in `.ics`.
    static func fileName(for href: String, avoiding taken: Set<String>) -> String {
        var name = safe(URL(string: href)?.lastPathComponent ?? href, fallback: "item")
        if !name.lowercased().hasSuffix(".ics") { name += ".ics" }
        return unique(name, avoiding: taken)
    }

    /// Letters, digits, `@`, `.`, `_`, `-` kept; anything else `_`; never hidden, never `..`, at most 100 bytes.
    private static func safe(_ segment: String, fallback: String) -> String {
        let decoded = segment.removingPercentEncoding ?? segment
        var name = String(
            decoded.unicodeScalars.prefix(100).map { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                        || "@._-".unicodeScalars.contains(scalar))
                    ? Character(scalar) : "_"
            })
        while name.hasPrefix(".") { name.removeFirst() }
        return name.isEmpty ? fallback : name
    }

    private static func unique(_ name: String, avoiding taken: Set<String>) -> String {
        guard taken.contains(name) else { return name }
        let (stem, suffix) = name.hasSuffix(".ics") ? (String(name.dropLast(4)), ".ics") : (name, "")
        var number = 1
        while taken.contains("\(stem)_\(number)\(suffix)") { number += 1 }
        return "\(stem)_\(number)\(suffix)"
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
