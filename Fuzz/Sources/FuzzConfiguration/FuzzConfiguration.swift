import CalWatchCore
import FuzzSupport

/// One input: a config.yml, parsed and checked. A rejected file is fine; a trap, a hang or a leak is not.
@_cdecl("FuzzConfiguration_main")
func fuzzConfigurationMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in
        let text = String(decoding: fuzzBytes(data, count), as: UTF8.self)
        _ = try? ConfigurationLoader.parse(
            text, file: "config.yml", directory: "/nonexistent", environment: ["HOME": "/nonexistent"])
        return 0
    }
}
