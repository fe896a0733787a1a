import Foundation
import Yams

/// Reads `config.yml` into a `Configuration` (docs/design.md §8).
///
/// The YAML is composed into nodes, not decoded into `Codable` types, so every problem can name its key and line,
/// unknown keys are caught, and all problems of a file are reported at once instead of the first only.
public enum ConfigurationLoader {
    /// Reads the file at `path`. `environment` (default: the process's) expands `$VARS` and gives `HOME` for `~`.
    /// `sinks` are the kinds of sink the program offers; `nil`, for a command that delivers nothing, leaves
    /// `sinks:` unread. `sources` are the kinds of calendar on a server it reads.
    public static func load(
        path: String, environment: [String: String]? = nil, sinks: SinkKinds?, sources: SourceKinds
    ) throws(ConfigurationError) -> Configuration {
        // A file handle reads what `contents(atPath:)` refuses: /dev/null, a pipe from process substitution. It
        // reads at most `largestFile` bytes and one more, so /dev/zero or an endless pipe is an error, not a hang.
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? Self.read(handle) else {
            let reason =
                FileManager.default.fileExists(atPath: path)
                ? "cannot be read; check its permissions" : "does not exist; check the path given to --config"
            throw ConfigurationError(file: path, problems: [ConfigurationProblem(line: nil, key: nil, message: reason)])
        }
        guard data.count <= largestFile else {
            let message = "is larger than \(largestFile / 1024) KiB; a configuration is a few lines of YAML"
            throw ConfigurationError(
                file: path, problems: [ConfigurationProblem(line: nil, key: nil, message: message)])
        }
        let text = String(decoding: data, as: UTF8.self)
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var configuration = try parse(
            text, file: path, directory: directory, environment: environment, sinks: sinks, sources: sources)
        var hasher = EventID.Hasher()
        // The real path: `config.yml`, `./config.yml` and a link to it are one configuration.
        hasher.feed(realPath(path) ?? path)
        hasher.feed(text)
        configuration.readFrom = hasher.id.description
        return configuration
    }

    /// `path` absolute with every symbolic link resolved, when it exists.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The most a configuration file may hold (the documented example is 5 KiB).
    static let largestFile = 1024 * 1024

    private static func read(_ handle: FileHandle) throws -> Data {
        var data = Data()
        while data.count <= largestFile, let chunk = try handle.read(upToCount: 64 * 1024), !chunk.isEmpty {
            data.append(chunk)
        }
        return data
    }

    /// The home `~` stands for: `$HOME`, else (unset or empty) the account's home. Foundation's `NSHomeDirectory()`
    /// reads the password database and passes `$HOME` by, so a daemon run with another `HOME` would disagree with
    /// its own configuration about where `~` is.
    public static func home(environment: [String: String]? = nil) -> String {
        (environment ?? ProcessInfo.processInfo.environment)["HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? NSHomeDirectory()
    }

    /// Reads configuration text; relative paths in it are relative to `directory`.
    public static func parse(
        _ text: String, file: String, directory: String,
        environment: [String: String]? = nil, sinks: SinkKinds?, sources: SourceKinds
    ) throws(ConfigurationError) -> Configuration {
        let environment = environment ?? ProcessInfo.processInfo.environment
        let home = home(environment: environment)
        let reader = ConfigurationReader(
            paths: PathExpander(home: home, environment: environment, directory: directory), sinks: sinks,
            sources: sources)
        var configuration = Configuration(home: home)
        configuration.sourceKinds = sources
        configuration.sinks = sinks?.standard ?? []
        configuration.file = file
        configuration.instance =
            "\(environment["USER"] ?? environment["LOGNAME"] ?? "calwatch")@\(ProcessInfo.processInfo.hostName)"
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw ConfigurationError(file: file, problems: [Self.syntaxProblem(error)])
        }
        if let root { reader.read(root, into: &configuration) }
        configuration.fileIsEmpty = root.map { $0.null != nil } ?? true
        guard reader.problems.isEmpty else {
            throw ConfigurationError(
                file: file,
                problems: reader.problems.sorted { ($0.line ?? 0, $0.column ?? 0) < ($1.line ?? 0, $1.column ?? 0) })
        }
        return configuration
    }

    private static func syntaxProblem(_ error: any Error) -> ConfigurationProblem {
        switch error {
        case YamlError.scanner(_, let problem, let mark, _), YamlError.parser(_, let problem, let mark, _),
            YamlError.composer(_, let problem, let mark, _):
            return ConfigurationProblem(line: mark.line, key: nil, message: "not valid YAML: \(problem)")
        case YamlError.duplicatedKeysInMapping(let duplicates, let context):
            return ConfigurationProblem(
                line: context.mark.line, key: duplicates.first,
                message: "is given more than once in the same section; keep one")
        default:
            return ConfigurationProblem(line: nil, key: nil, message: "not valid YAML: \(error)")
        }
    }
}

/// One thing wrong with a configuration file, worded for the user.
public struct ConfigurationProblem: Sendable, Hashable, CustomStringConvertible {
    /// 1-based line, when known.
    public var line: Int?
    /// 1-based column, when known: orders problems on one line as they stand in the file.
    var column: Int?
    /// The key's path, such as `reminders.offsets[1]`.
    public var key: String?
    public var message: String

    public var description: String {
        [line.map { "line \($0)" }, key].compactMap { $0 }.joined(separator: ": ")
            + (line == nil && key == nil ? "" : ": ") + message
    }
}

/// A configuration file that cannot be used, with every problem found in it.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var problems: [ConfigurationProblem]

    /// One problem per line, `file:line: error: key: message`, the shape compilers use so editors can jump to it.
    public var description: String {
        problems.map { problem in
            "\(file):" + (problem.line.map { "\($0):" } ?? "") + " error: "
                + (problem.key.map { "\($0): " } ?? "") + problem.message
        }.joined(separator: "\n")
    }
}

/// `~`, `$VAR`, `${VAR}` and paths relative to the configuration file.
struct PathExpander {
    var home: String
    var environment: [String: String]
    /// The configuration file's folder.
    var directory: String

    /// The expanded absolute path, or what is wrong with it.
    func expand(_ text: String) -> Result<String, PathProblem> {
        var expanded = ""
        var rest = Substring(text)
        if rest == "~" || rest.hasPrefix("~/") {
            expanded = home
            rest = rest.dropFirst()
        }
        while let dollar = rest.firstIndex(of: "$") {
            expanded += rest[..<dollar]
            rest = rest[rest.index(after: dollar)...]
            let name: Substring
            if rest.first == "{" {
                guard let close = rest.firstIndex(of: "}") else { return .failure(.unclosedBrace) }
                name = rest[rest.index(after: rest.startIndex)..<close]
                rest = rest[rest.index(after: close)...]
            } else {
                name = rest.prefix { $0 == "_" || $0.isASCII && ($0.isLetter || $0.isNumber) }
                rest = rest.dropFirst(name.count)
            }
            guard !name.isEmpty else { return .failure(.emptyName) }
            guard let value = environment[String(name)] else { return .failure(.unset(String(name))) }
            expanded += value
        }
        expanded += rest
        if !expanded.hasPrefix("/") { expanded = directory + "/" + expanded }
        return .success((expanded as NSString).standardizingPath)
    }

    enum PathProblem: Error, CustomStringConvertible {
        case unset(String)
        case unclosedBrace, emptyName

        var description: String {
            switch self {
            case .unset(let name): "uses $\(name), which is not set in the environment"
            case .unclosedBrace: "has ${ without its closing }"
            case .emptyName: "has a $ without a variable name after it (write $$ nowhere; paths take $NAME or ${NAME})"
            }
        }
    }
}

/// Durations as the configuration writes them: `45s`, `30m`, `2h`, `60d`, or combined, `1h30m`.
public enum DurationText {
    /// Seconds, or `nil` when the text is not a duration.
    public static func seconds(_ text: String) -> Int64? {
        var total: Int64 = 0
        var number: Int64?
        for character in text {
            if let digit = character.wholeNumberValue, character.isASCII {
                let (times, overflow1) = (number ?? 0).multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(Int64(digit))
                if overflow1 || overflow2 { return nil }
                number = sum
                continue
            }
            guard let value = number else { return nil }
            let unit: Int64
            switch character {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86_400
            default: return nil
            }
            let (part, overflow1) = value.multipliedReportingOverflow(by: unit)
            let (sum, overflow2) = total.addingReportingOverflow(part)
            if overflow1 || overflow2 { return nil }
            total = sum
            number = nil
        }
        // A bare number has no unit, which is only clear for zero.
        if let number { return number == 0 && total == 0 ? 0 : nil }
        return text.isEmpty ? nil : total
    }

    /// `1h30m`, `45s`: the shortest text for a number of seconds.
    public static func text(_ seconds: Int64) -> String {
        if seconds == 0 { return "0s" }
        var rest = seconds
        var text = ""
        for (unit, suffix) in [(Int64(86_400), "d"), (3600, "h"), (60, "m"), (1, "s")] where rest >= unit {
            text += "\(rest / unit)\(suffix)"
            rest %= unit
        }
        return text
    }
}
