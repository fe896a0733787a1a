public import CalWatchCore
import Foundation

/// One calendar a fleet shares out, as its row in `calendars` has it: where it is read from, and who holds it.
/// A CalDAV account names a credential, which each watcher resolves on its own machine (`fleet.credentials:` in
/// its config.yml, or a systemd credential); the row holds neither a password nor a program to run.
public struct FleetCalendar: Sendable, Hashable {
    public enum Source: Sendable, Hashable {
        /// A file or folder (vdir, Radicale collection, CalDAV export) on storage every watcher reaches.
        case path(String)
        /// An ICS feed, polled every `every` seconds.
        case feed(url: String, every: Int64)
        /// A CalDAV account or collection, signed in with the credential named.
        case caldav(url: String, username: String?, credential: String?, every: Int64)
        /// A Microsoft 365 or Google account signed in to with the application of the watchers' config.yml named
        /// `account` (its `accounts:` entry), its tokens sealed in the database (`calwatch fleet sign-in`).
        case account(account: String, every: Int64)

        /// `path`, `feed`, `caldav` or `account`: the row's `kind`.
        public var kind: String {
            switch self {
            case .path: "path"
            case .feed: "feed"
            case .caldav: "caldav"
            case .account: "account"
            }
        }

        /// The path or the URL (without a password: `fleet add` refuses one in it), or the account's name.
        public var address: String {
            switch self {
            case .path(let path): path
            case .feed(let url, _), .caldav(let url, _, _, _): url
            case .account(let account, _): account
            }
        }

        /// Seconds between polls, for a calendar on a server.
        public var every: Int64? {
            switch self {
            case .path: nil
            case .feed(_, let every), .caldav(_, _, _, let every), .account(_, let every): every
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
        if Self.hasControl(name) { return "a calendar's name holds no control characters" }
        if name.trimmingCharacters(in: .whitespaces) != name {
            return "a calendar's name neither starts nor ends with a space"
        }
        return nil
    }

    /// The bounds of a poll's period, in seconds: what `fleet add --every` takes.
    public static let every: ClosedRange<Int64> = 60...86_400
    /// The longest address a row may hold: a path (`PATH_MAX`) or a URL the HTTP client would send.
    public static let longestPath = 4096
    public static let longestURL = 2048

    /// Why this calendar cannot be one of a fleet's, or `nil`: the checks `fleet add` makes before writing a row,
    /// made again by every watcher on every row it reads, since anyone who can write the table can write a row.
    public var problem: String? {
        if let problem = Self.problem(withName: name) { return problem }
        if let person, person.unicodeScalars.count > 320 || Self.hasControl(person) {
            return "person is one address of at most 320 characters"
        }
        switch source {
        case .path(let path):
            guard path.hasPrefix("/"), path.utf8.count <= Self.longestPath, !Self.hasControl(path) else {
                return "a path is absolute, at most \(Self.longestPath) bytes, with no control characters"
            }
        case .feed(let url, let every):
            if let problem = Self.problem(withURL: url, schemes: ["https", "http", "webcal"]) { return problem }
            if !Self.every.contains(every) { return "every is \(every) s; a feed is polled every 60 s to 1 day" }
        case .caldav(let url, let username, let credential, let every):
            if let problem = Self.problem(withURL: url, schemes: ["https", "http"]) { return problem }
            if !Self.every.contains(every) { return "every is \(every) s; an account is polled every 60 s to 1 day" }
            if let username, username.isEmpty || username.unicodeScalars.count > 256 || Self.hasControl(username) {
                return "username is 1 to 256 characters with no control characters"
            }
            if let credential, let problem = FleetAccess.problem(withCredentialName: credential) { return problem }
        case .account(let account, let every):
            if let problem = Self.problem(withName: account) { return "account: " + problem }
            if !Self.every.contains(every) { return "every is \(every) s; an account is polled every 60 s to 1 day" }
        }
        return nil
    }

    /// Why `url` cannot be a fleet calendar's address, or `nil`.
    private static func problem(withURL url: String, schemes: [String]) -> String? {
        guard url.utf8.count <= longestURL, !hasControl(url) else {
            return "an address is at most \(longestURL) bytes with no control characters"
        }
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(),
            schemes.contains(scheme), let host = parts.host, !host.isEmpty
        else {
            return "an address is a \(schemes.joined(separator: ", ")) URL with a host, not "
                + "'\(ConnectionString(url).redacted.prefix(80))'"
        }
        if parts.password != nil {
            return "an address holds no password; name a credential that each watcher resolves instead"
        }
        return nil
    }

    private static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control || $0 == "\u{7F}" }
    }

    /// A row of `calendars` as the database returns it, each column as text (`nil` for NULL).
    public struct Fields: Sendable {
        public var name: String?
        public var kind: String?
        public var address: String?
        public var username: String?
        public var credential: String?
        public var passwordCommand: String?
        public var every: String?
        public var person: String?

        public init(
            name: String?, kind: String?, address: String?, username: String? = nil, credential: String? = nil,
            passwordCommand: String? = nil, every: String? = nil, person: String? = nil
        ) {
            (self.name, self.kind, self.address, self.username) = (name, kind, address, username)
            (self.credential, self.passwordCommand, self.every, self.person) = (
                credential, passwordCommand, every, person
            )
        }
    }

    /// Why a row is not read, worded for `last_problem` and `calwatch fleet show`.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// The calendar a row describes, checked as `fleet add` checks what it writes.
    public init(checking row: Fields) throws(Refusal) {
        guard let name = row.name, let kind = row.kind, let address = row.address else {
            throw Refusal("the row has no name, kind or address")
        }
        if let command = row.passwordCommand, command != "null" {
            throw Refusal(
                "password_command is not run by watchers (whoever writes the table would run programs on them); "
                    + "set credential to a name each watcher resolves (fleet.credentials: in its config.yml, or a "
                    + "systemd credential), and password_command to NULL")
        }
        var every: Int64 = 600
        if let text = row.every {
            guard let seconds = Int64(text) else { throw Refusal("every is not a whole number of seconds") }
            every = seconds
        }
        let source: Source
        switch kind {
        case "path": source = .path(address)
        case "feed": source = .feed(url: address, every: every)
        case "caldav": source = .caldav(url: address, username: row.username, credential: row.credential, every: every)
        case "account": source = .account(account: address, every: every)
        default: throw Refusal("kind is path, feed, caldav or account")
        }
        self.init(name: name, source: source, person: row.person)
        if let problem { throw Refusal(problem) }
    }

    /// How a watcher reads a checked calendar under its own `access`: the folder a path row names (resolved, and
    /// under one of the roots), or the server's calendar with its credential resolved on this machine. Blocks
    /// (it looks at the file system): call it off Swift's cooperative pool.
    public func admitted(
        by access: FleetAccess, credentialsDirectory: String?
    ) -> Result<Admitted, Refusal> {
        switch source {
        case .path(let path):
            let resolved = Self.resolved(path)
            let roots = access.roots.map(Self.resolved)
            guard roots.contains(where: { resolved == $0 || resolved.hasPrefix($0 == "/" ? "/" : $0 + "/") }) else {
                return .failure(
                    Refusal(
                        roots.isEmpty
                            ? "path calendars are read only under folders the watcher allows; list them in its "
                                + "config.yml as fleet: roots: [/srv/calendars]"
                            : "the path is outside the folders this watcher allows (fleet.roots in its config.yml)"))
            }
            return .success(.path(resolved))
        case .feed:
            return .success(.server(Server(name: name, source: source)))
        case .caldav(_, _, let credential, _):
            var server = Server(name: name, source: source)
            if let credential {
                switch Self.resolve(credential, access: access, credentialsDirectory: credentialsDirectory) {
                case .success(let (command, file)): (server.passwordCommand, server.passwordFile) = (command, file)
                case .failure(let refusal): return .failure(refusal)
                }
            }
            return .success(.server(server))
        case .account(let account, _):
            guard access.accounts.contains(account) else {
                return .failure(
                    Refusal(
                        "this watcher's config.yml has no account named \(account) (accounts: - name: \(account), "
                            + "provider: …, clientId: …), whose application the sign-in is with"))
            }
            var server = Server(name: name, source: source)
            switch Self.tokenKey(access: access, credentialsDirectory: credentialsDirectory) {
            case .success(let (command, file)): (server.passwordCommand, server.passwordFile) = (command, file)
            case .failure(let refusal): return .failure(refusal)
            }
            return .success(.server(server))
        }
    }

    /// Where this machine reads the secret the fleet's account tokens are sealed with: `fleet: tokenKey:` resolved
    /// as `resolve` resolves a credential (for watchers, `calwatch fleet sign-in` and `calwatch check` alike).
    public static func tokenKey(
        access: FleetAccess, credentialsDirectory: String?
    ) -> Result<(command: [String]?, file: String?), Refusal> {
        guard let key = access.tokenKey else {
            return .failure(
                Refusal(
                    "no key for the fleet's account tokens: add fleet: tokenKey: NAME to config.yml, NAME a "
                        + "credential every watcher has (fleet: credentials: or a systemd credential) holding a "
                        + "secret such as `openssl rand -base64 32` prints"))
        }
        return resolve(key, access: access, credentialsDirectory: credentialsDirectory)
    }

    /// A credential's name resolved on this machine: the program of `fleet.credentials:` that prints it, else the
    /// systemd credential's file.
    public static func resolve(
        _ credential: String, access: FleetAccess, credentialsDirectory: String?
    ) -> Result<(command: [String]?, file: String?), Refusal> {
        if let command = access.credentials[credential] { return .success((command, nil)) }
        if let directory = credentialsDirectory,
            FileManager.default.isReadableFile(atPath: directory + "/" + credential)
        {
            return .success((nil, directory + "/" + credential))
        }
        return .failure(
            Refusal(
                "this watcher has no credential named \(credential); add it to its config.yml "
                    + "(fleet: credentials: {\(credential): [pass, show, …]}) or as a systemd credential "
                    + "(LoadCredential=\(credential):…)"))
    }

    /// A calendar on a server as a watcher admitted it: its row's name and source, with the credential resolved on
    /// this machine. The watcher's program makes it the `SourceSettings` of its own kinds.
    public struct Server: Sendable, Hashable {
        public var name: String
        /// `.feed` or `.caldav`.
        public var source: Source
        /// The program that prints the password (`fleet.credentials:` in the watcher's config.yml); for an account,
        /// the secret its tokens are sealed with (`fleet.tokenKey:`).
        public var passwordCommand: [String]?
        /// A file whose first line is the password, or an account's token key (a systemd credential).
        public var passwordFile: String?
    }

    /// What a watcher reads for a calendar it admitted.
    public enum Admitted: Sendable, Hashable {
        case path(String)
        case server(Server)
    }

    /// The path made absolute, without `.`, `..` or symbolic links where it exists.
    private static func resolved(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
