import CalWatchLocalAddress
import Foundation
import NIOCore

/// The link `$XDG_RUNTIME_DIR/calwatch/next-….sock` → this daemon's socket, by which the `calwatch` front finds the
/// daemon of a configuration file without reading its YAML (`LocalAddress`). Made once the socket listens, removed
/// when it stops, if it is still this daemon's (another daemon of the same file may have taken it over since).
struct SocketLink: Sendable {
    let link: String
    let folder: String
    let socket: String

    /// `nil` without a runtime directory (no user session) or a configuration file: the front then runs the program.
    init?(configuration file: String?, socket: String, environment: [String: String]) {
        guard let file, let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        link = LocalAddress.link(configuration: file, runtimeDirectory: runtime)
        folder = LocalAddress.directory(runtime)
        self.socket = socket
    }

    /// Replaces whatever link was there in one step (a link made aside, then renamed over it).
    func make() throws {
        guard mkdir(folder, 0o700) == 0 || errno == EEXIST else {
            throw IOError(errnoCode: errno, reason: "mkdir \(folder)")
        }
        let aside = link + ".\(getpid())"
        unlink(aside)
        guard symlink(socket, aside) == 0 else { throw IOError(errnoCode: errno, reason: "symlink \(aside)") }
        guard rename(aside, link) == 0 else {
            let failure = errno
            unlink(aside)
            throw IOError(errnoCode: failure, reason: "rename to \(link)")
        }
    }

    func remove() {
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == socket { unlink(link) }
    }
}
