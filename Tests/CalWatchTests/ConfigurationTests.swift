import CalWatchDaemon
import CalWatchDesktop
import CalWatchMQTT
import CalWatchPostgres
import CalWatchRemote
import CalWatchWebhook
import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// `config.yml` as users write it: the shipped example, every key's type, and problems reported with key and line.
@Suite struct ConfigurationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let environment = ["HOME": "/home/ada", "CALS": "/srv/cals", "XDG_DATA_HOME": "/home/ada/.data"]

    static func parse(_ text: String) throws(ConfigurationError) -> Configuration {
        try ConfigurationLoader.parse(text, file: "config.yml", directory: "/etc/calwatch", environment: environment)
    }

    static func problems(_ text: String) -> [ConfigurationProblem] {
        do {
            _ = try parse(text)
            return []
        } catch {
            return error.problems
        }
    }

    @Test func theShippedExampleIsValidAndSaysWhatItDocuments() throws {
        let configuration = try ConfigurationLoader.load(
            path: Self.repository + "/config.yml", environment: Self.environment)
        #expect(configuration.timeZone == "Europe/Berlin")
        #expect(configuration.planner.reminderOffsets == [1800, 900, 300])
        #expect(configuration.planner.horizon == 60 * 86_400)
        #expect(configuration.planner.anchors[.flight] == .leaveBy)
        #expect(configuration.flights.international == 3 * 3600)
        // Relative paths are relative to the file, not to where calwatch was started.
        #expect(configuration.calendars.first == Self.repository + "/samples/calendars")
        #expect(configuration.statePath == "/home/ada/.local/state/calwatch/journal.db")
        #expect(!configuration.sinks.isEmpty)
        #expect(configuration.instance == "demo")
        #expect(configuration.metrics.textfile == Self.repository + "/.build/demo/calwatch.prom")
        #expect(configuration.metrics.every == 15)
    }

    @Test func anEmptyFileGivesTheDocumentedDefaults() throws {
        let configuration = try Self.parse("# nothing set\n")
        #expect(configuration.calendars == ["/home/ada/.calendars"])
        #expect(configuration.timeZone == nil)
        #expect(configuration.planner == PlannerConfiguration())
        #expect(configuration.sinks.map(\.name) == ["jsonl:-"])
    }

    @Test func everyKeyIsRead() throws {
        let configuration = try Self.parse(
            """
            calendars: [~/cal, $CALS/work, "${CALS}/home", shared]
            timezone: America/New_York
            me: [Ada@Example.com, "mailto:ada@work.example"]
            horizon: 30d
            reminders:
              offsets: [1h, 10m, 90s]
              anchor: { flight: start, meeting: start, event: start }
              allDay: true
              cancelled: true
              declined: true
              calendarAlarms: false
            liveActivity: { lead: 20m, updateEvery: 30s, maxDuration: 1h30m }
            flights: { airportLead: { domestic: 90m, international: 4h }, travelTime: 1h }
            state: $XDG_DATA_HOME/journal.db
            sinks:
              - type: jsonl
                path: "-"
              - type: jsonl
                path: events.jsonl
              - type: sqlite
                path: ~/events.db
                keep: 90d
              - type: hook
                name: notify
                run: [hooks/notify.sh, "{summary}", --, "{joinURL}"]
                on: [reminderDue, calwatch.liveActivityStart]
                kinds: [meeting]
                offsets: [10m]
                calendars: [work]
                timeout: 5s
                concurrency: 2
            """)
        #expect(
            configuration.calendars == ["/home/ada/cal", "/srv/cals/work", "/srv/cals/home", "/etc/calwatch/shared"])
        #expect(configuration.timeZone == "America/New_York")
        #expect(configuration.me == ["ada@example.com", "ada@work.example"])
        let planner = configuration.planner
        #expect(planner.horizon == 30 * 86_400)
        #expect(planner.reminderOffsets == [3600, 600, 90])
        #expect(planner.anchors[.flight] == .start)
        #expect(planner.includeAllDay && planner.includeCancelled && planner.includeDeclined)
        #expect(!planner.calendarAlarms)
        #expect(planner.liveActivityLead == 1200)
        #expect(planner.liveActivityUpdateInterval == 30)
        #expect(planner.liveActivityMaxDuration == 5400)
        #expect(configuration.flights.domestic == 5400)
        #expect(configuration.flights.international == 4 * 3600)
        #expect(configuration.flights.travelTime == 3600)
        #expect(configuration.statePath == "/home/ada/.data/journal.db")
        #expect(
            configuration.sinks.map(\.name) == [
                "jsonl:-", "jsonl:/etc/calwatch/events.jsonl", "sqlite:/home/ada/events.db", "notify",
            ])
        #expect(
            configuration.sinks[2].kind as? SQLiteSettings
                == SQLiteSettings(path: "/home/ada/events.db", keep: 90 * 86_400))
        guard let hook = configuration.sinks[3].kind as? HookSettings else {
            Issue.record("not a hook")
            return
        }
        #expect(hook.run == ["/etc/calwatch/hooks/notify.sh", "{summary}", "--", "{joinURL}"])
        #expect(hook.events == [.reminderDue, .liveActivityStart])
        #expect(hook.kinds == [.meeting])
        #expect(hook.offsets == [600])
        #expect(hook.calendars == ["work"])
        #expect(hook.timeout == .seconds(5))
        #expect(hook.concurrency == 2)
    }

    @Test func allProblemsOfAFileAreReportedAtOnceWithKeyAndLine() {
        let problems = Self.problems(
            """
            calendars: [~/cal]
            timezone: Mars/Olympus
            horizn: 60d
            reminders:
              offsets: [30m, 15, 5x]
              allDay: sometimes
            liveActivity: { lead: 15m, updateEvery: 0s }
            state: $NOPE/journal.db
            sinks:
              - type: hook
                run: notify-send {summary}
              - type: hook
                run: [notify-send, "{sumary}"]
                concurrency: 0
              - type: carrier-pigeon
              - path: x
            """)
        let found = problems.map { "\($0.line ?? 0) \($0.key ?? "")" }
        #expect(
            found == [
                "2 timezone", "3 horizn", "5 reminders.offsets[1]", "5 reminders.offsets[2]", "6 reminders.allDay",
                "7 liveActivity.updateEvery", "8 state", "11 sinks[0].run", "13 sinks[1].run[1]",
                "14 sinks[1].concurrency", "15 sinks[2].type", "16 sinks[3]",
            ])
        // Each says what to write instead.
        #expect(problems[1].message.contains("did you mean `horizon`"))
        #expect(problems[2].message.contains("write it like 45s, 30m"))
        #expect(problems[6].message.contains("$NOPE"))
        #expect(problems[7].message.contains("never run through a shell"))
        #expect(problems[8].message.contains("{summary}"))
    }

    @Test func aNotifySinkReadsItsButtonsRepeatsAndBus() throws {
        let configuration = try Self.parse(
            """
            sinks:
              - { type: notify, snooze: [5m, 1h], maxCards: 3, liveActivities: false, repeat: until answered }
              - { type: notify, name: nag, repeat: { until: answered, every: 10m, times: 2 }, bus: "unix:path=/b" }
              - { type: notify, name: quiet, repeat: never }
            """)
        let notify = configuration.sinks.compactMap { $0.kind as? NotifySettings }
        #expect(notify.map(\.snooze) == [[300, 3600], [600], [600]])
        #expect(notify.map(\.maxCards) == [3, 5, 5] && notify.map(\.liveActivities) == [false, true, true])
        #expect(notify.map(\.repeats) == [.init(every: 300, times: 3), .init(every: 600, times: 2), nil])
        #expect(notify.map(\.bus) == [nil, "unix:path=/b", nil])
        let problems = Self.problems(
            """
            sinks:
              - { type: notify, repeat: always }
              - { type: notify, name: other, repeat: { until: read, every: 5s, times: 100 } }
            """)
        #expect(
            problems.map { "\($0.line ?? 0) \($0.key ?? "")" } == [
                "2 sinks[0].repeat", "3 sinks[1].repeat.until", "3 sinks[1].repeat.every", "3 sinks[1].repeat.times",
            ])
        #expect(problems.first?.message.contains("until answered") == true)
    }

    /// A webhook's secret never comes from config.yml, and its address's path (often the receiver's secret) is not
    /// in its name.
    @Test func aWebhookSinkTakesItsSecretFromElsewhereAndHidesItsPath() throws {
        let configuration = try Self.parse(
            """
            sinks:
              - type: webhook
                url: https://hooks.example.org/services/T000/B000/XXXXsecret
                mode: binary
                secretCommand: [pass, show, calwatch/webhook]
                headers: { X-Team: ops }
                timeout: 5s
            """)
        let sink = try #require(configuration.sinks.first)
        let webhook = try #require(sink.kind as? WebhookSettings)
        #expect(sink.name == "webhook:https://hooks.example.org/…")
        #expect(webhook.mode == .binary && webhook.secretCommand == ["pass", "show", "calwatch/webhook"])
        #expect(webhook.headers == ["X-Team": "ops"] && webhook.timeout == 5)
        let problems = Self.problems(
            """
            sinks:
              - { type: webhook, url: "ftp://example.org/x", name: a }
              - { type: webhook, url: "https://example.org/x", secret: hunter2, name: b }
              - { type: webhook, url: "https://example.org/x", mode: soap, name: c }
              - { type: webhook, name: d }
              - { type: webhook, url: "https://ntfy.sh/t", preset: ntfy, mode: batch, name: e }
              - { type: webhook, url: "https://example.org/x", mode: batch, batchSize: 0, name: f }
              - { type: webhook, url: "https://gotify.example.org", preset: gotify, answers: { listen: ":1" }, name: g }
              - { type: webhook, url: "https://ntfy.sh/t", preset: ntfy, answers: { listen: "[::1]:80" }, name: h }
              - { type: webhook, url: "https://ntfy.sh/t", preset: ntfy, answers: { listen: "0.0.0.0:8788" }, name: i }
              - { type: webhook, url: "https://ntfy.sh/t", preset: ntfy, answers: { listen: "127.0.0.01:8788" }, name: j }
              - { type: webhook, url: "https://ntfy.sh/t", preset: ntfy, answers: { listen: "192.168.1.2:8788" }, name: k }
              - { type: webhook, url: "https://ntfy.sh/t", preset: ntfy, answers: { listen: "+127.0.0.1:8788" }, name: l }
            """)
        // Anything but loopback, written as inet_pton reads it, is refused: a misread address binds every interface.
        #expect(
            problems.map { "\($0.line ?? 0) \($0.key ?? "")" } == [
                "2 sinks[0].url", "3 sinks[1].secret", "4 sinks[2].mode", "5 sinks[3]", "6 sinks[4].mode",
                "7 sinks[5].batchSize", "8 sinks[6].answers", "9 sinks[7].answers.listen", "10 sinks[8].answers.listen",
                "11 sinks[9].answers.listen", "12 sinks[10].answers.listen", "13 sinks[11].answers.listen",
            ])
        #expect(problems.last?.message.contains("reverse proxy") == true)
        let answered = try Self.parse(
            """
            sinks:
              - type: webhook
                preset: ntfy
                url: https://ntfy.sh/t
                answers: { listen: "localhost:8788", url: "https://calwatch.example.org/answers/" }
            """)
        let ntfy = try #require(answered.sinks.first?.kind as? WebhookSettings)
        // Its listen: is where the local server listens (the earlier spelling of serve: listen:).
        #expect(ntfy.answers.map { "\($0.url) \($0.snooze)" } == "https://calwatch.example.org/answers 600")
        #expect(answered.serve.listen?.description == "127.0.0.1:8788")
        #expect(problems[1].message.contains("secretFile") && !problems[1].message.contains("hunter2"))
    }

    /// `serve:` listens on loopback only, read strictly; a phone's answers arrive at its address, and answers with
    /// nowhere to arrive (no TCP listener, or serve: off) are a problem, not buttons that fail on the phone.
    @Test func theLocalServerListensOnLoopbackAndAnswersArriveThere() throws {
        #expect(try Self.parse("").serve.enabled && Self.parse("").serve.listen == nil)
        #expect(try !Self.parse("serve: off").serve.enabled)
        #expect(try Self.parse("serve: { listen: localhost:8787 }").serve.listen?.description == "127.0.0.1:8787")
        for bad in ["0.0.0.0:8787", "127.0.0.01:8787", "+127.0.0.1:8787", "127.0.0.1:08787", "[::1]:8787", "127.0.0.1"]
        {
            let problems = Self.problems("serve: { listen: \"\(bad)\" }")
            #expect(problems.map(\.key) == ["serve.listen"], "\(bad)")
            #expect(problems.first?.message.contains("reverse proxy") == true)
        }
        // Other machines only with allowRemote: and TLS, so that the token never crosses a network in the clear.
        #expect(
            Self.problems("serve: { listen: 0.0.0.0:8787, allowRemote: true }").first?.message.contains("tls:") == true)
        let remote = try Self.parse(
            "serve: { listen: 0.0.0.0:8787, allowRemote: true, tls: { certificate: /c.pem, key: /k.pem } }")
        #expect(remote.serve.listen?.description == "0.0.0.0:8787" && remote.serve.tls?.key == "/k.pem")
        #expect(Self.problems("serve: { tls: { certificate: /c.pem } }").map(\.key) == ["serve.tls"])
        #expect(Self.problems("serve: { allowRemote: true }").map(\.key) == ["serve"])
        // Buttons without a url: post to the server's own address.
        let served = try Self.parse(
            """
            serve: { listen: 127.0.0.1:8790 }
            sinks:
              - { type: webhook, url: "https://ntfy.sh/t", preset: ntfy, answers: { snooze: 5m } }
            """)
        let ntfy = try #require(served.sinks.first?.kind as? WebhookSettings)
        #expect(ntfy.answers?.url == "http://127.0.0.1:8790" && ntfy.answers?.snooze == 300)
        let problems = Self.problems(
            """
            serve: { listen: 127.0.0.1:8790 }
            sinks:
              - { type: webhook, url: "https://ntfy.sh/t", preset: ntfy, answers: { listen: 127.0.0.1:8788 }, name: a }
            """)
        #expect(problems.map(\.key) == ["sinks[0].answers.listen"])
        #expect(problems.first?.message.contains("remove this listen:") == true)
        let nowhere = Self.problems(
            """
            sinks:
              - { type: webhook, url: "https://ntfy.sh/t", preset: ntfy, answers: { url: "https://a.example.org" } }
            """)
        #expect(nowhere.map(\.key) == ["sinks[0].answers"])
        #expect(nowhere.first?.message.contains("serve: { listen:") == true)
        let off = Self.problems(
            """
            serve: off
            sinks:
              - { type: webhook, url: "https://ntfy.sh/t", preset: ntfy, answers: { listen: 127.0.0.1:8788 } }
            """)
        #expect(off.first?.message.contains("serve: off") == true)
    }

    /// config.yml, the documented example, shows every key each type of sink takes (all but the refused `secret`).
    @Test func theExampleConfigurationShowsEverySinkKey() throws {
        let example = try String(contentsOfFile: Self.repository + "/config.yml", encoding: .utf8)
        for kind in SinkKinds.calwatch.kinds {
            let type = kind.type
            for key in kind.keys where key != "secret" {
                #expect(
                    example.contains(try Regex("[ {,]\(key):\\s")), "config.yml shows no `\(key):` for type: \(type)")
            }
        }
    }

    @Test func anMQTTSinkNamesItsBrokerAndInstance() throws {
        let configuration = try Self.parse(
            """
            sinks:
              - { type: mqtt, url: "mqtts://broker.example.org", username: cw, passwordCommand: [pass, mqtt] }
              - { type: mqtt, url: "mqtt://10.0.0.2:1884", topic: "home/{type}", discovery: false, name: lan }
              - { type: mqtt, url: "mqtt://10.0.0.3", discovery: true, name: ha }
            instance: "lap/top+1"
            """)
        let mqtt = configuration.sinks.compactMap { $0.kind as? MQTTSettings }
        #expect(
            mqtt.map { $0.endpoint.map { "\($0.host):\($0.port) \($0.tls)" } } == [
                "broker.example.org:8883 true", "10.0.0.2:1884 false", "10.0.0.3:1883 false",
            ])
        // `discovery: true` is the default prefix.
        #expect(mqtt.map(\.discovery) == ["homeassistant", nil, "homeassistant"])
        // The instance, wherever it stands, as one topic level.
        #expect(
            mqtt.map { $0.topic(for: "reminderDue") } == [
                "calwatch/lap_top_1/reminderDue", "home/reminderDue", "calwatch/lap_top_1/reminderDue",
            ])
        let problems = Self.problems(
            """
            sinks:
              - { type: mqtt, url: "http://broker" }
              - { type: mqtt, url: "mqtt://broker", topic: "calwatch/#", name: b }
              - { type: mqtt, url: "mqtt://cw:hunter2@broker", name: c }
              - { type: mqtt, url: "mqtts://cw:hunter2@broker:8883" }
            """)
        #expect(
            problems.map { "\($0.line ?? 0) \($0.key ?? "")" } == [
                "2 sinks[0].url", "3 sinks[1].topic", "4 sinks[2].url", "5 sinks[3].url",
            ])
        // A password in the address (mqtt or mqtts) is refused, and not repeated in the message.
        #expect(problems.suffix(2).allSatisfy { $0.message.contains("passwordCommand") })
        #expect(!problems.contains { $0.message.contains("hunter2") })
    }

    @Test func aPostgresSinkNamesItsWatcherAndNeverItsPassword() throws {
        let configuration = try Self.parse(
            """
            sinks:
              - type: postgres
                url: postgres://calwatch:s3cret@db.example.org/calwatch?sslmode=require
                channel: calwatch_events
                passwordCommand: [pass, show, calwatch/db]
            instance: rooms@host1
            """)
        let settings = try #require(configuration.sinks.first?.kind as? PostgresSettings)
        // `instance:` after `sinks:` still names the watcher; the name shown never holds the password.
        #expect(settings.watcher == "rooms@host1" && settings.channel == "calwatch_events")
        #expect(settings.passwordCommand == ["pass", "show", "calwatch/db"])
        #expect(configuration.sinks[0].name == "postgres:postgres://calwatch@db.example.org/calwatch?sslmode=require")
        #expect(
            PostgresSettings(url: "host=/run/postgresql password=s3cret dbname=calwatch", watcher: "x").redactedURL
                == "host=/run/postgresql dbname=calwatch")
        // Every form libpq reads: spaces around `=`, quotes with escapes, query parameters, percent escapes.
        for (url, shown) in [
            ("host=db password = s3cret dbname=x", "host=db dbname=x"),
            ("host=db password='a b\\' c' user='me too'", "host=db user='me too'"),
            (
                "postgresql://me:s3%40cret@db:5432/x?sslmode=require&password=p2",
                "postgresql://me@db:5432/x?sslmode=require"
            ),
            ("postgres://db/x?pass%77ord=p2&application_name=cw", "postgres://db/x?application_name=cw"),
            ("host=db password='unclosed", "(a connection string that cannot be read)"),
        ] {
            #expect(PostgresSettings(url: url, watcher: "x").redactedURL == shown, "\(url)")
        }
        #expect(
            PostgresSettings(url: "postgresql://me:s3%zzcret@db/x", watcher: "x")
                .scrubbed("invalid percent-encoded token: \"s3%zzcret\"") == "invalid percent-encoded token: \"***\"")
        // Without `instance:`, the user and the host.
        let defaults = try Self.parse("sinks: [{type: postgres, url: \"postgres:///calwatch\"}]")
        let unnamed = try #require(defaults.sinks.first?.kind as? PostgresSettings)
        #expect(unnamed.watcher.hasSuffix("@" + ProcessInfo.processInfo.hostName))

        let problems = Self.problems(
            """
            instance: ""
            sinks:
              - type: postgres
              - type: postgres
                url: mysql://db/calwatch
              - type: postgres
                url: postgres:///calwatch
                channel: calwatch-events
                passwordCommand: pass show db
            """)
        #expect(
            problems.map { "\($0.line ?? 0) \($0.key ?? "")" } == [
                "1 instance", "3 sinks[0]", "5 sinks[1].url", "8 sinks[2].channel", "9 sinks[2].passwordCommand",
            ])
        #expect(problems[1].message.contains("has no `url:`"))
        #expect(problems[2].message.contains("postgres://user@host/database"))
        #expect(problems[4].message.contains("never run through a shell"))
    }

    @Test func calendarsMayBeFeedsBesidePaths() throws {
        let configuration = try Self.parse(
            """
            calendars:
              - ~/.calendars
              - url: webcal://calendar.example.org/secret/basic.ics
                name: Work (Google)
                every: 10m
              - { url: "https://example.org/team.ics" }
            """)
        #expect(configuration.calendars == ["/home/ada/.calendars"])
        #expect(
            configuration.sources == [
                SourceSettings(
                    ICSFeedSettings(address: "webcal://calendar.example.org/secret/basic.ics"), name: "Work (Google)",
                    every: 600),
                SourceSettings(ICSFeedSettings(address: "https://example.org/team.ics")),
            ])
        let problems = Self.problems(
            """
            calendars:
              - url: ftp://example.org/x.ics
              - name: no address
              - url: https://example.org/x.ics
                every: 5s
              - url: https://example.org/y.ics
                evry: 5m
            """)
        #expect(
            problems.map { "\($0.line ?? 0) \($0.key ?? "")" } == [
                "2 calendars[0].url", "3 calendars[1]", "5 calendars[2].every", "7 calendars[3].evry",
            ])
    }

    /// Two entries for one calendar would be two pollers writing one cache folder: the second is refused, however
    /// the address is spelt (`webcal://` is `https://`; a CalDAV user in the address or in `username:`).
    @Test func aCalendarOnAServerNamedTwiceIsRefused() throws {
        let problems = Self.problems(
            """
            calendars:
              - url: webcal://example.org/a.ics
                name: One
              - url: https://example.org/a.ics
                name: Two
              - caldav: https://ada@dav.example.org/
              - caldav: https://dav.example.org/
                username: ada
              - caldav: https://dav.example.org/
                username: bob
              - url: https://example.org/b.ics
            """)
        #expect(problems.map { "\($0.line ?? 0) \($0.key ?? "")" } == ["4 calendars[1]", "7 calendars[3]"])
        #expect(problems[0].message.hasPrefix("is the same calendar as calendars[0]"), "\(problems[0].message)")
        #expect(problems[1].message.hasPrefix("is the same calendar as calendars[2]"), "\(problems[1].message)")
    }

    @Test func calendarsMayBeCalDAVAccountsWithAPasswordCommand() throws {
        let configuration = try Self.parse(
            """
            calendars:
              - caldav: https://cloud.example.org/remote.php/dav/
                username: me
                passwordCommand: [pass, show, nextcloud]
                every: 5m
              - caldav: http://localhost:5232/
                every: 10s
            """)
        #expect(
            configuration.sources == [
                SourceSettings(
                    CalDAVSettings(
                        address: "https://cloud.example.org/remote.php/dav/", username: "me",
                        passwordCommand: ["pass", "show", "nextcloud"]), every: 300),
                // A server on this machine may be polled more often than once a minute.
                SourceSettings(CalDAVSettings(address: "http://localhost:5232/"), every: 10),
            ])
        let problems = Self.problems(
            """
            calendars:
              - caldav: https://cloud.example.org/dav/
                passwordCommand: pass show nextcloud
              - caldav: webcal://example.org/x
              - url: https://example.org/x.ics
                username: me
              - url: https://example.org/x.ics
                caldav: https://example.org/dav/
              - caldav: https://example.org/dav/
                every: 30s
            """)
        #expect(
            problems.map { "\($0.line ?? 0) \($0.key ?? "")" } == [
                "3 calendars[0].passwordCommand", "4 calendars[1].caldav", "6 calendars[2].username", "7 calendars[3]",
                "10 calendars[4].every",
            ])
        #expect(problems[0].message.contains("never run through a shell"))
        #expect(problems[2].message.contains("is for CalDAV"))
    }

    @Test func syntaxErrorsAndRepeatedKeysNameTheLine() {
        let syntax = Self.problems("reminders:\n  offsets: [30m, 15m\nstate: x\n")
        #expect(syntax.count == 1 && syntax[0].message.hasPrefix("not valid YAML"))
        #expect(syntax[0].line != nil)
        let repeated = Self.problems("horizon: 60d\ntimezone: UTC\nhorizon: 30d\n")
        #expect(repeated.count == 1 && repeated[0].key == "horizon")
        let wrongShape = Self.problems("- calendars\n- sinks\n")
        #expect(wrongShape.count == 1 && wrongShape[0].message.contains("key: value"))
    }

    @Test func errorTextHasTheShapeEditorsJumpTo() {
        do {
            _ = try Self.parse("reminders:\n  offsets: [soon]\n")
            Issue.record("accepted")
        } catch {
            #expect(
                error.description
                    == "config.yml:2: error: reminders.offsets[0]: 'soon' is not a duration; write it like 45s, 30m, 2h, 60d or 1h30m"
            )
        }
    }

    /// A place's hours as people write "always" (`24:00` ends a span, as ISO 8601 and OpenStreetMap allow), and
    /// what is refused with how to write it.
    @Test func placeHoursMayEndAtMidnight() throws {
        func hours(_ text: String) throws -> PlaceSettings.ClockHours? {
            try Self.parse("places:\n  - { name: Home, hours: \"\(text)\" }\n").places.first?.hours
        }
        let always = try #require(try hours("00:00-24:00"))
        #expect([0, 1, 719, 1439].allSatisfy(always.contains))
        let evening = try #require(try hours("18:00-24:00"))
        #expect(evening.contains(1439) && evening.contains(18 * 60) && !evening.contains(0))
        let night = try #require(try hours("18:00-08:00"))
        #expect(night.contains(0) && night.contains(7 * 60 + 59) && !night.contains(8 * 60))
        for bad in ["24:00-08:00", "08:00-08:00", "00:00-24:01", "8-17", "09:00-25:00"] {
            let problems = Self.problems("places:\n  - { name: Home, hours: \"\(bad)\" }\n")
            #expect(
                problems.map(\.description).joined().contains("or 00:00-24:00 for always"), "\(bad): \(problems)")
        }
    }

    /// Time to get ready and the estimate's margin, where each is written, and what is refused.
    @Test func prepAndTheEstimatesMarginAreRead() throws {
        let configuration = try Self.parse(
            """
            places:
              - { name: Office, prep: 20m }
            rules:
              - { summary: Dentist, prep: 45m }
            flights: { prep: 1h30m }
            travel: { prep: 10m, estimate: { margin: 5m } }
            """)
        #expect(configuration.places.first?.prep == 1200 && configuration.planner.rules.first?.prep == 2700)
        #expect(configuration.flights.prep == 5400 && configuration.travel.prep == 600)
        #expect(configuration.travel.estimateMargin == .seconds(300))
        #expect(try Self.parse("").travel.estimateMargin == .percent(20))
        let problems = Self.problems(
            "travel: { prep: 13h, estimate: { margin: lots } }\nplaces:\n  - { name: Home, prep: soon }\n")
        #expect(problems.map(\.key) == ["travel.prep", "travel.estimate.margin", "places[0].prep"], "\(problems)")
    }

    @Test func durations() {
        #expect(DurationText.seconds("45s") == 45)
        #expect(DurationText.seconds("30m") == 1800)
        #expect(DurationText.seconds("2h") == 7200)
        #expect(DurationText.seconds("60d") == 5_184_000)
        #expect(DurationText.seconds("1h30m") == 5400)
        #expect(DurationText.seconds("0") == 0)
        for bad in ["", "30", "m", "1.5h", "-5m", "5 m", "1w", "99999999999999999999d"] {
            #expect(DurationText.seconds(bad) == nil, "\(bad)")
        }
        #expect(DurationText.text(5400) == "1h30m")
        #expect(DurationText.text(5_184_000) == "60d")
    }

    /// `fleet:`: the folders a fleet's path rows may name and the credentials its CalDAV rows may name; a
    /// credential's name that could leave `$CREDENTIALS_DIRECTORY` is refused with its line.
    @Test func aFleetWatchersAccessIsReadAndBadCredentialNamesAreRefused() throws {
        let configuration = try Self.parse(
            """
            fleet:
              roots: [/srv/calendars, /mnt/team]
              credentials:
                dav-carol: [pass, show, dav/carol]
            """)
        #expect(configuration.fleetAccess.roots == ["/srv/calendars", "/mnt/team"])
        #expect(configuration.fleetAccess.credentials == ["dav-carol": ["pass", "show", "dav/carol"]])
        let problems = Self.problems(
            """
            fleet:
              credentials:
                ../shadow: [cat]
                empty: []
            """)
        #expect(
            problems.map { "\($0.line ?? 0) \($0.key ?? "")" } == [
                "3 fleet.credentials.../shadow", "4 fleet.credentials.empty",
            ])
    }

    /// Two unnamed webhooks on one host get names of their own (a short hash of each address, never its path),
    /// and a named one keeps its name.
    @Test func twoWebhooksOnOneHostGetDistinctDefaultNames() throws {
        let configuration = try Self.parse(
            """
            sinks:
              - { type: webhook, url: "https://hooks.example.org/T000/B111/secret-one" }
              - { type: webhook, url: "https://hooks.example.org/T000/B222/secret-two" }
              - { type: webhook, url: "https://hooks.example.org/T000/B333/secret-three", name: team }
            """)
        let names = configuration.sinks.map(\.name)
        #expect(Set(names).count == 3, "\(names)")
        #expect(names[0].hasPrefix("webhook:https://hooks.example.org/… #") && names[2] == "team", "\(names)")
        #expect(!names.contains { $0.contains("secret") || $0.contains("B111") })
    }
}
