import Foundation

/// Base64url without padding (RFC 4648 §5): tokens that stand in a URL's path or a header as they are.
public enum Base64URL {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The bytes, or `nil` when `text` is not base64url without padding as `encode` writes it. The unused low
    /// bits of a last character must be zero (RFC 4648 §3.5): otherwise several texts would stand for one token.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        guard text.utf8.allSatisfy(isAlphabet) else { return nil }
        let base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard
            let bytes = Data(base64Encoded: base64 + String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4))
                .map(Array.init),
            encode(bytes) == String(text)
        else { return nil }
        return bytes
    }

    /// A byte of base64url's alphabet: letters, digits, `-` and `_`.
    public static func isAlphabet(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D
            || byte == 0x5F
    }
}
