/// A deterministic event id: a 128-bit FNV-1a hash of the parts that identify an event, written as 32 hex digits.
///
/// Not a security hash: ids only need to be stable across runs and machines and not collide by accident
/// (two 64-bit FNV-1a lanes with different offsets). The planner checks ids for every candidate event, so an id is
/// two integers, and its text is made only for the events that are emitted.
public struct EventID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    /// The hash state after some parts: an occurrence's key is hashed once and reused for each of its events.
    package struct Hasher {
        private var first: UInt64 = 0xcbf2_9ce4_8422_2325
        private var second: UInt64 = 0x6c62_272e_07bb_0142

        package init() {}

        private mutating func feed(byte: UInt8) {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = second &+ (second >> 29)
        }

        /// Adds a text part, ended by a separator no text contains.
        package mutating func feed(_ text: String) {
            for byte in text.utf8 { feed(byte: byte) }
            feed(byte: 0x1f)
        }

        /// Adds an integer part (its eight bytes, little-endian, whatever the machine).
        package mutating func feed(_ value: Int64) {
            var bits = UInt64(bitPattern: value)
            for _ in 0..<8 {
                feed(byte: UInt8(truncatingIfNeeded: bits))
                bits >>= 8
            }
        }

        /// Adds raw bytes (a file's content).
        package mutating func feed(bytes: [UInt8]) {
            for byte in bytes { feed(byte: byte) }
        }

        package var id: EventID { EventID(high: first, low: second) }
    }

    /// The hash of an occurrence's key, from which its events' ids continue. The calendar is left out (see
    /// `OccurrenceKey`); journals of layout 3 and before hashed it first, and are migrated (`JournalStore`).
    package static func seed(_ key: OccurrenceKey) -> Hasher {
        var hasher = Hasher()
        hasher.feed(key.uid)
        hasher.feed(key.recurrenceID?.description ?? "")
        // Outside a fleet nothing more, so ids stay what they were.
        if !key.scope.isEmpty { hasher.feed(key.scope) }
        return hasher
    }

    /// The id of an event of `type` about the occurrence hashed in `seed`, told apart from its siblings by a tag
    /// (what the numbers mean) and numbers (offsets, instants).
    package static func make(_ seed: Hasher, _ type: EventType, _ tag: String, _ numbers: Int64...) -> EventID {
        var hasher = seed
        hasher.feed(type.rawValue)
        hasher.feed(tag)
        for number in numbers { hasher.feed(number) }
        return hasher.id
    }

    /// Reads the 32 hex digits of `description`.
    public init?(hex: some StringProtocol) {
        guard hex.utf8.count == 32, let high = UInt64(hex.prefix(16), radix: 16),
            let low = UInt64(hex.dropFirst(16), radix: 16)
        else { return nil }
        self.init(high: high, low: low)
    }

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    public var description: String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            write(to: buffer)
            return 32
        }
    }

    /// The 32 hex digits into `buffer` (32 bytes at least): ids are written for every event, into the journal and
    /// every line, without a `String` in between.
    func write(to buffer: UnsafeMutableBufferPointer<UInt8>) {
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { digits in
            for index in 0..<16 {
                buffer[index] = digits[Int((high >> UInt64(60 - index * 4)) & 0xf)]
                buffer[16 + index] = digits[Int((low >> UInt64(60 - index * 4)) & 0xf)]
            }
        }
    }

    public static func < (a: EventID, b: EventID) -> Bool { (a.high, a.low) < (b.high, b.low) }
}
