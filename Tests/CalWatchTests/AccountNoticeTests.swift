import CalWatchCore
import Foundation
import Testing

@testable import CalWatchRemote
@testable import CalWatchRuntime

/// A lapsed sign-in told to every sink (`accountSignInNeeded`), with `calwatch watch` as a user runs it against the
/// Microsoft stand-in (`scripts/microsoft-server.py`), a JSON Lines file, an ntfy topic (`scripts/webhook-server.py`)
/// and a desktop (dunst): one event per lapse, restarts included, worded for a phone, and no token in any of it.
@Suite(.timeLimit(.minutes(3))) struct AccountNoticeTests {
    /// The account `work` on `microsoft`, in `folder`/config.yml with `keys` of its own and `sinks`, signed in by
    /// device code, then lapsed: refreshes refused (a password changed), the access token in hand spent, no code
    /// approved unless someone signs in with it; `user`: who it was signed in as, when not the stand-in's user.
    /// Returns the environment the runs share and the tokens as they lapsed.
    static func lapsed(
        _ microsoft: FeedServer, in folder: String, keys: [String] = [], sinks: String, user: String? = nil
    ) async throws -> (environment: [String: String], tokens: AccountTokens) {
        try AccountTests.serve([AccountTests.event("1", "Standup", start: "2026-12-01T09:00:00")], in: microsoft)
        let (_, environment) = try AccountTests.configured(
            microsoft, in: folder, keys: keys, rest: "timezone: UTC\nstate: state/journal.db\nsinks:\n" + sinks)
        try AccountTests.write("", microsoft.folder + "/approve")
        let added = try await CommandLineTests().calwatch(
            ["account", "add", "work", "--device-code", "--config", folder + "/config.yml"], environment: environment)
        #expect(added.status == 0, "\(added.errors)")
        try FileManager.default.removeItem(atPath: microsoft.folder + "/approve")
        try AccountTests.write("", microsoft.folder + "/revoked")
        let tokenFolder = folder + "/state/calwatch/accounts"
        var tokens = try #require(try await AccountTokens.load(account: "work", folder: tokenFolder))
        tokens.expires = .distantPast
        if let user { tokens.user = user }
        try await tokens.save(account: "work", folder: tokenFolder)
        return (environment, tokens)
    }

    /// The messages the phone's ntfy stand-in received, as JSON.
    static func pushed(_ folder: String) -> [[String: Any]] {
        SinkFixtures.lines(folder + "/requests.jsonl").compactMap { line in
            guard let request = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            return try? JSONSerialization.jsonObject(with: Data(((request["body"] as? String) ?? "").utf8))
                as? [String: Any]
        }
    }

    @Test func aLapsedSignInReachesEverySinkOnceWithoutATokenAndDoesNotRepeatOnARestart() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { microsoft in
            try await FeedServer.with(script: "webhook-server.py") { phone in
                try await DesktopSession.with { desktop in
                    let folder = phone.folder
                    // Revoked (a password changed), and the access token in hand lapsed: the first poll is refused.
                    let (environment, tokens) = try await Self.lapsed(
                        microsoft, in: folder,
                        sinks: """
                              - { type: jsonl, path: events.jsonl }
                              - { type: webhook, preset: ntfy, url: "\(phone.url("/alerts"))" }
                              - { type: notify, bus: "\(desktop.bus)" }
                            """)
                    let secrets = [tokens.refreshToken, tokens.accessToken ?? "at-"]

                    func notices() -> [[String: Any]] {
                        SinkFixtures.lines(folder + "/events.jsonl").compactMap { line in
                            let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                            return event?["type"] as? String == "calwatch.accountSignInNeeded" ? event : nil
                        }
                    }
                    func pushed() -> [[String: Any]] { Self.pushed(folder) }
                    var watch = try WatchCommandTests.watch(in: folder, environment: environment)
                    defer { if watch.isRunning { watch.terminate() } }
                    func cards() -> [[String: String]] {
                        desktop.shown.filter { $0["category"] == "x-calwatch.account" }
                    }
                    try await eventually("the notice in the JSON Lines file, on the phone and on the desktop") {
                        !notices().isEmpty && !pushed().isEmpty && !cards().isEmpty
                    }
                    let event = try #require(notices().first)
                    let data = try #require(event["data"] as? [String: Any])
                    let account = try #require(data["account"] as? [String: Any])
                    #expect(account["name"] as? String == "work")
                    #expect(account["provider"] as? String == "microsoft")
                    #expect(account["user"] as? String == "meganb@contoso.com", "\(account)")
                    #expect((account["reason"] as? String)?.contains("AADSTS50173") == true, "\(account)")
                    #expect(account["signIn"] as? String == "calwatch account add work")
                    #expect(account["host"] as? String == ProcessInfo.processInfo.hostName)
                    #expect(data["occurrence"] == nil)
                    #expect((event["subject"] as? String)?.hasPrefix("account:work/") == true, "\(event)")
                    let line = try #require(
                        SinkFixtures.lines(folder + "/events.jsonl").first { $0.contains("SignIn") })
                    let schema = EventSchemaTests.schema
                    let problems = EventSchemaTests.Validator(root: schema).validate(
                        try EventSchemaTests.JSON.parse(line), schema)
                    #expect(problems.isEmpty, "\(problems)")

                    // On the phone: what happened and what to run where, urgent.
                    let message = try #require(pushed().first)
                    #expect(message["title"] as? String == "Sign in to work again", "\(message)")
                    let text = message["message"] as? String ?? ""
                    #expect(
                        text.contains("Microsoft 365 as meganb@contoso.com") && text.contains("AADSTS50173"), "\(text)")
                    #expect(
                        text.contains("run calwatch account add work on \(ProcessInfo.processInfo.hostName)"), "\(text)"
                    )
                    #expect(message["priority"] as? Int == 4)
                    #expect(message["tags"] as? [String] == ["key"])
                    // On the desktop: a critical card (it stays until closed).
                    let card = try #require(cards().first)
                    #expect(card["summary"] == "Sign in to work again" && card["urgency"] == "CRITICAL", "\(card)")
                    #expect(card["body"]?.contains("run calwatch account add work") == true, "\(card)")

                    // A restart, still lapsed: its first poll is refused again, and the lapse is not told twice. A second
                    // later at least: the journal refuses an event of the same id and instant by itself.
                    try await Task.sleep(for: .seconds(1.5))
                    watch.terminate()
                    try await offCooperativePool { [watch] in watch.waitUntilExit() }
                    let refusals = microsoft.log.filter { $0.contains("token 400") }.count
                    watch = try WatchCommandTests.watch(in: folder, environment: environment)
                    try await eventually("the restarted daemon's refused poll") {
                        microsoft.log.filter { $0.contains("token 400") }.count > refusals
                    }
                    // Time for a notice to be committed and delivered, were it to be (it is one wake of the loop).
                    try await Task.sleep(for: .seconds(3))
                    watch.terminate()
                    try await offCooperativePool { [watch] in watch.waitUntilExit() }
                    #expect(notices().count == 1)
                    #expect(pushed().count == 1)
                    #expect(cards().count == 1)

                    // No token in the sinks, the journal or the log.
                    let log = (try? String(contentsOfFile: folder + "/log.txt", encoding: .utf8)) ?? ""
                    let journal = String(
                        decoding: FileManager.default.contents(atPath: folder + "/state/journal.db") ?? Data(),
                        as: UTF8.self)
                    let written = [
                        log, journal, SinkFixtures.lines(folder + "/events.jsonl").joined(),
                        SinkFixtures.lines(folder + "/requests.jsonl").joined(),
                    ]
                    for secret in secrets { #expect(!written.contains { $0.contains(secret) }) }
                    #expect(log.contains("sign-in needed"), "\(log)")

                    // `why` lists the notices sent, and to which sinks.
                    let why = try await CommandLineTests().calwatch(
                        ["why", "account:work", "--config", folder + "/config.yml"], environment: environment)
                    #expect(why.output.contains("account work: sign-in notices"), "\(why.output) \(why.errors)")
                    #expect(why.output.contains("accountSignInNeeded, the sign-in was revoked"), "\(why.output)")
                }
            }
        }
    }

    /// With the local server on loopback, the notice links to the daemon's own page, which starts a sign-in in the
    /// browser (PKCE, back to the daemon's address): the new tokens are kept and the calendar read again within
    /// seconds. An answer to no sign-in started there, or one the provider refused, keeps nothing.
    @Test func theNoticeLinksToTheDaemonsPageWhereABrowserSignsInAgain() async throws {
        try await FeedServer.with(script: "microsoft-server.py") { microsoft in
            try await FeedServer.with(script: "webhook-server.py") { phone in
                let folder = phone.folder
                let port = try RadicaleServer.freePort()
                let (environment, tokens) = try await Self.lapsed(
                    microsoft, in: folder,
                    sinks: """
                          - { type: jsonl, path: events.jsonl }
                          - { type: webhook, preset: ntfy, url: "\(phone.url("/alerts"))" }
                        serve: { listen: "127.0.0.1:\(port)" }
                        """)
                let watch = try WatchCommandTests.watch(in: folder, environment: environment)
                defer { if watch.isRunning { watch.terminate() } }
                try await eventually("the notice on the phone") { !Self.pushed(folder).isEmpty }
                let line = try #require(SinkFixtures.lines(folder + "/events.jsonl").first { $0.contains("SignIn") })
                let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let account = (event["data"] as? [String: Any])?["account"] as? [String: Any]
                let page = try #require(account?["signInPage"] as? String, "\(line)")
                #expect(page == "http://127.0.0.1:\(port)/v1/accounts/work/sign-in")
                let schema = EventSchemaTests.schema
                #expect(
                    EventSchemaTests.Validator(root: schema).validate(try EventSchemaTests.JSON.parse(line), schema)
                        .isEmpty)
                let message = try #require(Self.pushed(folder).first)
                #expect((message["message"] as? String)?.contains("open \(page) on ") == true, "\(message)")

                // Not for an account that is not this daemon's, nor an answer to no sign-in started here.
                let stranger = try await runProgram([
                    "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                    "http://127.0.0.1:\(port)/v1/accounts/other/sign-in",
                ])
                #expect(stranger == "404")
                let forged = try await runProgram([
                    "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                    "http://127.0.0.1:\(port)/?state=forged&code=stolen",
                ])
                #expect(forged == "400")
                // Without the token, the day itself stays closed.
                let day = try await runProgram([
                    "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/",
                ])
                #expect(day == "401")

                // The password fixed, the user opens the page: the provider's page, then back to the daemon.
                try FileManager.default.removeItem(atPath: microsoft.folder + "/revoked")
                let reads = microsoft.log.filter { $0.contains("calendarView/delta 200") }.count
                func redirect(_ address: String) async throws -> String {
                    try await runProgram(["curl", "-s", "-o", "/dev/null", "-w", "%{redirect_url}", address])
                }
                let provider = try await redirect(page)
                #expect(provider.hasPrefix(microsoft.url("/")) && provider.contains("code_challenge_method=S256"))
                let answer = try await redirect(provider)
                #expect(answer.hasPrefix("http://127.0.0.1:\(port)/?code="), "\(answer)")
                let signedIn = try await runProgram(["curl", "-s", "--max-time", "30", answer])
                #expect(signedIn.contains("Signed in to work as meganb@contoso.com"), "\(signedIn)")
                try await eventually("the calendar read again with the new sign-in") {
                    microsoft.log.filter { $0.contains("calendarView/delta 200") }.count > reads
                }
                let renewed = try #require(
                    try await AccountTokens.load(account: "work", folder: folder + "/state/calwatch/accounts"))
                #expect(renewed.refreshToken != tokens.refreshToken && renewed.user == "meganb@contoso.com")
                // The same answer again is no sign-in's any more.
                let again = try await runProgram(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", answer])
                #expect(again == "400")
            }
        }
    }

    /// `renewByDeviceCode`: the notice on the phone carries a device code and its address (a Sign in button); once
    /// someone signs in with it, the daemon keeps the new tokens and reads the calendar again within seconds, unless
    /// it is another user than the one whose sign-in lapsed (who may have read the code off a shared topic).
    @Test(arguments: [true, false])
    func aDeviceCodeInTheNoticeRenewsTheSignInFromAPhone(sameUser: Bool) async throws {
        try await FeedServer.with(script: "microsoft-server.py") { microsoft in
            try await FeedServer.with(script: "webhook-server.py") { phone in
                let folder = phone.folder
                let (environment, tokens) = try await Self.lapsed(
                    microsoft, in: folder, keys: ["renewByDeviceCode: true"],
                    sinks: """
                          - { type: jsonl, path: events.jsonl }
                          - { type: webhook, preset: ntfy, url: "\(phone.url("/alerts"))" }
                        """, user: sameUser ? nil : "adele@contoso.com")
                let tokenFolder = folder + "/state/calwatch/accounts"
                // A command that sends no notice (here `check`) asks for no code nobody would see.
                let codes = microsoft.log.filter { $0.contains("/devicecode ") }.count
                _ = try await CommandLineTests().calwatch(
                    ["check", "--config", folder + "/config.yml"], environment: environment)
                #expect(codes == 1 && microsoft.log.filter { $0.contains("/devicecode ") }.count == codes)

                let watch = try WatchCommandTests.watch(in: folder, environment: environment)
                defer { if watch.isRunning { watch.terminate() } }
                func pushed() -> [[String: Any]] { Self.pushed(folder) }
                try await eventually("the notice on the phone") { !pushed().isEmpty }
                let line = try #require(SinkFixtures.lines(folder + "/events.jsonl").first { $0.contains("SignIn") })
                let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let account = (event["data"] as? [String: Any])?["account"] as? [String: Any]
                let device = try #require(account?["deviceCode"] as? [String: Any], "\(line)")
                let code = try #require(device["code"] as? String)
                #expect((device["address"] as? String)?.hasSuffix("/devicelogin") == true, "\(device)")
                let schema = EventSchemaTests.schema
                let problems = EventSchemaTests.Validator(root: schema).validate(
                    try EventSchemaTests.JSON.parse(line), schema)
                #expect(problems.isEmpty, "\(problems)")
                let message = try #require(pushed().first)
                #expect(
                    (message["message"] as? String)?.contains("with the code \(code) (until ") == true, "\(message)")
                let actions = message["actions"] as? [[String: String]]
                #expect(actions?.first?["label"] == "Sign in" && actions?.first?["url"] == device["address"] as? String)

                // Signed in with the code on a phone (the stand-in approves it), the password fixed.
                try FileManager.default.removeItem(atPath: microsoft.folder + "/revoked")
                let reads = microsoft.log.filter { $0.contains("calendarView/delta 200") }.count
                let grants = microsoft.log.filter { $0.contains("token 200") }.count
                _ = try await runProgram(["curl", "-sf", microsoft.url("/devicelogin?otc=" + code)])
                guard sameUser else {
                    // Megan signed in where Adele's sign-in lapsed: the daemon got tokens, and does not keep them.
                    try await eventually("the code's sign-in") {
                        microsoft.log.filter { $0.contains("token 200") }.count > grants
                    }
                    try await Task.sleep(for: .seconds(7))
                    #expect(microsoft.log.filter { $0.contains("calendarView/delta 200") }.count == reads)
                    let kept = try #require(try AccountTokens.record(account: "work", folder: tokenFolder))
                    #expect(kept.user == "adele@contoso.com" && kept.saved == tokens.saved)
                    return
                }
                try await eventually("the calendar read again with the new sign-in") {
                    microsoft.log.filter { $0.contains("calendarView/delta 200") }.count > reads
                }
                let renewed = try #require(try AccountTokens.record(account: "work", folder: tokenFolder))
                #expect(renewed.user == "meganb@contoso.com" && renewed.saved > tokens.saved)
            }
        }
    }

    /// The daemon's pipeline on a manual clock: a lapse noticed at every failed poll is told once, not again after a
    /// restart on the same journal, and again a day after while it lasts.
    @Test func aLapseIsToldOnceAndAgainADayAfterWhileItLasts() async throws {
        let bench = try WatchTests.Bench()
        let notice = AccountNotice(
            account: "work", provider: "microsoft", reason: "AADSTS50173", signIn: "calwatch account add work",
            host: "desk", user: nil, since: utc("2027-02-27T10:00:00Z"))
        func told(at instant: String) async throws -> Int {
            try await bench.watch.signInNeeded([notice, notice], at: utc(instant)).total
        }
        try await bench.start(at: "2027-03-01T08:00:00Z")
        #expect(try await told(at: "2027-03-01T08:00:00Z") == 1)
        #expect(try await told(at: "2027-03-01T08:05:00Z") == 0)
        _ = await bench.received()
        try await bench.start(at: "2027-03-01T20:00:00Z")
        #expect(try await told(at: "2027-03-01T20:00:00Z") == 0)
        #expect(try await told(at: "2027-03-02T08:00:00Z") == 1)
        #expect(
            await bench.received() == [
                "accountSignInNeeded 2027-03-01T08:00:00Z", "accountSignInNeeded 2027-03-02T08:00:00Z",
            ])
    }

    /// One event per lapse: the same sign-in noticed twice is one id; a new sign-in that lapses is another.
    @Test func aNoticesIdNamesTheLapseNotThePoll() {
        func notice(since: Int64, reason: String) -> AccountNotice {
            AccountNotice(
                account: "work", provider: "microsoft", reason: reason, signIn: "calwatch account add work",
                host: "desk", user: nil, since: Instant(secondsSinceEpoch: since))
        }
        let first = notice(since: 1_000, reason: "AADSTS50173").event(at: Instant(secondsSinceEpoch: 5_000))
        let again = notice(since: 1_000, reason: "AADSTS700082").event(at: Instant(secondsSinceEpoch: 9_000))
        let later = notice(since: 7_000, reason: "AADSTS50173").event(at: Instant(secondsSinceEpoch: 9_000))
        #expect(first.id == again.id)
        #expect(first.id != later.id)
        #expect(first.expiry.secondsSinceEpoch - first.time.secondsSinceEpoch == AccountNotice.useful)
    }
}
