// swift-tools-version: 6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "calwatch",
    platforms: [.macOS(.v15)],
    products: [
        /// The command as typed: a small front that answers `next` from a running daemon and runs the program,
        /// `calwatch-commands`, for everything else.
        .executable(name: "calwatch", targets: ["calwatch"]),
        .executable(name: "calwatch-commands", targets: ["CalWatchCommands"]),
        .library(name: "CalWatch", targets: ["CalWatchCore", "CalWatchRuntime"]),
        /// Calendars on servers (ICS feeds, CalDAV), and each sink that links a library of its own, linked only by
        /// those who use it.
        .library(name: "CalWatchRemote", targets: ["CalWatchRemote"]),
        .library(name: "CalWatchWebhook", targets: ["CalWatchWebhook"]),
        .library(name: "CalWatchMQTT", targets: ["CalWatchMQTT"]),
        .library(name: "CalWatchPostgres", targets: ["CalWatchPostgres"]),
        .library(name: "CalWatchDesktop", targets: ["CalWatchDesktop"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
    ],
    targets: [
        .systemLibrary(
            name: "CICal",
            pkgConfig: "libical",
            providers: [.apt(["libical-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        /// libxml2's pull reader, for CalDAV exports: Foundation's XMLParser traps on invalid UTF-8 in names.
        .systemLibrary(
            name: "CXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        /// libpq, PostgreSQL's own client, for the PostgreSQL sink: a system library like SQLite, nothing to build.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        /// libcurl's easy interface, for feeds and CalDAV: limits on time, size and redirects held while an answer
        /// arrives (FoundationNetworking applies none of them until the body is whole).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        /// sd-bus from libsystemd, for desktop notifications on the session bus.
        .systemLibrary(
            name: "CSDBus",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        /// libsecret, GNOME's client of the Secret Service (gnome-keyring, KeePassXC), for accounts' tokens.
        .systemLibrary(
            name: "CSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        /// libmosquitto, the Eclipse Mosquitto project's MQTT client, for the MQTT sink.
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        /// timerfd, which Glibc's module does not export.
        .systemLibrary(name: "CLinux"),
        /// Reading, expansion, classification and planning: pure functions of calendar text, configuration and
        /// time. No journal, no processes, no clocks of its own, so the compiler keeps the planner pure.
        .target(
            name: "CalWatchCore",
            dependencies: [
                "CICal", "CXML2",
                .product(name: "Yams", package: "Yams"),
                .product(name: "SystemPackage", package: "swift-system"),
                // Wallet passes (.pkpass): the ZIP archive, and the SHA-1 of its files its manifest lists.
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Their signature: PKCS #7 (CMS) over the manifest, by a certificate Apple's root vouches for.
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            /// The airport, metropolitan-area and airline tables, with the manifest that records their checksums.
            resources: [.copy("Resources/data")],
            swiftSettings: strictSettings
        ),
        /// What runs around the core: the journal, the bus and its sinks (JSON Lines, SQLite, hooks), replay and the
        /// watch daemon, on injected clocks, and their metrics in Prometheus' text format.
        .target(
            name: "CalWatchRuntime",
            dependencies: [
                "CalWatchCore", "CSQLite", "CLinux",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictSettings
        ),
        /// Calendars on servers through libcurl: ICS feeds, CalDAV and Microsoft 365 accounts fetched into the cache folders that
        /// the runtime reads like any vdir; routing, geocoding and weather answers.
        .target(
            name: "CalWatchRemote",
            dependencies: [
                "CalWatchCore", "CalWatchRuntime", "CCurl", "CSecret",
                // PKCE's S256 challenge when signing in to an account.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        /// The webhook sink (CloudEvents, ntfy, Gotify) over the remote module's HTTP client, signed with HMAC from
        /// swift-crypto, and the key of a phone's answer buttons.
        .target(
            name: "CalWatchWebhook",
            dependencies: [
                "CalWatchCore", "CalWatchRuntime", "CalWatchRemote",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        /// The MQTT sink, through libmosquitto, with Home Assistant discovery.
        .target(
            name: "CalWatchMQTT",
            dependencies: [
                "CalWatchCore", "CalWatchRuntime", "CMosquitto",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        /// The daemon's one local server, on Hummingbird: `next`, the day, the event stream, answers, metrics and the
        /// page, on a Unix socket beside the journal and on loopback TCP when asked.
        .target(
            name: "CalWatchServer",
            dependencies: [
                "CalWatchCore", "CalWatchRuntime", "CalWatchWebhook", "CalWatchLocalAddress",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        /// The PostgreSQL sink, through libpq: many watchers, one database.
        .target(
            name: "CalWatchPostgres",
            dependencies: [
                "CalWatchCore", "CalWatchRuntime", "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        /// The desktop: notifications through sd-bus, one card per reminder and per live activity.
        .target(
            name: "CalWatchDesktop",
            dependencies: [
                "CalWatchCore", "CalWatchRuntime", "CSDBus",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        /// What calwatch is made of: every module's kinds of sink in one list, and the daemon built from its parts
        /// (`Daemon.build`), for the commands and the tests.
        .target(
            name: "CalWatchDaemon",
            dependencies: [
                "CalWatchCore", "CalWatchRuntime", "CalWatchRemote", "CalWatchPostgres", "CalWatchDesktop",
                "CalWatchWebhook", "CalWatchMQTT", "CalWatchServer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        /// Where a daemon's socket is linked for the configuration it reads: plain Swift, shared by the server and
        /// the front.
        .target(name: "CalWatchLocalAddress", swiftSettings: strictSettings),
        /// `calwatch`: the front. It links nothing but the Swift runtime and that target, so it starts in about
        /// 2 ms. It does not depend on the program (which would link every library of the program into it): build
        /// both products (`swift build` builds all).
        .executableTarget(
            name: "calwatch",
            dependencies: ["CalWatchLocalAddress"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "CalWatchCommands",
            dependencies: [
                "CLinux", "CalWatchCore", "CalWatchRuntime", "CalWatchRemote", "CalWatchPostgres", "CalWatchDesktop",
                "CalWatchServer", "CalWatchDaemon", "CalWatchWebhook",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CalWatchTests",
            dependencies: [
                "CalWatchCore", "CalWatchRuntime", "CalWatchRemote", "CalWatchPostgres", "CalWatchDesktop",
                "CalWatchServer", "CalWatchDaemon", "CalWatchWebhook", "CalWatchMQTT",
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
    ]
)
