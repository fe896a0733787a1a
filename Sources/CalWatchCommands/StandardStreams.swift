import CalWatchCore
import CalWatchRuntime
import Foundation

/// Writing to standard output and standard error the way a pipeline expects.
enum StandardStreams {
    /// Standard output for `scan`: a reader that goes away (`| head`) ends the program quietly.
    struct Output {
        private let writer = DescriptorWriter.standardOutput()

        func write(_ bytes: [UInt8]) {
            do {
                try writer.write(bytes)
            } catch is DescriptorWriter.Closed {
                exit(0)
            } catch {
                StandardStreams.error("calwatch: cannot write to standard output: \(error)\n")
                exit(74)
            }
        }
    }

    /// Standard error, for people: calendar text in a message shows its escape sequences instead of running them.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data(TerminalText.safe(text).utf8))
    }

    /// A report for people on standard output (`explain`, `check`), made as safe as `error`; a full disk or a
    /// closed output is an error (exit 74), not silence.
    static func report(_ text: String) {
        Output().write(Array(TerminalText.safe(text).utf8))
    }
}
