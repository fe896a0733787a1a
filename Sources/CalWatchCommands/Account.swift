import ArgumentParser
import CalWatchCore
import CalWatchRemote
import CalWatchRuntime
import Foundation

extension CalwatchCommand {
    /// `calwatch account`: signing in to the accounts of `accounts:` in config.yml.
    struct Account: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign in to the Microsoft 365, Outlook.com and Google accounts of accounts: in config.yml.",
            discussion: """
                An account's calendars are read through Microsoft Graph or Google's Calendar API and appear as \
                <account>/<calendar> for rules, why, next, replay, watch and the sinks, like any calendar (in a \
                fleet: `calwatch fleet sign-in`). Signing in keeps a refresh \
                token in your Secret Service (gnome-keyring, KeePassXC) when it is unlocked, else in a file only you \
                can read ($XDG_STATE_HOME/calwatch/accounts/<name>.json); every token the service rotates is saved \
                before it is used. A sign-in that lapses is said in the log, by `check` and `account status`, and as \
                an accountSignInNeeded event to the sinks. docs/accounts.md says how to register the application \
                whose clientId the account names.

                Examples:
                  calwatch account add work                 # a browser on this machine
                  calwatch account add work --no-browser    # over SSH: paste the address the browser ends at
                  calwatch account add work --device-code   # a code typed at microsoft.com/devicelogin
                  calwatch account status
                  calwatch account remove work
                """,
            subcommands: [Add.self, List.self, Status.self, Remove.self])

        /// The accounts of the configuration, in order.
        static func accounts(_ settings: ConfigurationOptions) throws -> [(AccountSettings, SourceSettings)] {
            accounts(in: try settings.loadOrExit(calendars: nil, useDefaultFile: true))
        }

        static func accounts(in configuration: Configuration) -> [(AccountSettings, SourceSettings)] {
            configuration.sources.compactMap { source in (source.kind as? AccountSettings).map { ($0, source) } }
        }

        static func account(_ name: String, _ settings: ConfigurationOptions) throws -> (
            AccountSettings, SourceSettings
        ) {
            try account(name, in: try settings.loadOrExit(calendars: nil, useDefaultFile: true))
        }

        /// The account `name` of `configuration`; one it lacks is said, naming those it has, and exits 64.
        static func account(_ name: String, in configuration: Configuration) throws -> (
            AccountSettings, SourceSettings
        ) {
            let all = accounts(in: configuration)
            guard let found = all.first(where: { $0.0.name == name }) else {
                StandardStreams.error(
                    "calwatch: no account named '\(TerminalText.safe(name, keepingLines: false))' in accounts: of "
                        + "\(configuration.file ?? ConfigurationOptions.defaultPath)"
                        + (all.isEmpty
                            ? "; add one (docs/accounts.md)\n"
                            : "; it has \(all.map(\.0.name).joined(separator: ", "))\n"))
                throw ExitCode.usageError
            }
            return found
        }
    }
}

extension CalwatchCommand.Account {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign in to an account and keep its tokens.",
            discussion: """
                By default the sign-in page opens in a browser (where a desktop is) and comes back to calwatch on \
                127.0.0.1 at a free port, with PKCE; the address is printed on standard error either way. With \
                --no-browser, open the address anywhere, sign in, and paste the address the browser was sent to \
                (http://localhost/?code=…; the page itself will not load) on standard input. With --device-code, \
                type the code shown at the address shown, on any device; organisations often block this flow \
                (AADSTS53003): then sign in with the browser. Exits 0 once the tokens are kept.
                """)

        @Argument(help: "The account's name in accounts: of config.yml.")
        var name: String

        @OptionGroup var signIn: SignInOptions

        @OptionGroup var settings: ConfigurationOptions

        func run() async throws {
            let (account, _) = try CalwatchCommand.Account.account(name, settings)
            let tokens = try await signIn.tokens(for: account, shown: account.name)
            let kept = try await tokens.save(account: account.name, choosing: true)
            StandardStreams.error(
                "Signed in to \(account.name)"
                    + (tokens.user.map { " as \(TerminalText.safe($0, keepingLines: false))" } ?? "")
                    + "; its tokens are kept \(kept.kept(account: account.name)).\n")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the accounts and who is signed in to each.")

        @OptionGroup var settings: ConfigurationOptions

        func run() async throws {
            for (account, source) in try CalwatchCommand.Account.accounts(settings) {
                let tokens = try? AccountTokens.record(account: account.name)
                let who =
                    tokens.map { tokens in
                        "signed in" + (tokens.user.map { " as \(TerminalText.safe($0, keepingLines: false))" } ?? "")
                            + (tokens.refreshExpires.map { ", until \($0.formatted(.iso8601)) (testing mode)" } ?? "")
                    }
                    ?? "not signed in (calwatch account add \(account.name))"
                print("\(account.name)\t\(account.provider.rawValue)\tevery \(source.every) s\t\(who)")
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that each account's sign-in still works.",
            discussion: """
                Asks the service for a new access token (rotating the refresh token, which is saved) and lists the \
                account's calendars. Exits 1 when any account needs signing in again, and says why (AADSTS700082: \
                90 days without use; AADSTS50173: a password changed; AADSTS53003: conditional access).
                """)

        @Argument(help: "The accounts to check (default: all).")
        var names: [String] = []

        @OptionGroup var settings: ConfigurationOptions

        func run() async throws {
            var failed = false
            for (account, _) in try CalwatchCommand.Account.accounts(settings)
            where names.isEmpty || names.contains(account.name) {
                do {
                    _ = try await AccountTokenKeeper(settings: account).accessToken(forcingRefresh: true)
                    if let record = try? AccountTokens.record(account: account.name), record.endsSoon(),
                        let lapses = record.refreshExpires
                    {
                        failed = true
                        print(
                            "\(account.name): the sign-in works, but ends \(lapses.formatted(.iso8601)) (testing mode)")
                    } else {
                        print("\(account.name): the sign-in works")
                    }
                } catch {
                    failed = true
                    print("\(account.name): \(error)")
                }
            }
            if failed { throw ExitCode.failure }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget an account's tokens and its copy of the calendars.",
            discussion: "The account stays in config.yml; remove its entry there too, or sign in again with add.")

        @Argument(help: "The account's name.")
        var name: String

        @OptionGroup var settings: ConfigurationOptions

        func run() async throws {
            let (account, _) = try CalwatchCommand.Account.account(name, settings)
            let removed: Bool
            do {
                removed = try await AccountTokens.remove(account: account.name)
            } catch let failure as AccountFailure {
                StandardStreams.error("calwatch: account \(account.name): \(failure.reason)\n")
                throw ExitCode.failure
            }
            try? FileManager.default.removeItem(atPath: FeedCache.root() + "/accounts/" + account.name)
            StandardStreams.error(
                removed ? "Removed \(account.name)'s tokens and copy.\n" : "\(account.name) was not signed in.\n")
        }
    }
}
