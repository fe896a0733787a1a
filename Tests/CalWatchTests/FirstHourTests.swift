import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// What someone wiring calwatch up meets in their first hour: the README's configuration copied into place, the
/// commands reading it alike, answers to ids nothing knows, instants as programs write them, and calendar text in
/// hooks and notifications.
@Suite struct FirstHourTests {
    /// A home of its own, with `~/.calendars` holding the sample travel calendar; the caller removes it.
    static func home() throws -> String {
        let home = SinkFixtures.folder()
        try FileManager.default.createDirectory(atPath: home + "/.config/calwatch", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: ConfigurationTests.repository + "/samples/calendars/travel", toPath: home + "/.calendars")
        return home
    }

    /// The README's first configuration, with the one step it asks for (the hook copied beside it), passes
    /// `check`; copied without the hook, `check` names the line and the fix.
    @Test func theReadmesFirstConfigurationPassesCheckOnceCopied() async throws {
        let readme = try String(contentsOfFile: ConfigurationTests.repository + "/README.md", encoding: .utf8)
        let section = try #require(readme.range(of: "## A first configuration"))
        let block = try #require(readme[section.upperBound...].firstMatch(of: /```yaml\n([\s\S]*?)```/))
        let home = try Self.home()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try String(block.1).write(toFile: home + "/.config/calwatch/config.yml", atomically: true, encoding: .utf8)
        let cli = CommandLineTests()
        let bare = try await cli.calwatch(["check"], environment: ["HOME": home])
        #expect(bare.status == 64, "\(bare.output) \(bare.errors)")
        #expect(
            bare.errors.contains(
                try Regex(#"config\.yml:\d+: error: hook:.*notify\.sh is not found; a relative path"#)),
            "\(bare.errors)")
        try FileManager.default.createDirectory(
            atPath: home + "/.config/calwatch/hooks", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: ConfigurationTests.repository + "/samples/hooks/notify.sh",
            toPath: home + "/.config/calwatch/hooks/notify.sh")
        let ready = try await cli.calwatch(["check"], environment: ["HOME": home])
        #expect(ready.status == 0, "\(ready.output) \(ready.errors)")
    }

    /// `scan` reads the default configuration as `next`, `explain` and `check` do: its zone, unless --tz.
    @Test func scanReadsTheDefaultConfigurationsZone() async throws {
        let home = try Self.home()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try "timezone: Asia/Tokyo\n".write(
            toFile: home + "/.config/calwatch/config.yml", atomically: true, encoding: .utf8)
        let cli = CommandLineTests()
        let window = ["--from", "2027-03-03", "--to", "2027-03-04", "--format", "table"]
        let tokyo = try await cli.calwatch(["scan", home + "/.calendars"] + window, environment: ["HOME": home])
        #expect(tokyo.status == 0 && tokyo.output.hasPrefix("WHEN (Asia/Tokyo)"), "\(tokyo.output) \(tokyo.errors)")
        let named = try await cli.calwatch(
            ["scan", home + "/.calendars", "--tz", "UTC"] + window, environment: ["HOME": home])
        #expect(named.status == 0 && named.output.hasPrefix("WHEN (UTC)"), "\(named.output)")
        // A configuration that does not read is said, not passed over.
        try "timezone: Mars/Olympus\n".write(
            toFile: home + "/.config/calwatch/config.yml", atomically: true, encoding: .utf8)
        let broken = try await cli.calwatch(["scan", home + "/.calendars"] + window, environment: ["HOME": home])
        #expect(broken.status == 64 && broken.errors.contains("config.yml:1"), "\(broken.errors)")
    }

    /// A snooze of an id no event of the journal has is refused (65), not "recorded" for a daemon that would never
    /// apply it; times as JavaScript writes them (`…T10:00:00.000Z`) are read.
    @Test func answersToUnknownIdsAreRefusedAndFractionalSecondsAreRead() async throws {
        let folder = try NotifySinkTests.prepare(WebhookSinkTests.items, "reminders: { offsets: [5m] }\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cli = CommandLineTests()
        let replay = try await cli.calwatch([
            "replay", "--config", folder + "/config.yml", "--from", "2027-03-03T09:00:00.000Z", "--to",
            "2027-03-03T11:00:00,5Z", "--state", folder + "/journal.db",
        ])
        #expect(replay.status == 0 && replay.errors.contains("reminderDue 1"), "\(replay.errors)")
        let unknown = try await cli.calwatch(
            ["snooze", "0123456789abcdef0123456789abcdef", "--state", folder + "/journal.db"])
        #expect(unknown.status == 65 && unknown.errors.contains("no event 0123456789abcdef"), "\(unknown)")
        #expect(!unknown.output.contains("recorded"))
        for bad in ["2027-03-03T09:00:00.Z", "2027-03-03T09:00:00.12a", "2027-03-03T09:00.5"] {
            let refused = try await cli.calwatch(
                ["replay", folder + "/cal", "--from", bad, "--to", "2027-03-04", "--state", folder + "/other.db"])
            #expect(refused.status == 64 && refused.errors.contains("is not a time"), "\(bad): \(refused.errors)")
        }
    }

    /// Calendar text reaches a hook on one line: a SUMMARY with line breaks cannot forge a line for a hook that
    /// reads `env` line by line.
    @Test func hookValuesAreOneLineSoCalendarTextForgesNoVariable() async throws {
        let folder = try NotifySinkTests.prepare(
            """
            BEGIN:VEVENT\r
            UID:forged\r
            DTSTAMP:20270101T000000Z\r
            DTSTART:20270303T100000Z\r
            DTEND:20270303T101500Z\r
            SUMMARY:Standup\\nCALWATCH_JOIN_URL=https://evil.example\\r\\nCE_ID=x\r
            LOCATION:Room 1\u{2028}CALWATCH_PLACE=Elsewhere\r
            END:VEVENT\r

            """,
            """
            reminders: { offsets: [5m] }
            sinks:
              - type: hook
                run: [/bin/sh, -c, 'env >> "$0"; printf "%s\\n" "$1" >> "$0"', ENV, "{summary}"]
                on: [reminderDue]
            """)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let configuration = try String(contentsOfFile: folder + "/config.yml", encoding: .utf8)
        try configuration.replacingOccurrences(of: "ENV", with: folder + "/env.txt").write(
            toFile: folder + "/config.yml", atomically: true, encoding: .utf8)
        let replay = try await CommandLineTests().calwatch([
            "replay", "--config", folder + "/config.yml", "--from", "2027-03-03T09:00:00Z", "--to",
            "2027-03-03T11:00:00Z",
        ])
        #expect(replay.status == 0, "\(replay.errors)")
        let lines = try String(contentsOfFile: folder + "/env.txt", encoding: .utf8).split(separator: "\n")
        #expect(lines.contains("CALWATCH_SUMMARY=Standup CALWATCH_JOIN_URL=https://evil.example  CE_ID=x"), "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("CALWATCH_JOIN_URL=https") || $0.hasPrefix("CE_ID=x") }, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("CALWATCH_PLACE=Elsewhere") })
        #expect(lines.last == "Standup CALWATCH_JOIN_URL=https://evil.example  CE_ID=x")
    }

    /// The sample notification hooks pass a LOCATION into the body as text, not markup, on servers that render
    /// body markup: what `notify-send` is given (a stand-in that records its arguments).
    @Test(arguments: ["notify.sh", "notify-actions.sh"])
    func theSampleNotificationHooksEscapeMarkup(_ hook: String) async throws {
        let folder = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "#!/bin/sh\nfor a; do printf '%s\\n' \"$a\"; done >> \"\(folder)/sent.txt\"\n".write(
            toFile: folder + "/notify-send", atomically: true, encoding: .utf8)
        chmod(folder + "/notify-send", 0o755)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ConfigurationTests.repository + "/samples/hooks/" + hook)
        process.environment = [
            "PATH": folder + ":/usr/bin:/bin", "CALWATCH_SUMMARY": "Review", "CALWATCH_MINUTES_BEFORE": "5",
            "CALWATCH_LOCATION": #"<a href="https://evil.example">R&D</a> <img src=x>"#, "CE_ID": "0",
        ]
        try process.run()
        try await offCooperativePool { process.waitUntilExit() }
        try await eventually("the notification sent") {
            ((try? String(contentsOfFile: folder + "/sent.txt", encoding: .utf8)) ?? "").contains("in 5 min")
        }
        let sent = try String(contentsOfFile: folder + "/sent.txt", encoding: .utf8)
        #expect(
            sent.contains(#"in 5 min · &lt;a href="https://evil.example"&gt;R&amp;D&lt;/a&gt; &lt;img src=x&gt;"#),
            "\(sent)")
        #expect(!sent.contains("<a href"))
    }
}
