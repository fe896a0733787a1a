import FuzzSupport

/// One input: a calendar file, read, expanded over a year and every occurrence classified, as `calwatch scan` does.
@_cdecl("FuzzCalendar_main")
func fuzzCalendarMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in
        FuzzedCalendar.scan(fuzzBytes(data, count), format: .iCalendar)
        return 0
    }
}
