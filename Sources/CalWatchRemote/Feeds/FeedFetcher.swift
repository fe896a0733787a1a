import CalWatchCore
import CalWatchRuntime
public import Foundation

/// One conditional GET of a feed (ETag, Last-Modified), within `HTTPClient`'s limits. What comes back is checked
/// before it replaces the copy kept: a truncated body, an HTML sign-in page or an error status leaves the last good
/// copy in effect.
public struct FeedFetcher: Sendable {
    /// How a fetch ended.
    public enum Outcome: Sendable, Equatable {
        /// 304, or a 200 with the same calendar: nothing to read again.
        case unchanged
        /// A new calendar, stored in the cache.
        case changed(bytes: Int)
        /// Nothing stored; the reason worded for the user, and how long the server asked to wait (`Retry-After`).
        case failed(String, retryAfter: Duration?)

        /// One word for logs: `unchanged`, `changed`, `failed`.
        public var word: String {
            switch self {
            case .unchanged: "unchanged"
            case .changed: "changed"
            case .failed: "failed"
            }
        }
    }

    /// The most a feed may send (a year of a busy calendar is a few megabytes).
    public var largest = 32 << 20
    /// The most redirects followed.
    public var redirects = 5
    /// How long a request may take in all.
    public var timeout: Duration = .seconds(30)

    public init() {}

    public func fetch(_ feed: ICSFeed, into cache: FeedCache, now: Date = Date()) async -> Outcome {
        let kept = cache.record()
        var request = HTTPClient.Request(url: feed.url, headers: ["Accept": "text/calendar, */*;q=0.5"])
        // Only when the copy is still there: a conditional GET must have something to fall back on.
        if let kept, kept.url == feed.shownURL, FileManager.default.fileExists(atPath: cache.calendarPath) {
            if let etag = kept.etag { request.headers["If-None-Match"] = etag }
            if let modified = kept.lastModified { request.headers["If-Modified-Since"] = modified }
        }
        let conditional = request.headers.keys.contains { $0.hasPrefix("If-") }
        let limits = HTTPClient.Limits(deadline: timeout, largest: largest, redirects: redirects)
        let response: HTTPClient.Answer
        switch await HTTPClient.send(request, limits: limits) {
        case .success(let answer): response = answer
        case .failure(let failure): return .failed("\(feed.shownURL): \(failure.reason)", retryAfter: nil)
        }
        let retryAfter = Self.retryAfter(response.headers["retry-after"], now: now)
        switch response.status {
        case 304 where conditional:
            return .unchanged
        case 304:
            // A conditional answer to a request that was not conditional: nothing to read, nothing kept.
            return .failed(
                "\(feed.shownURL): HTTP 304 (not modified) though calwatch keeps no copy yet; the server's cache is "
                    + "wrong, tried again later", retryAfter: retryAfter)
        case 200:
            break
        case 401, 403:
            return .failed(Self.refusal(feed, status: response.status), retryAfter: retryAfter)
        case 404, 410:
            return .failed(
                "\(feed.shownURL): HTTP \(response.status): no calendar at this address any more",
                retryAfter: retryAfter)
        default:
            return .failed("\(feed.shownURL): HTTP \(response.status)", retryAfter: retryAfter)
        }
        let bytes = [UInt8](response.body)
        if let problem = Self.problem(bytes) { return .failed("\(feed.shownURL): \(problem)", retryAfter: nil) }
        let digest = SHA256.hex(bytes)
        var record = FeedCache.Record(
            url: feed.shownURL, etag: response.headers["etag"], lastModified: response.headers["last-modified"],
            sha256: digest, bytes: bytes.count,
            fetched: now)
        let same = kept?.sha256 == digest && FileManager.default.fileExists(atPath: cache.calendarPath)
        do {
            try cache.store(
                same ? nil : bytes, named: same ? nil : FeedSync.displayName(feed, calendar: bytes), record: record)
        } catch {
            return .failed("cannot keep \(feed.shownURL) in \(cache.folder): \(error)", retryAfter: nil)
        }
        record.bytes = bytes.count
        return same ? .unchanged : .changed(bytes: bytes.count)
    }

    private static func refusal(_ feed: ICSFeed, status: Int = 401) -> String {
        "\(feed.shownURL): HTTP \(status): the address is no longer valid or needs signing in; copy the calendar's "
            + "secret address again"
    }

    /// Why a 200's body is not a calendar to keep: an HTML page (a sign-in page for an expired address), or a
    /// calendar cut off before its end.
    static func problem(_ bytes: [UInt8]) -> String? {
        let head = String(decoding: bytes.prefix(512), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard head.uppercased().hasPrefix("BEGIN:VCALENDAR") || head.hasPrefix("\u{FEFF}BEGIN:VCALENDAR") else {
            let kind = head.lowercased().hasPrefix("<") ? "an HTML page (a sign-in page?)" : "not iCalendar data"
            return "the server sent \(kind) instead of a calendar; the copy kept stays in use"
        }
        let tail = String(decoding: bytes.suffix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard tail.uppercased().hasSuffix("END:VCALENDAR") else {
            return "the calendar was cut off before END:VCALENDAR (\(bytes.count) bytes came); the copy kept stays "
                + "in use"
        }
        if let line = htmlLine(bytes) {
            return "the server sent an HTML page inside BEGIN:VCALENDAR (line \(line)); the copy kept stays in use"
        }
        return nil
    }

    /// The number of the first line that opens an HTML document (`<!DOCTYPE`, `<html`, `<head`, `<body`): no
    /// content line of a calendar starts with `<`, and a folded one starts with a space.
    static func htmlLine(_ bytes: [UInt8]) -> Int? {
        let openers = ["<!doctype", "<html", "<head", "<body"].map { Array($0.utf8) }
        var line = 1
        var start = 0
        while start < bytes.count {
            if bytes[start] == UInt8(ascii: "<") {
                let head = bytes[start..<min(bytes.count, start + 9)].map { $0 | 0x20 }
                if openers.contains(where: { head.starts(with: $0) }) { return line }
            }
            guard let end = bytes[start...].firstIndex(of: 10) else { break }
            start = end + 1
            line += 1
        }
        return nil
    }

    /// `Retry-After` as seconds or an HTTP date.
    static func retryAfter(_ value: String?, now: Date) -> Duration? {
        HTTPDate.retryAfter(value, now: now).map { .seconds($0) }
    }

}
