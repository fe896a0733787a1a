import Foundation
import Testing

@testable import CalWatchCore

/// calwatch against a second implementation of RFC 5545: `scripts/differential-check.py` generates calendars and
/// compares `calwatch scan` with recurring-ical-events (on icalendar and python-dateutil), item by item. The Python
/// packages come from PyPI into `.build/differential` the first time (never into the repository); `make test`
/// installs Debian's python3-venv for it.
@Suite(.timeLimit(.minutes(10))) struct DifferentialTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// The versions measured (docs/development.md, "Development"): a newer release that reads differently is a change to look
    /// at, not a test that starts failing by itself.
    static let packages = ["recurring-ical-events==3.8.2", "icalendar==7.3.0", "x-wr-timezone==2.0.1"]

    /// The virtual environment's Python, made and filled the first time.
    static func python() async throws -> String {
        try await Self.python(in: "differential", packages: packages)
    }

    /// A virtual environment's Python in `.build/<name>` (never in the repository), made and filled with `packages`
    /// from PyPI the first time, and again when the pinned versions change. Tests side by side that need the same
    /// environment wait for one making of it (two pip runs into one folder break each other).
    static func python(in name: String, packages: [String]) async throws -> String {
        let making = environments.withLock { environments in
            if let made = environments[name] { return made }
            let made = Task { try await Self.make(name, packages: packages) }
            environments[name] = made
            return made
        }
        return try await making.value
    }

    private static let environments = Locked<[String: Task<String, any Error>]>([:])

    private static func make(_ name: String, packages: [String]) async throws -> String {
        let environment = root + "/.build/" + name
        let python = environment + "/bin/python"
        let marker = environment + "/installed-" + packages.joined(separator: "+")
        if !FileManager.default.fileExists(atPath: marker) {
            try? FileManager.default.removeItem(atPath: environment)
            _ = try await runProgram(["python3", "-m", "venv", environment])
            _ = try await runProgram(
                [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"] + packages)
            _ = FileManager.default.createFile(atPath: marker, contents: nil)
        }
        return python
    }

    @Test func calwatchAgreesWithRecurringICalEventsOrTheRFCSaysWhy() async throws {
        let python = try await Self.python()
        let output = try await runProgram(
            [
                python, "scripts/differential-check.py", "--calendars", "80", "--seed", "2026", "--json",
                "--calwatch", CommandLineTests.executable.path,
            ], in: Self.root)
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "the script's summary")
        let categories = try #require(summary["categories"] as? [String: [String: Any]])
        var report = "differential run: \(summary["items"] ?? 0) items, \(summary["agreeing"] ?? 0) agree"
        for (name, category) in categories.sorted(by: { $0.key < $1.key }) {
            report +=
                "\n  \(name): \(category["differing"] ?? 0) of \(category["items"] ?? 0) differ; right: "
                + "\(category["right"] ?? "")"
        }
        print(report)
        // Nothing differs that no case explains.
        #expect((summary["unexplained"] as? [Any])?.isEmpty == true, "\(output)")
        // Every case was generated, and the two that both readers should get alike are alike.
        for (name, category) in categories {
            #expect((category["items"] as? Int ?? 0) > 0, "no item of \(name)")
        }
        #expect(categories["multiple-rrules"]?["differing"] as? Int == 0, "\(report)")
        #expect(categories["exdate-on-override"]?["differing"] as? Int == 0, "\(report)")
        #expect((summary["agreeing"] as? Int ?? 0) * 10 >= (summary["items"] as? Int ?? 0) * 7, "\(report)")
    }
}
