package import Foundation

/// HTTP's date form (RFC 9110 §5.6.7, `Sun, 06 Nov 1994 08:49:37 GMT`), as `Retry-After`, `Last-Modified` and
/// `If-Modified-Since` carry it: one formatter for every client here, in the POSIX locale whatever the user's.
package enum HTTPDate {
    /// Written with `GMT` as HTTP requires; read with any zone name a server may write (`UTC`, `GMT`).
    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }

    /// `date` in HTTP's form.
    package static func text(_ date: Date) -> String {
        formatter("EEE, dd MMM yyyy HH:mm:ss 'GMT'").string(from: date)
    }

    /// An HTTP date; `nil` for anything else.
    package static func date(_ text: String) -> Date? { formatter("EEE, dd MMM yyyy HH:mm:ss zzz").date(from: text) }

    /// `Retry-After` (seconds, or an HTTP date) as whole seconds from `now`, never negative; `nil` when absent or
    /// neither.
    package static func retryAfter(_ value: String?, now: Date) -> Int64? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int64(value) { return max(0, seconds) }
        return date(value).map { max(0, Int64($0.timeIntervalSince(now).rounded(.up))) }
    }
}
