package import Foundation

/// A file replaced whole: written beside its place, then renamed over it, so a reader (node_exporter, inotify, the
/// calendar reader) sees the old file or the new one, never half of one.
package enum AtomicFile {
    /// `partial`: the name written first (default PATH.partial), in the same folder so the rename is atomic.
    package static func replace(_ path: String, with data: Data, mode: Int, partial: String? = nil) throws {
        let partial = partial ?? path + ".partial"
        guard FileManager.default.createFile(atPath: partial, contents: data, attributes: [.posixPermissions: mode])
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: partial]) }
        guard rename(partial, path) == 0 else {
            let problem = String(cString: strerror(errno))
            unlink(partial)
            throw CocoaError(
                .fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: problem])
        }
    }
}
