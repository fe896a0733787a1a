public import CalWatchRuntime
public import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The key and tokens of a phone's answer buttons (`answers:` on an ntfy webhook): the webhook signs each button's
/// address with it, and the local server takes only what it signed, for its own event.
public enum AnswerKey {
    /// The key kept beside the journal (`<journal>.answers-key`): 32 random bytes made at first use, mode 0600.
    public static func load(_ path: String) throws(SinkError) -> SymmetricKey {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if fd >= 0 {
            let key = SymmetricKey(size: .bits256)
            let written = key.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            guard written == 32 else { throw SinkError(sink: "answers", reason: "cannot write the key \(path)") }
            return key
        }
        guard let bytes = FileManager.default.contents(atPath: path), bytes.count == 32 else {
            throw SinkError(sink: "answers", reason: "cannot read the key \(path) (32 bytes); remove it to make anew")
        }
        return SymmetricKey(data: bytes)
    }

    /// `<answer>/<event id>/<token>`: what the answers' address is followed by.
    static func path(_ kind: JournalStore.Answer.Kind, event: String, key: SymmetricKey) -> String {
        "\(kind.rawValue)/\(event)/\(token(kind, event: event, key: key))"
    }

    /// The HMAC-SHA256 of `answer/event`, base64url.
    static func token(_ kind: JournalStore.Answer.Kind, event: String, key: SymmetricKey) -> String {
        Base64URL.encode(HMAC<Crypto.SHA256>.authenticationCode(for: message(kind, event: event), using: key))
    }

    /// Whether `token` is the one for this answer, verified by swift-crypto (in constant time).
    public static func matches(
        _ token: some StringProtocol, kind: JournalStore.Answer.Kind, event: String, key: SymmetricKey
    ) -> Bool {
        guard let code = Base64URL.decode(token) else { return false }
        return HMAC<Crypto.SHA256>.isValidAuthenticationCode(
            code, authenticating: message(kind, event: event), using: key)
    }

    private static func message(_ kind: JournalStore.Answer.Kind, event: String) -> Data {
        Data("\(kind.rawValue)/\(event)".utf8)
    }
}
