import CalWatchRuntime
import Crypto
public import Foundation

/// Where an account's tokens are kept when not in this machine's token files: a fleet's database, where only the
/// watcher holding the calendar's lease reads them and refreshes (`calwatch watch --fleet`). The vault takes
/// refreshes in turn: `refresh` is called with the refresh token kept, and the tokens it gives are kept before the
/// access token is returned.
public protocol AccountVault: AnyObject, Sendable {
    /// An access token, refreshed through `refresh` when the one kept has less than five minutes left, when
    /// `forcingRefresh`, or when it is `refused` (unless refreshed since).
    func accessToken(
        forcingRefresh: Bool, replacing refused: String?, now: Date,
        refresh: @escaping @Sendable (String) async throws -> SignInGrant
    ) async throws -> String
    /// Who signed in and when the tokens were last kept, as last read (nothing secret); `nil` before any read.
    var lastKnown: AccountTokens? { get }
    /// What signs in again, for a lapsed sign-in's notice: `calwatch fleet sign-in <calendar>`.
    var signInCommand: String { get }
}

/// A vault in an account's settings, which compare by the vault's identity.
public struct AccountVaultReference: Sendable, Hashable {
    public let vault: any AccountVault

    public init(_ vault: any AccountVault) { self.vault = vault }

    public static func == (left: Self, right: Self) -> Bool { left.vault === right.vault }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(vault)) }
}

/// Tokens sealed for a place that is not the user's own (a fleet's database): AES-GCM with a key derived from a
/// secret the watchers share (`fleet: tokenKey:`), bound to the calendar's name, so that whoever can write the table
/// can neither read the tokens nor move one calendar's to another.
public struct SealedTokens: Sendable {
    /// The derived key's bytes (`SymmetricKey` is not `Sendable`).
    private let bytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: bytes) }

    /// The shortest secret a key is derived from: 32 characters (`openssl rand -base64 32` gives 44).
    public static let shortestSecret = 32

    /// The key derived from `secret` (its first line, as a credential file or program gives it); `nil` when shorter
    /// than `shortestSecret`.
    public init?(secret: String) {
        let line = secret.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        guard line.utf8.count >= Self.shortestSecret else { return nil }
        bytes = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Array(line.utf8)), salt: Array("calwatch".utf8),
            info: Array("fleet account tokens v1".utf8), outputByteCount: 32
        ).withUnsafeBytes { Array($0) }
    }

    /// The key whose secret `command` prints (a program of `fleet.credentials:`) or `file` holds (a systemd
    /// credential), as every watcher and `calwatch fleet sign-in` read it; a failure says why, never the secret.
    public static func read(command: [String]?, file: String?) async throws(AccountFailure) -> SealedTokens {
        guard command != nil || file != nil else {
            throw AccountFailure(reason: "no key for the fleet's account tokens (fleet: tokenKey:)")
        }
        let secret: String
        do throws(PasswordCommand.Failure) {
            if let command {
                secret = try await PasswordCommand.run(command)
            } else {
                secret = try await PasswordCommand.firstLine(ofFile: file ?? "")
            }
        } catch {
            throw AccountFailure(reason: "cannot read the fleet's token key: \(error.description)")
        }
        guard let key = SealedTokens(secret: secret) else {
            throw AccountFailure(
                reason: "the fleet's token key is shorter than \(shortestSecret) characters; make one with "
                    + "`openssl rand -base64 32`")
        }
        return key
    }

    private static func bound(to calendar: String) -> [UInt8] { Array("calwatch fleet calendar\n\(calendar)".utf8) }

    /// `tokens` sealed for `calendar`: base64 of the nonce, the ciphertext and the tag.
    public func seal(_ tokens: AccountTokens, calendar: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let box = try AES.GCM.seal(
            try encoder.encode(tokens), using: key, authenticating: Self.bound(to: calendar))
        return box.combined!.base64EncodedString()
    }

    /// The tokens `sealed` holds for `calendar`; `nil` when it was sealed with another key or for another calendar
    /// (or is not calwatch's).
    public func open(_ sealed: String, calendar: String) -> AccountTokens? {
        guard let data = Data(base64Encoded: sealed), let box = try? AES.GCM.SealedBox(combined: data),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Self.bound(to: calendar))
        else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(AccountTokens.self, from: plain)
    }
}
