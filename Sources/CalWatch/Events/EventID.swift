/// Deterministic event ids: a 128-bit FNV-1a hash of the parts that identify an event, as 32 hex digits.
///
/// Not a security hash: ids only need to be stable across runs and machines and not collide by accident
/// (two 64-bit FNV-1a lanes with different offsets). The parts are joined with a separator no text contains.
enum EventID {
    static func make(_ type: EventType, _ key: OccurrenceKey, _ discriminator: String) -> String {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x6c62_272e_07bb_0142
        func feed(_ text: String) {
            for byte in text.utf8 {
                first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
                second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
                second = second &+ (second >> 29)
            }
            first = (first ^ 0x1f) &* 0x0000_0100_0000_01b3
            second = (second ^ 0x1f) &* 0x0000_0100_0000_01b3
        }
        feed(type.rawValue)
        feed(key.calendar)
        feed(key.uid)
        feed(key.recurrenceID?.description ?? "")
        feed(discriminator)
        return hex(first) + hex(second)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
