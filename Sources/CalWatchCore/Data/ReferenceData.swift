import Foundation

/// calwatch's data files (airports, metropolitan areas, airlines), shipped beside the binary with a manifest that
/// records each one's version, source, licence, row count and SHA-256. A file is used only when its checksum is the
/// one recorded: a damaged or edited file is refused, reported by `calwatch check` and at start, and the tables
/// stay empty rather than hold half a file (flights are then found by their numbers, without airports).
public enum ReferenceData {
    /// One data file as its manifest describes it, and what loading it found.
    public struct File: Sendable, Hashable {
        public var name: String
        public var file: String
        public var version: String
        public var source: String
        public var licence: String
        public var rows: Int
        public var checksum: String
        /// Why the file is not used, or `nil` when it was read and matched its checksum.
        public var problem: String?
    }

    /// The folder the files were found in, the files, and what went wrong, worked out once per process.
    public struct Loaded: Sendable {
        public var folder: String?
        public var files: [File]
        /// Problems with the data as a whole (no folder, no readable manifest), worded for the user.
        public var problems: [String]
        /// The verified text of each file by name.
        var texts: [String: String]
    }

    public static let loaded: Loaded = load(from: candidateFolders())

    /// The text of a data file when it was found and matched its checksum.
    static func text(_ name: String) -> String? { loaded.texts[name] }

    /// Every problem with the data, one line each (empty when all is well).
    public static var problems: [String] {
        loaded.problems + loaded.files.compactMap { file in file.problem.map { "\(file.file): \($0)" } }
    }

    /// `airportsdata-20260905 (MIT, LICENSES/airportsdata-MIT.txt)`, or why it is missing.
    public static func summary(of name: String) -> String {
        guard let file = loaded.files.first(where: { $0.name == name }) else { return "not found" }
        return "\(file.version), \(file.licence)" + (file.problem == nil ? "" : " (refused: \(file.problem!))")
    }

    /// Where the files may be, first found wins: `CALWATCH_DATA`; the build's resource folder beside the binary;
    /// `../share/calwatch/data` from it (`/usr/bin` → `/usr/share`, `~/.local/bin` → `~/.local/share`), and
    /// `../../share/calwatch/data` (the installed program in `/usr/libexec/calwatch`); the source tree this was
    /// built from.
    static func candidateFolders() -> [String] {
        var folders: [String] = []
        if let override = ProcessInfo.processInfo.environment["CALWATCH_DATA"], !override.isEmpty {
            return [override]
        }
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let directory = (executable as NSString).deletingLastPathComponent
            folders.append(directory + "/calwatch_CalWatchCore.resources/data")
            let parent = (directory as NSString).deletingLastPathComponent
            folders.append((parent as NSString).appendingPathComponent("share/calwatch/data"))
            folders.append(
                ((parent as NSString).deletingLastPathComponent as NSString).appendingPathComponent(
                    "share/calwatch/data"))
        }
        folders.append(
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Resources/data").path)
        return folders
    }

    /// Reads the manifest in the first folder that has one, then each file it lists, checking each.
    static func load(from folders: [String]) -> Loaded {
        guard let folder = folders.first(where: { FileManager.default.fileExists(atPath: $0 + "/manifest.json") })
        else {
            return Loaded(
                folder: nil, files: [],
                problems: [
                    "calwatch's data files (airports, airlines) were not found in "
                        + folders.joined(separator: ", ")
                        + "; flights are found by their numbers only. Reinstall calwatch, or set CALWATCH_DATA to "
                        + "the folder holding manifest.json"
                ], texts: [:])
        }
        let manifestPath = folder + "/manifest.json"
        guard let data = FileManager.default.contents(atPath: manifestPath),
            let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let entries = root["files"] as? [String: [String: Any]]
        else {
            return Loaded(
                folder: folder, files: [],
                problems: ["\(manifestPath): not a calwatch data manifest; reinstall calwatch"], texts: [:])
        }
        var files: [File] = []
        var texts: [String: String] = [:]
        for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
            var file = File(
                name: name, file: entry["file"] as? String ?? name, version: entry["data_version"] as? String ?? "?",
                source: entry["source"] as? String ?? "?", licence: entry["licence"] as? String ?? "?",
                rows: entry["rows"] as? Int ?? 0, checksum: entry["checksum_sha256"] as? String ?? "")
            let path = folder + "/" + (file.file as NSString).lastPathComponent
            if let bytes = FileManager.default.contents(atPath: path) {
                let found = SHA256.hex(Array(bytes))
                if found != file.checksum {
                    file.problem =
                        "its SHA-256 is \(found), not the \(file.checksum) the manifest records: the file was changed "
                        + "or damaged, and is not used. Reinstall calwatch, or regenerate it (scripts/data-manifest.py)"
                } else {
                    texts[name] = String(decoding: bytes, as: UTF8.self)
                }
            } else {
                file.problem = "cannot be read (\(path)); reinstall calwatch"
            }
            files.append(file)
        }
        return Loaded(folder: folder, files: files, problems: [], texts: texts)
    }
}
