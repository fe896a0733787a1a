package import CalWatchCore

/// The values of one row to insert, kept for the next row: texts are written into one byte buffer that
/// `SQLiteStatement.run` binds in place, so an insert allocates nothing. Values go to `?1`, `?2`, … in the order
/// they are appended. The same row is a line of PostgreSQL's COPY text for the PostgreSQL sink.
package struct SQLRow: ~Copyable {
    package var buffer = JSONLineWriter(capacity: 4096)
    package var values: [Value] = []

    package enum Value {
        case integer(Int64)
        case text(Range<Int>)
        case null
    }

    package init() { reset() }

    /// Empties the row for the next one, keeping its memory.
    package mutating func reset() {
        buffer.reset()
        buffer.append(text: " ")
        values.removeAll(keepingCapacity: true)
    }

    package mutating func append(_ number: Int64?) { values.append(number.map { .integer($0) } ?? .null) }

    package mutating func append(_ text: String?) {
        guard let text else { return values.append(.null) }
        appendText { $0.append(text: text) }
    }

    /// `2027-03-01T08:30:00Z`.
    package mutating func append(_ instant: Instant) { appendText { $0.append(instant: instant) } }

    /// An event id's 32 hex digits.
    package mutating func append(_ id: EventID) { appendText { $0.append(id: id) } }

    /// A RECURRENCE-ID as its `description` reads, or NULL.
    package mutating func append(_ value: DateValueText?) {
        guard let value else { return values.append(.null) }
        appendText { $0.append(dateValue: value) }
    }

    /// `2027-03-01T08:30:00.042Z`.
    package mutating func append(_ timestamp: Timestamp) { appendText { $0.append(timestamp: timestamp) } }

    /// A 64-bit FNV-1a hash of the values, to tell rows of different content apart.
    package var contentHash: Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func feed(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        buffer.bytes.withUnsafeBufferPointer { bytes in
            for value in values {
                switch value {
                case .integer(let number):
                    feed(1)
                    for shift in stride(from: 0, to: 64, by: 8) {
                        feed(UInt8(truncatingIfNeeded: number >> Int64(shift)))
                    }
                case .text(let range):
                    feed(2)
                    for byte in bytes[range] { feed(byte) }
                    feed(0)
                case .null: feed(3)
                }
            }
        }
        return Int64(bitPattern: hash)
    }

    /// A text made by `write` (a JSON object, say) straight into the buffer.
    package mutating func appendText(_ write: (inout JSONLineWriter) -> Void) {
        let start = buffer.bytes.count
        write(&buffer)
        values.append(.text(start..<buffer.bytes.count))
    }

    /// Appends the row to `copy` as one line of PostgreSQL's COPY text format: values separated by tabs, NULL as
    /// `\N`, backslash, tab, newline and carriage return escaped. NUL bytes, which PostgreSQL's text cannot hold,
    /// are dropped (libical's strings never carry one). The first `nullingFirst` values are written as NULL.
    package func appendCopyLine(to copy: inout [UInt8], nullingFirst nulled: Int = 0) {
        let backslash = UInt8(ascii: "\\")
        buffer.bytes.withUnsafeBufferPointer { bytes in
            for (index, value) in values.enumerated() {
                if index > 0 { copy.append(UInt8(ascii: "\t")) }
                switch index < nulled ? .null : value {
                case .integer(let number): copy.append(contentsOf: String(number).utf8)
                case .null: copy.append(contentsOf: [backslash, UInt8(ascii: "N")])
                case .text(let range):
                    for byte in bytes[range] {
                        switch byte {
                        case 0: continue
                        case backslash: copy.append(contentsOf: [backslash, backslash])
                        case UInt8(ascii: "\t"): copy.append(contentsOf: [backslash, UInt8(ascii: "t")])
                        case UInt8(ascii: "\n"): copy.append(contentsOf: [backslash, UInt8(ascii: "n")])
                        case UInt8(ascii: "\r"): copy.append(contentsOf: [backslash, UInt8(ascii: "r")])
                        default: copy.append(byte)
                        }
                    }
                }
            }
        }
        copy.append(UInt8(ascii: "\n"))
    }
}

extension SQLRow {
    /// The columns of an event's occurrence as the database sinks store it: calendar, UID, RECURRENCE-ID, kind,
    /// summary, location, start, end, and `{"flight":…,"meeting":…}`. Their `contentHash` is the occurrence's
    /// version: a changed occurrence (moved, renamed, reclassified) is a new row.
    package mutating func appendOccurrenceColumns(of entry: JournalStore.Entry) {
        let event = entry.event
        append(event.key.calendar)
        append(event.key.uid)
        append(event.key.recurrenceID)
        append(entry.facts.kind.rawValue)
        append(entry.occurrence?.summary)
        append(entry.occurrence?.location)
        append(event.occurrenceStart)
        append(event.occurrenceEnd)
        appendText { writer in
            writer.beginObject()
            ClassificationJSON.writeFlight(
                entry.facts.flight, departure: event.occurrenceStart, arrival: event.occurrenceEnd,
                leaveBy: entry.facts.leaveBy, to: &writer)
            ClassificationJSON.writeMeeting(entry.facts.meeting, to: &writer)
            writer.endObject()
        }
    }
}
