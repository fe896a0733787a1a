import CSecret
import CalWatchRuntime
import Foundation

/// The Secret Service (gnome-keyring, KeePassXC) through libsecret, where accounts' tokens are kept when the user's
/// default collection is unlocked: one item per account (schema `org.calwatch.AccountTokens`, attribute `account`).
/// Nothing here unlocks anything: a locked collection would ask for a password at a prompt that a daemon cannot
/// answer, so calwatch keeps its tokens in a file instead (`AccountTokens`).
///
/// An actor on a thread of its own (`BlockingExecutor`): libsecret's calls are D-Bus round trips that block, and they
/// never park a thread of Swift's cooperative pool.
actor SecretService {
    static let shared = SecretService()

    private let executor = BlockingExecutor(name: "calwatch-secrets")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// What the service could not do, in its words (never a secret).
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// An account's item: its text, none, or one there but locked.
    enum Found: Equatable {
        case text(String)
        case none
        case locked
    }

    /// Whether the environment names a session bus. Without one libsecret is not asked: GIO would try to launch a bus
    /// of its own.
    static func busNamed(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return true }
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return false }
        return FileManager.default.fileExists(atPath: runtime + "/bus")
    }

    /// Whether tokens can be kept there now: a bus, a Secret Service on it, and its default collection unlocked.
    func unlocked() -> Bool {
        guard Self.busNamed() else { return false }
        var message: UnsafeMutablePointer<CChar>?
        defer { free(message) }
        return cw_secret_default_unlocked(&message) == 1
    }

    func store(_ text: String, account: String, label: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        defer { free(message) }
        guard Self.busNamed() else { throw Failure(description: "no session bus") }
        if cw_secret_store(account, label, text, &message) < 0 { throw Self.failure(message) }
    }

    func lookup(account: String) throws -> Found {
        guard Self.busNamed() else { throw Failure(description: "no session bus") }
        var message: UnsafeMutablePointer<CChar>?
        var text: UnsafeMutablePointer<CChar>?
        defer {
            free(message)
            if let text {
                // The secret's copy is wiped before it is given back.
                memset(text, 0, strlen(text))
                free(text)
            }
        }
        switch cw_secret_lookup(account, &text, &message) {
        case 1: return .text(text.map { String(cString: $0) } ?? "")
        case 2: return .locked
        case 0: return .none
        default: throw Self.failure(message)
        }
    }

    /// Removes the account's item: whether there was one; `nil` when it is there but locked (and stays).
    func clear(account: String) throws -> Bool? {
        guard Self.busNamed() else { return false }
        var message: UnsafeMutablePointer<CChar>?
        defer { free(message) }
        switch cw_secret_clear(account, &message) {
        case 1: return true
        case 2: return nil
        case 0: return false
        default: throw Self.failure(message)
        }
    }

    private static func failure(_ message: UnsafeMutablePointer<CChar>?) -> Failure {
        Failure(description: message.map { String(cString: $0) } ?? "unknown error")
    }
}
