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
        .executable(name: "calwatch", targets: ["calwatch"]),
        .library(name: "CalWatch", targets: ["CalWatch"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
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
        /// timerfd, which Glibc's module does not export.
        .systemLibrary(name: "CLinux"),
        .target(
            name: "CalWatch",
            dependencies: [
                "CICal", "CSQLite", "CLinux",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "calwatch",
            dependencies: [
                "CalWatch",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CalWatchTests",
            dependencies: ["CalWatch"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
    ]
)
