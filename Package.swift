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
        .target(
            name: "CalWatch",
            dependencies: ["CICal", "CSQLite", .product(name: "Yams", package: "Yams")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "calwatch",
            dependencies: [
                "CalWatch",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
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
