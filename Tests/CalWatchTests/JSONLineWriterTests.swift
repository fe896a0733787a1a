import Foundation
import Testing

@testable import CalWatchCore

/// The JSON writer's numbers and times at their edges: what every line calwatch prints is made of, written without
/// Foundation's formatters, so each shortcut is checked against the plain way.
@Suite struct JSONLineWriterTests {
    private func object(_ fill: (inout JSONLineWriter) -> Void) -> String {
        var writer = JSONLineWriter(capacity: 64)
        writer.beginObject()
        fill(&writer)
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test(arguments: [0, 7, -7, 42, -1_000_000, 1_234_567_890_123, Int.max, Int.min])
    func integersAreWrittenAsSwiftWritesThem(_ value: Int) {
        #expect(object { $0.field("n", value) } == #"{"n":\#(value)}"#)
    }

    @Test func flagsAndNulls() {
        #expect(
            object {
                $0.field("a", true)
                $0.field("b", false)
                $0.field("c", nil as Bool?)
            }
                == #"{"a":true,"b":false,"c":null}"#)
    }

    @Test func instantsOfEveryKindOfYear() {
        for (seconds, text) in [
            (Int64(0), "1970-01-01T00:00:00Z"), (1_709_164_800, "2024-02-29T00:00:00Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z"), (253_402_300_800, "+10000-01-01T00:00:00Z"),
            (-62_135_596_800, "0001-01-01T00:00:00Z"), (-1, "1969-12-31T23:59:59Z"),
        ] {
            let written = object { $0.field("t", Instant(secondsSinceEpoch: seconds)) }
            if seconds < 253_402_300_800 {
                #expect(written == #"{"t":"\#(text)"}"#)
            } else {
                // Past year 9999 the slow way writes it, as it always did.
                #expect(written.hasPrefix(#"{"t":""#) && written.hasSuffix(#"-01-01T00:00:00Z"}"#), "\(written)")
            }
        }
    }
}
