import Foundation

/// Whether calwatch can write a file it is told to keep, asked before it tries (`calwatch check`).
public enum FileAccess {
    /// Why `path` cannot be written or created, or `nil` when it can: an existing file must be writable, and the
    /// nearest folder that exists must let calwatch create the rest.
    public static func writeProblem(_ path: String) -> String? {
        let manager = FileManager.default
        if manager.fileExists(atPath: path) {
            return manager.isWritableFile(atPath: path) ? nil : "\(path) is not writable"
        }
        var folder = (path as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        while !folder.isEmpty && folder != "/" && !manager.fileExists(atPath: folder, isDirectory: &isFolder) {
            folder = (folder as NSString).deletingLastPathComponent
        }
        if !folder.isEmpty && folder != "/" && !isFolder.boolValue {
            return "cannot create \(path): \(folder) is a file, not a folder"
        }
        if !manager.isWritableFile(atPath: folder.isEmpty ? "." : folder) {
            return "cannot create \(path): the folder \(folder) is not writable"
        }
        return nil
    }
}
