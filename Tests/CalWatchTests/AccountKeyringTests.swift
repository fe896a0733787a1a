import Foundation
import Testing

@testable import CalWatchRemote

/// Where an account's tokens are kept: in the user's Secret Service when its default collection is unlocked
/// (Debian's gnome-keyring on a private bus, `KeyringSession`), else in a 0600 file; a refresh rotates the refresh
/// token where it is kept, and `account remove` forgets it there. Against the Microsoft stand-in.
@Suite(.timeLimit(.minutes(3))) struct AccountKeyringTests {
    /// Makes the access token in the record lapse, as an hour does.
    static func lapse(_ folder: String) throws {
        let path = folder + "/state/calwatch/accounts/work.json"
        var record = try #require(
            try AccountTokens.record(account: "work", folder: folder + "/state/calwatch/accounts"))
        record.expires = .distantPast
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode(record).write(to: URL(fileURLWithPath: path))
    }

    static func record(_ folder: String) throws -> String {
        try String(contentsOfFile: folder + "/state/calwatch/accounts/work.json", encoding: .utf8)
    }

    @Test func anUnlockedKeyringKeepsTheTokensAndEachRotationThenRemoveForgetsThem() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { server in
            try AccountTests.serve([AccountTests.event("1", "Standup", start: "2026-12-01T09:00:00")], in: server)
            try await KeyringSession.with { keyring in
                let (folder, base) = try AccountTests.configured(server)
                try AccountTests.write("", server.folder + "/approve")
                let environment = base.merging(keyring.environment) { $1 }
                let cli = CommandLineTests()
                let added = try await cli.calwatch(
                    ["account", "add", "work", "--device-code", "--config", folder + "/config.yml"],
                    environment: environment)
                #expect(added.status == 0, "\(added.errors)")
                #expect(added.errors.contains("kept in the Secret Service"), "\(added.errors)")

                // The keyring holds them, as any client reads it; the record holds none.
                let first = try await keyring.secretTool(["lookup", "account", "work"])
                let secrets = try #require(
                    try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: String])
                let refresh = try #require(secrets["refreshToken"])
                #expect(refresh.count > 8)
                let record = try Self.record(folder)
                #expect(!record.contains(refresh) && record.contains("secret-service"), "\(record)")
                let label = try await keyring.secretTool(["search", "account", "work"])
                #expect(label.contains("label = calwatch: work (microsoft, meganb@contoso.com)"), "\(label)")

                // The access token in hand lapsed: a scan refreshes, and the rotated refresh token goes back there.
                try Self.lapse(folder)
                let scan = try await cli.calwatch(
                    ["scan", "--config", folder + "/config.yml", "--from", "2026-11-30", "--to", "2026-12-03"],
                    environment: environment)
                #expect(scan.status == 0, "\(scan.errors)")
                #expect(scan.output.contains("Standup"), "\(scan.output)")
                #expect(server.log.contains { $0.contains("token 200") })
                let rotated = try await keyring.secretTool(["lookup", "account", "work"])
                #expect(!rotated.isEmpty && !rotated.contains(refresh), "the rotated refresh token was not kept")
                let inKeyring = try #require(
                    try AccountTokens.record(account: "work", folder: folder + "/state/calwatch/accounts"))
                #expect(inKeyring.refreshToken.isEmpty && inKeyring.accessToken == nil)
                #expect(inKeyring.store == "secret-service")

                let removed = try await cli.calwatch(
                    ["account", "remove", "work", "--config", folder + "/config.yml"], environment: environment)
                #expect(removed.status == 0, "\(removed.errors)")
                await #expect(throws: (any Error).self) { try await keyring.secretTool(["lookup", "account", "work"]) }

                // Signed in again, then the collection locked (a log-out): the account says so, and nothing waits
                // at a prompt.
                let again = try await cli.calwatch(
                    ["account", "add", "work", "--device-code", "--config", folder + "/config.yml"],
                    environment: environment)
                #expect(again.errors.contains("kept in the Secret Service"), "\(again.errors)")
                try await keyring.lock()
                let status = try await cli.calwatch(
                    ["account", "status", "--config", folder + "/config.yml"], environment: environment)
                #expect(status.status == 1)
                #expect(status.output.contains("its collection is locked; unlock it"), "\(status.output)")
                let refused = try await cli.calwatch(
                    ["account", "remove", "work", "--config", folder + "/config.yml"], environment: environment)
                #expect(refused.status == 1 && refused.errors.contains("locked"), "\(refused.errors)")

                // A sign-in while it is locked keeps the tokens in the file, only the user can read.
                let locked = try await cli.calwatch(
                    ["account", "add", "work", "--device-code", "--config", folder + "/config.yml"],
                    environment: environment)
                #expect(locked.status == 0, "\(locked.errors)")
                #expect(
                    locked.errors.contains("kept in \(folder)/state/calwatch/accounts/work.json"), "\(locked.errors)")
                let kept = try #require(
                    try AccountTokens.record(account: "work", folder: folder + "/state/calwatch/accounts"))
                #expect(kept.store == nil && !kept.refreshToken.isEmpty)
                let mode =
                    try FileManager.default.attributesOfItem(
                        atPath: folder + "/state/calwatch/accounts/work.json")[.posixPermissions] as? Int
                #expect(mode == 0o600)
                let works = try await cli.calwatch(
                    ["account", "status", "--config", folder + "/config.yml"], environment: environment)
                #expect(works.status == 0 && works.output.contains("work: the sign-in works"), "\(works.output)")
            }
        }
    }
}
