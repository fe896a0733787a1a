import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to standard output and standard error the way a pipeline expects.
enum StandardStreams {
    /// Standard output; a reader that goes away (`| head`) ends the program quietly instead of killing it.
    final class Output {
        init() { signal(SIGPIPE, SIG_IGN) }

        func write(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0 {
                    if errno == EINTR { continue }
                    if errno == EPIPE { exit(0) }
                    error("calwatch: cannot write to standard output: \(String(cString: strerror(errno)))\n")
                    exit(74)
                }
                offset += written
            }
        }
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
