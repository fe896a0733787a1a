import Foundation
import SystemPackage

/// Finds the calendar files behind the paths a user names (docs/design.md §2).
///
/// A file is an `.ics` file or a CalDAV `.xml` export; `-` is standard input; a directory is a vdir root, a vdir
/// collection, or a Radicale collection. Hidden files and directories are never read as items, and only names
/// ending in `.ics` are vdir items, so the temporary files vdirsyncer and khal write (`item.icsab12cd34`) and
/// Radicale's `.Radicale.cache` are skipped.
public enum SourceDiscovery {
    /// A path that could not be used, worded for the user.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path): error: \(reason)" }
    }

    /// The sources under each path, in a stable order, and the paths that could not be used.
    public static func sources(for paths: [String]) -> (sources: [CalendarSource], failures: [Failure]) {
        let found = survey(paths)
        return (found.sources, found.failures)
    }

    /// The sources under each path, the paths that could not be used, and every directory that was searched:
    /// the collections and roots a watcher must follow (for a file, the folder holding it, since editors and
    /// sync tools replace a file by renaming another over it).
    public static func survey(_ paths: [String]) -> (
        sources: [CalendarSource], failures: [Failure], directories: [String]
    ) {
        var sources: [CalendarSource] = []
        var failures: [Failure] = []
        var directories: [String] = []
        for path in paths {
            sources += discover(path, directories: &directories, failures: &failures)
        }
        return (sources, failures, directories)
    }

    /// The directories among `paths` under which no source was found (said once, so an empty scan is explained).
    public static func directoriesWithoutCalendars(_ paths: [String], sources: [CalendarSource]) -> [String] {
        paths.filter { path in
            guard FileStatus(path)?.isDirectory == true else { return false }
            let prefix = path.hasSuffix("/") ? path : path + "/"
            return !sources.contains { $0.path.hasPrefix(prefix) }
        }
    }

    /// The sources under one path.
    public static func discover(_ path: String) throws -> [CalendarSource] {
        var directories: [String] = []
        return try discover(path, directories: &directories)
    }

    /// `FOLDER/*.pkpass`: a root of the wallet passes of a folder of `passes:` (`Configuration.passRoots`), each
    /// read as its flight. Only `.pkpass` files are read there: a folder such as ~/Downloads holds other people's
    /// `.ics` files, which are not the user's calendars. A folder that does not exist has none.
    public static let walletPasses = "/*.pkpass"

    /// The wallet passes of a `FOLDER/*.pkpass` root, at most `BoardingPasses.filesPerFolder`.
    static func walletPassSources(_ root: String, directories: inout [String]) -> [CalendarSource] {
        let folder = String(root.dropLast(walletPasses.count))
        guard FileStatus(folder)?.isDirectory == true, let entries = FileStatus.list(folder) else { return [] }
        directories.append(folder)
        return entries.filter(isWalletPass).sorted().prefix(BoardingPasses.filesPerFolder).compactMap { name in
            let path = String(path: folder, name)
            return FileStatus(path)?.notARegularFile == nil ? walletPass(at: path) : nil
        }
    }

    /// A wallet pass's file name: `.pkpass`, not hidden (a file being written).
    private static func isWalletPass(_ name: String) -> Bool {
        BoardingPasses.isPass(name) && name.hasSuffix(".pkpass")
    }

    private static func walletPass(at path: String) -> CalendarSource {
        CalendarSource(path: path, format: .walletPass, fallbackName: "Boarding passes")
    }

    /// The source a file under one of `roots` is, if it is one: a vdir or Radicale item in a folder that is not
    /// hidden, or a root itself. How a watcher tells an item from a temporary file without listing its folder.
    public static func item(at path: String, under roots: [String]) -> CalendarSource? {
        for root in roots {
            if root.hasSuffix(walletPasses) {
                let folder = String(root.dropLast(walletPasses.count))
                guard (path as NSString).deletingLastPathComponent == folder else { continue }
                return isWalletPass((path as NSString).lastPathComponent) ? walletPass(at: path) : nil
            }
            if path == root { return try? discover(path).first }
            let prefix = root.hasSuffix("/") ? root : root + "/"
            guard path.hasPrefix(prefix) else { continue }
            let parts = path.dropFirst(prefix.count).split(separator: "/")
            guard parts.count <= 9, !parts.contains(where: { $0.hasPrefix(".") }), let name = parts.last else {
                return nil
            }
            let directory = (path as NSString).deletingLastPathComponent
            let isRadicale = FileManager.default.fileExists(atPath: directory + "/.Radicale.props")
            guard isItem(name, inRadicaleCollection: isRadicale) else { return nil }
            let metadata = isRadicale ? radicaleMetadata(directory) : vdirMetadata(directory)
            return CalendarSource(
                path: path, format: .iCalendar, collectionName: metadata.name, collectionColor: metadata.color,
                fallbackName: (directory as NSString).lastPathComponent)
        }
        return nil
    }

    /// Whether a file of a collection folder is an item: a name ending in `.ics`, or in a Radicale collection any
    /// file but the collection's metadata (Radicale's items may lack the suffix). Hidden names are never items.
    static func isItem(_ name: some StringProtocol, inRadicaleCollection isRadicale: Bool) -> Bool {
        !name.hasPrefix(".") && (name.lowercased().hasSuffix(".ics") || (isRadicale && !isCollectionMetadata(name)))
    }

    /// Files whose change renames or recolours a whole collection.
    public static func isCollectionMetadata(_ name: some StringProtocol) -> Bool {
        name == "displayname" || name == "color" || name == ".Radicale.props"
    }

    private static func discover(_ path: String, directories: inout [String]) throws -> [CalendarSource] {
        var failures: [Failure] = []
        let sources = discover(path, directories: &directories, failures: &failures)
        if let first = failures.first { throw first }
        return sources
    }

    /// The sources under one path; what cannot be used goes to `failures`, and the rest is still found (one
    /// unreadable collection never hides the others).
    private static func discover(
        _ path: String, directories: inout [String], failures: inout [Failure]
    ) -> [CalendarSource] {
        if path == "-" { return [CalendarSource(path: "-", format: .iCalendar, fallbackName: "stdin")] }
        if path.hasSuffix(walletPasses) { return walletPassSources(path, directories: &directories) }
        guard let status = FileStatus(path) else {
            // Followed from the nearest folder that exists, so that the path is seen when it comes back (a vdir
            // removed and synced again, a calendar file not yet written).
            var ancestor = (path as NSString).deletingLastPathComponent
            while !ancestor.isEmpty && ancestor != "/" && FileStatus(ancestor)?.isDirectory != true {
                ancestor = (ancestor as NSString).deletingLastPathComponent
            }
            if !ancestor.isEmpty { directories.append(ancestor) }
            failures.append(
                Failure(
                    path: path,
                    reason: "no such file or directory; give an .ics file, a vdir or Radicale "
                        + "folder, a CalDAV .xml export, or - for standard input"))
            return []
        }
        if !status.isDirectory {
            if let kind = status.notARegularFile {
                failures.append(Failure(path: path, reason: "is \(kind), not a calendar file"))
                return []
            }
            directories.append((path as NSString).deletingLastPathComponent)
            let name = (path as NSString).lastPathComponent
            let isXML = name.lowercased().hasSuffix(".xml")
            return [
                CalendarSource(
                    path: path, format: isXML ? .calDAVMultistatus : .iCalendar,
                    fallbackName: (name as NSString).deletingPathExtension)
            ]
        }
        var result: [CalendarSource] = []
        var visited: [FileStatus.Identity: String] = [:]
        collect(
            directory: path, status: status, depth: 0, visited: &visited, into: &result, directories: &directories,
            failures: &failures)
        return result
    }

    /// A directory with `.Radicale.props` or items is a collection; otherwise its subdirectories are searched.
    ///
    /// Links are followed (people link collections into their vdir), but no folder is read twice: a link back up
    /// the tree would otherwise read the same items once per path, without end.
    private static func collect(
        directory: String, status: FileStatus, depth: Int, visited: inout [FileStatus.Identity: String],
        into result: inout [CalendarSource], directories: inout [String], failures: inout [Failure]
    ) {
        if let first = visited[status.identity] {
            failures.append(
                Failure(path: directory, reason: "leads back to \(first), which is already read; it is skipped"))
            return
        }
        visited[status.identity] = directory
        directories.append(directory)
        guard let entries = FileStatus.list(directory) else {
            failures.append(
                Failure(path: directory, reason: "cannot list the directory (\(Errno(rawValue: errno)))"))
            return
        }
        let isRadicale = entries.contains(".Radicale.props")
        let metadata = isRadicale ? radicaleMetadata(directory) : vdirMetadata(directory)
        let fallback = (directory as NSString).lastPathComponent
        var subdirectories: [(path: String, status: FileStatus)] = []
        for entry in entries where !entry.hasPrefix(".") {
            let full = String(path: directory, entry)
            guard let entryStatus = FileStatus(full) else { continue }  // a dangling link, or gone meanwhile
            if entryStatus.isDirectory {
                subdirectories.append((full, entryStatus))
            } else if isItem(entry, inRadicaleCollection: isRadicale) {
                if let kind = entryStatus.notARegularFile {
                    failures.append(Failure(path: full, reason: "is \(kind), not a calendar file; it is skipped"))
                    continue
                }
                result.append(
                    CalendarSource(
                        path: full, format: .iCalendar, collectionName: metadata.name, collectionColor: metadata.color,
                        fallbackName: fallback))
            }
        }
        // vdir roots hold collections one level down; deeper nesting is allowed but bounded.
        guard depth < 8 else { return }
        for subdirectory in subdirectories {
            collect(
                directory: subdirectory.path, status: subdirectory.status, depth: depth + 1, visited: &visited,
                into: &result, directories: &directories, failures: &failures)
        }
    }

    /// vdir metadata: the `displayname` and `color` files of a collection.
    private static func vdirMetadata(_ directory: String) -> (name: String?, color: String?) {
        func read(_ file: String) -> String? {
            let path = (directory as NSString).appendingPathComponent(file)
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        }
        return (read("displayname"), read("color"))
    }

    /// Radicale metadata: `D:displayname` and `ICAL:calendar-color` in `.Radicale.props` (JSON).
    private static func radicaleMetadata(_ directory: String) -> (name: String?, color: String?) {
        let path = (directory as NSString).appendingPathComponent(".Radicale.props")
        guard let data = FileManager.default.contents(atPath: path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return (nil, nil) }
        let name = (object["D:displayname"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        let color = (object["ICAL:calendar-color"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        return (name, color)
    }

    package static func reasonText(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
            let posix = POSIXErrorCode(rawValue: Int32(underlying.code))
        {
            return Errno(rawValue: posix.rawValue).description
        }
        return nsError.localizedDescription
    }
}

/// What `stat` (following links) says of a path: enough to tell a folder, a calendar file and what is neither.
struct FileStatus {
    /// Device and inode: the same folder reached by two paths has one identity.
    struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    let mode: mode_t
    let identity: Identity

    init?(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }

    init(_ status: stat) {
        mode = status.st_mode & S_IFMT
        identity = Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    var isDirectory: Bool { mode == S_IFDIR }

    /// The names in a folder, sorted, without `.` and `..`; `nil` with `errno` set when it cannot be listed.
    static func list(_ directory: String) -> [String]? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        // The name is read where it lies, up to its NUL. `d_name` is declared 256 bytes, but a record is only as
        // long as its name (`d_reclen`): copying the field (`entry.pointee.d_name`) read past the last record of
        // the stream's buffer, and a daemon rescanning a 10,000-file vdir died when that buffer ended a page.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(stream) {
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// What the path is when it is not a regular file, worded for a message (`a named pipe (FIFO)`).
    var notARegularFile: String? {
        switch mode {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFIFO: "a named pipe (FIFO)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }
}
