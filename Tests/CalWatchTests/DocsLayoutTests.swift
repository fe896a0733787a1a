import CalWatchDaemon
import CalWatchRemote
import Foundation
import Testing

@testable import CalWatchCore

/// The docs that describe the code's layout are checked against it, so that they cannot fall behind: every module
/// of Package.swift is in design.md's module list and development.md's layout, every top folder of a module in
/// development.md, every sink kind's page linked from design.md's delivery section, and every kind of calendar on
/// a server in design.md's inputs and the example configuration.
@Suite struct DocsLayoutTests {
    static let repository = ConfigurationTests.repository

    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: repository + "/" + path, encoding: .utf8)
    }

    /// The Swift modules Package.swift declares (not the system libraries' shims).
    static func modules() throws -> [String] {
        let package = try read("Package.swift")
        let declared = package.matches(of: /\.(?:target|executableTarget)\(\s*name: "([A-Za-z]+)"/).map {
            String($0.output.1)
        }
        return declared
    }

    @Test func everyModuleIsInTheDesignAndTheLayout() throws {
        let modules = try Self.modules()
        #expect(modules.count >= 7, "\(modules)")
        let design = try Self.read("docs/design.md")
        let development = try Self.read("docs/development.md")
        let dataFlow = String(design[design.range(of: "## 1. Data flow")!.lowerBound...].prefix(6000))
        for module in modules {
            #expect(dataFlow.contains("`\(module)`"), "design.md §1 does not name `\(module)`")
            #expect(development.contains("Sources/\(module)"), "development.md does not lay out Sources/\(module)")
        }
    }

    @Test func everyTopFolderOfAModuleIsLaidOut() throws {
        let development = try Self.read("docs/development.md")
        let manager = FileManager.default
        for module in try Self.modules() {
            let root = Self.repository + "/Sources/" + module
            for name in try manager.contentsOfDirectory(atPath: root).sorted() {
                var isFolder: ObjCBool = false
                guard manager.fileExists(atPath: root + "/" + name, isDirectory: &isFolder), isFolder.boolValue
                else { continue }
                #expect(development.contains("`\(name)/`"), "development.md does not say what \(module)/\(name)/ is")
            }
        }
    }

    @Test func everySinkKindHasItsPageLinkedFromDelivery() throws {
        let design = try Self.read("docs/design.md")
        let delivery = String(design[design.range(of: "## 6. Delivery")!.lowerBound...].prefix(8000))
        for type in SinkKinds.calwatch.kinds.map({ $0.type }) {
            let page = type == "hook" ? "hooks" : type
            #expect(
                FileManager.default.fileExists(atPath: Self.repository + "/docs/sinks/\(page).md"),
                "no docs/sinks/\(page).md for type: \(type)")
            #expect(delivery.contains("](sinks/\(page).md)"), "design.md §6 does not link the \(type) sink's page")
        }
    }

    @Test func everyKindOfCalendarOnAServerIsInTheInputsAndTheExample() throws {
        let design = try Self.read("docs/design.md")
        let inputs = String(design[design.range(of: "## 2. Inputs")!.lowerBound...].prefix(4000))
        let example = try Self.read("config.yml")
        for type in SourceKinds.calwatch.kinds.map({ $0.type }) {
            // An account is an entry of `accounts:`, not a key of `calendars:`.
            let key = type == AccountSettings.type ? "accounts" : type
            #expect(inputs.contains("`\(key):`"), "design.md §2 does not name `\(key):`")
            #expect(
                example.contains(key == "accounts" ? "\n# accounts:\n" : "\(key): "),
                "config.yml does not show `\(key):`")
        }
    }

    /// A file a newcomer reads whole: at most 750 lines, a longer type split by feature (`Type+Feature.swift`),
    /// and never empty (a file left behind by a move).
    @Test func noSourceFileIsLongerThan750LinesOrEmpty() throws {
        let manager = FileManager.default
        let root = Self.repository + "/Sources"
        let files = try #require(manager.enumerator(atPath: root)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 100)
        for file in files {
            let lines = try String(contentsOfFile: root + "/" + file, encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false
            ).count
            #expect(lines <= 751, "Sources/\(file) has \(lines) lines; split it by feature (Type+Feature.swift)")
            #expect(lines > 1, "Sources/\(file) is empty; remove it")
        }
    }
}
