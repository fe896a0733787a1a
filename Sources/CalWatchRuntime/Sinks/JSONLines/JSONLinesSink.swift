import CalWatchCore
import Foundation
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Writes each event as one JSON line (docs/design.md §6): to standard output, or appended to a file.
///
/// A batch is one `write`, so the lines reach the file (or the pipe) before the sink's cursor moves. A file is
/// checked when the sink opens it: a partial last line left by a crash mid-write is cut off (its events come
/// again, since their cursor never moved), and the events its last complete lines already hold are not written
/// again when the journal redelivers them, so a crash leaves no duplicate in the file.
///
/// Its writes run on a thread of its own (`BlockingExecutor`): a reader that stops reading blocks this sink alone.
public actor JSONLinesSink: EventSink {
    public nonisolated let name: String
    private let executor = BlockingExecutor(name: "calwatch-jsonl")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let output: DescriptorWriter
    private let ownsDescriptor: Bool
    /// The batch being written.
    private var lines = CloudEventJSON.Lines()
    /// The `(sequence, id)` of the lines at the end of the file when it was opened; cleared once the sink has
    /// delivered past them.
    private var tail: Set<TailLine>
    private var tailEnd: Int64
    /// The line with the highest sequence when the file was opened.
    private let newest: SinkRecord?
    /// The file ended without a newline in text calwatch did not write: the first write starts with one.
    private var needsNewline: Bool

    /// What `file(path:)` found and repaired.
    public nonisolated let repairedBytes: Int

    struct TailLine: Hashable {
        var sequence: Int64
        var id: String
    }

    /// A sink writing to standard output.
    public static func standardOutput(name: String = "jsonl:-") -> JSONLinesSink {
        JSONLinesSink(name: name, output: .standardOutput(), ownsDescriptor: false, tail: [], repairedBytes: 0)
    }

    /// A sink appending to the file at `path`, created with mode 0600 (its folders 0700) when missing.
    public static func file(path: String, name: String? = nil) throws -> JSONLinesSink {
        let name = name ?? "jsonl:" + path
        let folder = (path as NSString).deletingLastPathComponent
        do {
            if !folder.isEmpty {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        } catch {
            throw SinkError(sink: name, reason: "cannot create the folder \(folder): \(error.localizedDescription)")
        }
        let descriptor = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SinkError(sink: name, reason: "cannot open \(path): \(Errno(rawValue: errno))")
        }
        do {
            let (repaired, tail, foreignEnd) = try Self.repairTail(descriptor)
            return JSONLinesSink(
                name: name, output: DescriptorWriter(descriptor: descriptor), ownsDescriptor: true, tail: tail,
                repairedBytes: repaired, needsNewline: foreignEnd)
        } catch {
            close(descriptor)
            throw SinkError(sink: name, reason: "cannot read the end of \(path): \(error)")
        }
    }

    private init(
        name: String, output: DescriptorWriter, ownsDescriptor: Bool, tail: Set<TailLine>, repairedBytes: Int,
        needsNewline: Bool = false
    ) {
        self.name = name
        self.needsNewline = needsNewline
        self.output = output
        self.ownsDescriptor = ownsDescriptor
        self.tail = tail
        tailEnd = tail.map(\.sequence).max() ?? 0
        newest = tail.max { $0.sequence < $1.sequence }.map { SinkRecord(sequence: $0.sequence, id: $0.id) }
        self.repairedBytes = repairedBytes
    }

    deinit {
        if ownsDescriptor { close(output.descriptor) }
    }

    public func newestRecord() -> SinkRecord? { newest }

    /// Writes the batch with one write; a reader that went away is `DescriptorWriter.Closed`, other failures a
    /// `SinkError`.
    public func deliver(_ batch: [JournalStore.Entry]) throws {
        lines.reset()
        if needsNewline { lines.newline() }
        for entry in batch {
            if !tail.isEmpty && tail.contains(TailLine(sequence: entry.sequence, id: entry.event.id.description)) {
                continue  // already in the file: written before a crash that kept the cursor from moving
            }
            lines.append(
                entry.event, occurrence: entry.occurrence, facts: entry.facts, sequence: entry.sequence,
                recordedTime: entry.recorded)
        }
        do {
            try output.write(lines.writer.bytes)
        } catch let failure as DescriptorWriter.Failure {
            throw SinkError(sink: name, reason: failure.description)
        }
        needsNewline = false
        if let last = batch.last?.sequence, last >= tailEnd { tail = [] }
    }

    /// A file whose last line cannot be told apart from what a crash left: not a JSON Lines file calwatch wrote.
    struct LineTooLong: Error, CustomStringConvertible {
        var description: String { "its last line is longer than 4 MB; is this a calwatch JSON Lines file?" }
    }

    /// How much of a file's end is read for the lines a crash may have left: more than a batch of events.
    static let tailWindow = 4 << 20

    /// Cuts a partial last line calwatch wrote off the file and returns how many bytes it had, with the
    /// `(sequence, id)` of the complete lines in the last `tailWindow` bytes, and whether the file ends in text of
    /// someone else's without a newline (never cut: only what calwatch wrote is).
    static func repairTail(_ descriptor: Int32) throws -> (Int, Set<TailLine>, Bool) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw DescriptorWriter.Failure(code: errno) }
        let size = Int(status.st_size)
        guard size > 0 else { return (0, [], false) }
        let start = max(0, size - tailWindow)
        var bytes = [UInt8](repeating: 0, count: size - start)
        var read = 0
        while read < bytes.count {
            let count = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + read, $0.count - read, off_t(start + read))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw DescriptorWriter.Failure(code: count < 0 ? errno : EIO) }
            read += count
        }
        var repaired = 0
        var foreignEnd = false
        if bytes.last != 10 {
            let keep = bytes.lastIndex(of: 10).map { $0 + 1 } ?? (start == 0 ? 0 : -1)
            guard keep >= 0 else { throw LineTooLong() }
            let lastComplete = bytes[..<max(keep - 1, 0)].split(separator: 10).last
            if isCalwatchPrefix(bytes[keep...]) && (keep == 0 || lastComplete.flatMap(parse) != nil) {
                // The last line was cut short by a crash. Its events come again: the cursor never moved past them.
                repaired = bytes.count - keep
                guard ftruncate(descriptor, off_t(start + keep)) == 0 else {
                    throw DescriptorWriter.Failure(code: errno)
                }
                bytes.removeLast(repaired)
            } else {
                // Someone else's text without a final newline: kept whole; calwatch's lines start on a line of
                // their own.
                foreignEnd = true
            }
        }
        var tail = Set<TailLine>()
        for line in bytes.split(separator: 10) {
            if let parsed = parse(line) { tail.insert(parsed) }
        }
        return (repaired, tail, foreignEnd)
    }

    /// How every line calwatch writes begins (the CloudEvents envelope, `id` first).
    static let lineStart = Array(#"{"specversion":"1.0","id":""#.utf8)

    /// Whether `partial` is what a crash can leave of a calwatch line: the beginning of one.
    private static func isCalwatchPrefix(_ partial: ArraySlice<UInt8>) -> Bool {
        partial.count >= lineStart.count ? partial.starts(with: lineStart) : lineStart.starts(with: partial)
    }

    /// The `id` and `sequence` of one line calwatch wrote. Both come before any calendar text, and every string
    /// is escaped, so their first unescaped keys are theirs.
    private static func parse(_ line: ArraySlice<UInt8>) -> TailLine? {
        func value(after key: String) -> Substring? {
            guard let range = line.firstRange(of: Array(key.utf8)) else { return nil }
            let rest = line[range.upperBound...]
            guard let close = rest.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            return Substring(decoding: rest[..<close], as: UTF8.self)
        }
        guard let id = value(after: #","id":""#), let sequence = value(after: #","sequence":""#).flatMap({ Int64($0) })
        else { return nil }
        return TailLine(sequence: sequence, id: String(id))
    }
}
