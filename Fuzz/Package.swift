// swift-tools-version: 6.1
import PackageDescription

/// libFuzzer targets for calwatch's readers of untrusted input, built and run by `make fuzz`:
/// `swift build -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library`, so every module is instrumented and
/// runs under AddressSanitizer. SwiftPM links an executable's `main` to `<Target>_main`, so each target defines
/// that and hands its input function to `LLVMFuzzerRunDriver`.
/// A package of its own, so that the main package's build and tests never carry the fuzzing flags.
let package = Package(
    name: "calwatch-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "calwatch", path: "..")],
    targets: [
        /// What the targets share: libFuzzer's driver, and a scan of one input as `calwatch scan` does it.
        .target(
            name: "FuzzSupport",
            dependencies: ["CFuzzDriver", .product(name: "CalWatch", package: "calwatch")]),
        .target(name: "CFuzzDriver"),
        /// iCalendar text: libical's parser, calwatch's layout reader, expansion over a year, classification.
        .executableTarget(
            name: "FuzzCalendar",
            dependencies: ["FuzzSupport"]),
        /// CalDAV REPORT exports: libxml2's reader, then each calendar-data element as in FuzzCalendar.
        .executableTarget(
            name: "FuzzCalDAV",
            dependencies: ["FuzzSupport"]),
        /// Calendar text in `calwatch next`'s status-bar formats: no polybar tag, Pango markup or newline survives.
        .executableTarget(
            name: "FuzzStatusBar",
            dependencies: ["FuzzSupport"]),
        /// A fleet's `calendars` row as anyone who can write the table might: every column's checks and bounds.
        .executableTarget(
            name: "FuzzFleetRow",
            dependencies: ["FuzzSupport", .product(name: "CalWatchPostgres", package: "calwatch")]),
        /// config.yml: Yams, then every key's checks and bounds.
        .executableTarget(
            name: "FuzzConfiguration",
            dependencies: ["FuzzSupport", .product(name: "CalWatch", package: "calwatch")]),
    ]
)
