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

    /// The first 16 bytes of the HMAC-SHA256 of `answer/event`, base64url.
    static func token(_ kind: JournalStore.Answer.Kind, event: String, key: SymmetricKey) -> String {
        let mac = HMAC<Crypto.SHA256>.authenticationCode(for: Data("\(kind.rawValue)/\(event)".utf8), using: key)
        return Data(Data(mac).prefix(16)).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Whether `token` is the one for this answer, compared in constant time.
    public static func matches(
        _ token: String, kind: JournalStore.Answer.Kind, event: String, key: SymmetricKey
    ) -> Bool {
        let expected = Array(Self.token(kind, event: event, key: key).utf8)
        let given = Array(token.utf8)
        guard given.count == expected.count else { return false }
        return zip(given, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
