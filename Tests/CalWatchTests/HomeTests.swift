import Foundation
import Testing

/// Where a command looks when no `--config` is given: `$HOME`, as a shell, a container or a service manager sets it.
@Suite struct HomeTests {
    @Test func withoutConfigTheFileAndJournalAreUnderHome() async throws {
        let home = TestFolders.path("calwatch-home")
        try FileManager.default.createDirectory(atPath: home + "/.config/calwatch", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/cal", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        try "calendars: [\(home)/cal]\ntimezone: UTC\n".write(
            toFile: home + "/.config/calwatch/config.yml", atomically: true, encoding: .utf8)
        try NextDaemonTests.put(
            NextDaemonTests.item("home", "Planning at home", start: 600, end: 1800), as: "home.ics", in: home + "/cal")
        // XDG_CONFIG_HOME empty counts as unset, so ~/.config is $HOME/.config.
        let run = try await CommandLineTests().calwatch(
            ["next", "--no-daemon"], environment: ["HOME": home, "XDG_CONFIG_HOME": ""])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("Planning at home"), "\(run.output)")
        // With no file at all, the journal the daemon keeps (and `dismiss` answers in) is under $HOME too. Not a
        // hook's: another test's daemon in this process sets CALWATCH_STATE, which children inherit.
        try FileManager.default.removeItem(atPath: home + "/.config/calwatch/config.yml")
        let dismiss = try await CommandLineTests().calwatch(
            ["dismiss", "0123456789abcdef0123456789abcdef"],
            environment: ["HOME": home, "XDG_CONFIG_HOME": "", "CALWATCH_STATE": ""])
        #expect(dismiss.errors.contains("no journal at \(home)/.local/state/calwatch/journal.db"), "\(dismiss.errors)")
    }
}
