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

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
