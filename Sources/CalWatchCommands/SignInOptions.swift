import ArgumentParser
import CalWatchCore
import CalWatchRemote
import CalWatchRuntime
import Foundation

/// How `account add` and `fleet sign-in` sign in: PKCE on a loopback redirect (a browser opened where a desktop is),
/// the redirect's address pasted (`--no-browser`), or a device code (`--device-code`, Microsoft only).
struct SignInOptions: ParsableArguments {
    @Flag(help: "Print the sign-in address and read the address the browser was sent to from standard input.")
    var noBrowser = false

    @Flag(help: "Sign in with a code typed on another device (Microsoft only: Google's does not grant calendars).")
    var deviceCode = false

    /// The tokens a sign-in to `account` gives, who signed in known; `shown` names it in what is said. A refusal is
    /// said on standard error and exits.
    func tokens(for account: AccountSettings, shown: String) async throws -> AccountTokens {
        let grant: SignInGrant
        do {
            let identity = try account.signIn()
            if deviceCode {
                guard let microsoft = identity as? MicrosoftIdentity else {
                    StandardStreams.error(
                        "calwatch: account \(shown): Google's device flow does not grant access to "
                            + "calendars; sign in with the browser (--no-browser where this machine has none)\n")
                    throw ExitCode.usageError
                }
                let code = try await microsoft.deviceCode()
                StandardStreams.error(
                    TerminalText.safe(
                        code.message
                            ?? "To sign in, open \(code.verificationURI) and enter the code \(code.userCode).",
                        keepingLines: false) + "\n")
                grant = try await microsoft.wait(for: code) { try await Task.sleep(for: $0) }
            } else {
                grant = try await browserSignIn(identity)
            }
        } catch let refusal as SignInRefusal {
            StandardStreams.error("calwatch: account \(shown): \(refusal.reason)\n")
            throw ExitCode.failure
        } catch let failure as LoopbackRedirect.Failure {
            StandardStreams.error("calwatch: account \(shown): \(failure.reason)\n")
            throw ExitCode.failure
        } catch let failure as AccountFailure {
            StandardStreams.error("calwatch: account \(shown): \(failure.reason)\n")
            throw ExitCode.usageError
        }
        guard
            let tokens = AccountTokens(
                signIn: grant, settings: account, user: await account.user(signedInWith: grant.accessToken))
        else {
            StandardStreams.error(
                "calwatch: account \(shown): the service gave no refresh token (offline_access was not "
                    + "granted); calwatch could read the calendars for an hour only\n")
            throw ExitCode.failure
        }
        if let lapses = tokens.refreshExpires {
            StandardStreams.error(
                "warning: this sign-in ends \(lapses.formatted(.iso8601)) (\(grant.refreshExpiresIn! / 3600) hours): "
                    + "Google ends the sign-ins of an application in testing mode after 7 days. Publish the "
                    + "application in the Google Cloud console (docs/accounts.md) for one that lasts.\n")
        }
        return tokens
    }

    /// PKCE on a loopback redirect, or (`--no-browser`) the redirect's address pasted.
    private func browserSignIn(_ identity: any AccountIdentity) async throws -> SignInGrant {
        let verifier = PKCE.verifier()
        let state = PKCE.state()
        // The browser comes back to a listener here, or (`--no-browser`) to an address that does not load.
        let listener = noBrowser ? nil : try LoopbackRedirect()
        let redirect = listener?.address ?? "http://localhost"
        let url = identity.authorizationURL(redirect: redirect, state: state, challenge: PKCE.challenge(verifier))
        let query: [String: String]
        if let listener {
            StandardStreams.error(
                "Open this address in a browser to sign in (waiting 5 minutes):\n\n  \(url.absoluteString)\n\n")
            Self.openBrowser(url)
            query = try await listener.wait()
        } else {
            StandardStreams.error(
                "Open this address in a browser and sign in:\n\n  \(url.absoluteString)\n\nThe browser then goes "
                    + "to an address starting http://localhost/?code= that does not load; paste it here:\n")
            // Standard input is read on a thread of its own: a blocking read never holds the cooperative pool.
            let line = await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: readLine(strippingNewline: true) ?? "") }.start()
            }
            var found: [String: String] = [:]
            for item in URLComponents(string: line.trimmingCharacters(in: .whitespaces))?.queryItems ?? [] {
                found[item.name] = item.value ?? ""
            }
            query = found
        }
        let code = try PKCE.code(answering: state, in: query)
        return try await identity.redeem(code: code, redirect: redirect, verifier: verifier)
    }

    /// `xdg-open` with the address as its one argument, where a desktop is; nothing else is ever run.
    private static func openBrowser(_ url: URL) {
        let environment = ProcessInfo.processInfo.environment
        guard !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty,
            FileManager.default.isExecutableFile(atPath: "/usr/bin/xdg-open")
        else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/xdg-open")
        process.arguments = [url.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
