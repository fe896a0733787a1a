import ArgumentParser
import CalWatchCore
import CalWatchDaemon
import CalWatchPostgres
import CalWatchRemote
import CalWatchRuntime
import Foundation

extension CalwatchCommand.Fleet {
    /// `calwatch fleet sign-in NAME`: a sign-in to an account calendar of the fleet, its tokens sealed into the
    /// fleet's database, where the watcher holding the calendar reads them.
    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-in",
            abstract:
                "Sign in to an account calendar of the fleet; its tokens are kept sealed in the fleet's database.",
            discussion: """
                The calendar is a row added with `calwatch fleet add --account ACCOUNT --name NAME`. The sign-in is \
                with the application of ACCOUNT in accounts: of config.yml (the watchers' own), as `calwatch \
                account add` signs in: a browser, --no-browser or --device-code. The tokens are sealed (AES-GCM) \
                with the secret of the credential `fleet: tokenKey:` names, which every watcher resolves on its own \
                machine (fleet: credentials:, or a systemd credential), and bound to the calendar's name: whoever \
                can read or write the database can neither read them nor move them to another calendar. Only the \
                watcher holding the calendar's lease refreshes them. The calendar's person becomes the address \
                signed in with when it names nobody. Signing in again replaces the tokens; the watcher takes the new \
                ones at its next poll.
                """)

        @OptionGroup var database: FleetDatabaseOption

        @Argument(help: ArgumentHelp("The account calendar's name in the fleet.", valueName: "name"))
        var name: String

        @OptionGroup var signIn: SignInOptions

        @OptionGroup var settings: ConfigurationOptions

        func run() async throws {
            let name = name
            let rows = try await database.run { try $0.calendars(named: [name]) }
            guard let row = rows.first else {
                StandardStreams.error(
                    "calwatch: the fleet has no calendar named \(FleetText.cell(name)); add it first (calwatch fleet "
                        + "add --account ACCOUNT --name \(FleetText.cell(name)))\n")
                throw ExitCode.dataError
            }
            guard row.fields.kind == "account", let accountName = row.fields.address else {
                StandardStreams.error(
                    "calwatch: \(FleetText.cell(name)) is a \(FleetText.cell(row.fields.kind ?? "")) calendar; only "
                        + "calendars added with --account are signed in to\n")
                throw ExitCode.dataError
            }
            let configuration = try settings.loadOrExit(calendars: nil, useDefaultFile: true)
            let (account, _) = try CalwatchCommand.Account.account(accountName, in: configuration)
            let sealing = try await Self.sealing(configuration)
            let tokens = try await signIn.tokens(for: account, shown: name)
            let sealed = try sealing.seal(tokens, calendar: name)
            let now = CommandSupport.timestamp
            try await database.run { try $0.signIn(name, sealed: sealed, user: tokens.user, at: now) }
            StandardStreams.error(
                "Signed in to \(FleetText.cell(name))"
                    + (tokens.user.map { " as \(FleetText.cell($0))" } ?? "")
                    + "; its tokens are sealed in the fleet's database, for the watcher that holds it.\n")
        }

        /// The key of `fleet: tokenKey:`, its secret read as a watcher reads it; a problem exits 64.
        static func sealing(_ configuration: Configuration) async throws -> SealedTokens {
            do throws(AccountFailure) {
                return try await configuration.fleetAccess.sealingKey()
            } catch {
                StandardStreams.error("calwatch: fleet.tokenKey: \(error.reason)\n")
                throw ExitCode.usageError
            }
        }
    }
}
