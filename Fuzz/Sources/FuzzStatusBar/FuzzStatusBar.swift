import FuzzSupport

/// One input: calendar text (summary, location, calendar name) as `calwatch next` shows it in each status bar.
/// An input whose output lets a bar act (a polybar `%{` tag, a Pango `<`, `>` or bare `&`, a newline that ends
/// an update) stops the fuzzer as a crash would.
@_cdecl("FuzzStatusBar_main")
func fuzzStatusBarMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in
        FuzzedStatusBar.check(fuzzBytes(data, count))
        return 0
    }
}
