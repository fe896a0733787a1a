import CICal

/// The process-wide libical set-up, done once before any parsing (docs/design.md §1).
///
/// libical's error mode is a global: with errors fatal, a malformed property aborts the process. Swift runs a
/// `static let` initialiser exactly once, on whichever thread reaches it first, so every entry point that
/// touches libical reads `LibICal.ready` first.
package enum LibICal {
    static let ready: Void = {
        icalerror_set_errors_are_fatal(0)
        // calwatch resolves zones itself (ZoneResolver); libical's builtin zone cache is never filled, which
        // also avoids its first fill, which is not thread-safe in 3.0.
    }()

    /// The libical release calwatch was built against, `3.0.16` (`calwatch --version`). libical 3.0 has no
    /// run-time version call; Debian's package keeps one ABI per soname, so the built one is the one loaded.
    package static let version = "\(ICAL_MAJOR_VERSION).\(ICAL_MINOR_VERSION).\(ICAL_PATCH_VERSION)"

    /// Copies a C string libical owns (or keeps in its ring buffer) into a Swift string.
    static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        return String(cString: pointer)
    }
}
