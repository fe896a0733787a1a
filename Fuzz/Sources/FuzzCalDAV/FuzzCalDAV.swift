import FuzzSupport

/// One input: a CalDAV REPORT export, read, and each calendar in it expanded and classified.
@_cdecl("FuzzCalDAV_main")
func fuzzCalDAVMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in
        FuzzedCalendar.scan(fuzzBytes(data, count), format: .calDAVMultistatus)
        return 0
    }
}
