import CalWatchRuntime
import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The local server's token (`<journal>.token`): 32 random bytes in base64url, mode 0600, made at the first start
/// and kept; every route on TCP but `/healthz` and a signed answer asks for it.
enum ServerToken {
    /// The token at `path`, made there when there is none.
    static func loadOrMake(_ path: String) throws(ServerError) -> String {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            var generator = SystemRandomNumberGenerator()
            let token = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let bytes = Array((token + "\n").utf8)
            let written = write(fd, bytes, bytes.count)
            close(fd)
            guard written == bytes.count else {
                unlink(path)
                throw ServerError("cannot write the token \(path)")
            }
            return token
        }
        guard let data = FileManager.default.contents(atPath: path), data.count < 1024 else {
            throw ServerError("cannot read the token \(path); remove it to make a new one at the next start")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard token.utf8.count >= 32, token.utf8.allSatisfy(Base64URL.isAlphabet) else {
            throw ServerError("\(path) is not a calwatch token; remove it to make a new one at the next start")
        }
        return token
    }

    /// Whether `given` is `token`: their SHA-256 digests compared (swift-crypto compares digests in constant time),
    /// so the time taken says nothing of how much of a guess was right.
    static func matches(_ given: some StringProtocol, _ token: String) -> Bool {
        SHA256.hash(data: Array(given.utf8)) == SHA256.hash(data: Array(token.utf8))
    }
}

/// Why the local server cannot start.
struct ServerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
