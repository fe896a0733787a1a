import ArgumentParser

/// calwatch's exit statuses, named as `sysexits.h` names them, so a script or a systemd unit can tell a bad
/// configuration from a calendar it could not read and from a journal another calwatch holds.
extension ExitCode {
    /// 64, `EX_USAGE`: the command line or the configuration is wrong.
    static let usageError = ExitCode(64)
    /// 65, `EX_DATAERR`: a calendar could not be read, or an answer was refused.
    static let dataError = ExitCode(65)
    /// 66, `EX_NOINPUT`: the journal named does not exist.
    static let noInput = ExitCode(66)
    /// 72, `EX_OSFILE`: calwatch's own data files (airports, airlines) are missing or damaged.
    static let dataFilesMissing = ExitCode(72)
    /// 74, `EX_IOERR`: a sink, the journal or standard output could not be written.
    static let ioError = ExitCode(74)
    /// 75, `EX_TEMPFAIL`: another calwatch holds the journal; try again when it has stopped.
    static let journalBusy = ExitCode(75)
    /// 130: stopped by SIGINT or SIGTERM after finishing the batches in hand (128 + SIGINT, as shells report it).
    static let interrupted = ExitCode(130)
}
