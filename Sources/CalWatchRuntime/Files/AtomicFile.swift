import CLinux
package import Foundation
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// A file replaced whole: written beside its place, then renamed over it, so a reader (node_exporter, inotify, the
/// calendar reader) sees the old file or the new one, never half of one.
package enum AtomicFile {
    /// `partial`: the name written first (default PATH.partial), in the same folder so the rename is atomic.
    /// `durable`: the content is on disk before the rename (`fsync`), so that a power cut leaves the old file or
    /// the new one; without it (many files of a cache, made durable together with `syncFileSystem`) a power cut
    /// can leave an empty file.
    package static func replace(
        _ path: String, with data: some ContiguousBytes, mode: Int, partial: String? = nil, durable: Bool = true
    ) throws {
        let partial = partial ?? path + ".partial"
        do {
            try write(data, to: partial, mode: mode, durable: durable)
        } catch {
            unlink(partial)
            throw error
        }
        guard rename(partial, path) == 0 else {
            let failure = failure(path)
            unlink(partial)
            throw failure
        }
    }

    /// Makes every file written on the file system holding `path` durable (`syncfs`): one call after many files
    /// written without `durable`, before a record that names them is.
    package static func syncFileSystem(holding path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(path) }
        defer { close(descriptor) }
        guard CLinux_syncfs(descriptor) == 0 else { throw failure(path) }
    }

    private static func write(_ data: some ContiguousBytes, to path: String, mode: Int, durable: Bool) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode_t(mode))
        guard descriptor >= 0 else { throw failure(path) }
        defer { close(descriptor) }
        // The mode asked for, whatever the umask (and whatever a file left there before had).
        guard fchmod(descriptor, mode_t(mode)) == 0 else { throw failure(path) }
        do {
            try data.withUnsafeBytes { try DescriptorWriter(descriptor: descriptor).write($0) }
        } catch let error as DescriptorWriter.Failure {
            throw failure(path, code: error.code)
        }
        if durable, fsync(descriptor) != 0 { throw failure(path) }
    }

    private static func failure(_ path: String, code: Int32 = errno) -> CocoaError {
        CocoaError(
            .fileWriteUnknown,
            userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: Errno(rawValue: code).description])
    }
}
