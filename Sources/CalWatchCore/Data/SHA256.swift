import Crypto

/// SHA-256 as hex, for checking calwatch's data files against their manifest and naming a feed's cache: swift-crypto's
/// digest (BoringSSL's), which checks the 1 MB of data files in milliseconds even in a debug build.
package enum SHA256 {
    /// The digest of `bytes` as 64 lower-case hex digits.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in Crypto.SHA256.hash(data: bytes) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
