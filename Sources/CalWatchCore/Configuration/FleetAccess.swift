import Foundation

/// What a fleet's watcher lets the rows of its database name (`fleet:` in config.yml). Whoever can write the
/// `calendars` table is a stranger to the watcher's machine: a row may name a folder only under `roots`, and a
/// CalDAV password only by a credential's name that this file (or systemd) resolves; nothing in a row is run.
public struct FleetAccess: Sendable, Hashable {
    /// Absolute folders a `path` row may name (the shared storage every watcher mounts). None: no path row is read.
    public var roots: [String] = []
    /// The programs that print each named credential's password, run on this machine as argv.
    public var credentials: [String: [String]] = [:]
    /// The credential whose secret seals the tokens of the fleet's accounts (`fleet: tokenKey:`), resolved like a
    /// CalDAV password's; without one, no `account` row is read.
    public var tokenKey: String?
    /// The accounts of config.yml (`accounts:`) an `account` row may name: the applications its sign-in is with.
    public var accounts: Set<String> = []

    public init(roots: [String] = [], credentials: [String: [String]] = [:]) {
        self.roots = roots
        self.credentials = credentials
    }

    /// Why `name` cannot name a credential, or `nil`: it doubles as a file name under systemd's
    /// `$CREDENTIALS_DIRECTORY`, so it is letters, digits and `._@-`, does not start with a dot, at most 100 long.
    public static func problem(withCredentialName name: String) -> String? {
        guard !name.isEmpty, name.unicodeScalars.count <= 100 else {
            return "a credential's name is 1 to 100 characters"
        }
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-")
        guard name.unicodeScalars.allSatisfy(allowed.contains), !name.hasPrefix(".") else {
            return "a credential's name is letters, digits and . _ @ - (not starting with a dot), such as dav-carol"
        }
        return nil
    }
}
