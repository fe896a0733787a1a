import CalWatchCore
import CalWatchPostgres
import FuzzSupport

/// One input: a row of a fleet's `calendars` table as anyone who can write the table might write it, its columns
/// as `FleetDatabase.row` reads them (`FleetRowColumns`), read and checked as every watcher reads every row, then
/// admitted under roots and credentials. A refused row is fine; a trap, a hang or a leak is not.
@_cdecl("FuzzFleetRow_main")
func fuzzFleetRowMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in
        let row = FleetDatabase.row(FleetDatabase.columns(fromFuzzInput: fuzzBytes(data, count)))
        if case .success(let calendar) = row.calendar {
            let access = FleetAccess(roots: ["/nonexistent/calendars"], credentials: ["dav-carol": ["/bin/false"]])
            _ = calendar.admitted(by: access, credentialsDirectory: "/nonexistent/credentials")
        }
        return 0
    }
}
