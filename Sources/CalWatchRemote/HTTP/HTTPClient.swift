import CCurl
import CalWatchCore
import CalWatchRuntime
package import Foundation

/// The HTTP client of feeds and CalDAV accounts: libcurl's easy interface, driven so that a stranger's server cannot
/// take more than it is given. Every limit holds while the answer arrives, not after:
///
/// - one deadline for the whole exchange, redirects included, so a server that trickles a byte every few seconds
///   is cut off at it;
/// - the body counted as it is decoded (gzip, deflate, brotli, zstd), with a cap on its size and on how much it may
///   expand, so neither a huge nor an endless body nor a compression bomb is ever held;
/// - redirects followed here, not by libcurl, each checked again: http and https only, never https to http, and the
///   credentials sent only to the origin (scheme, host, port) they were given for;
/// - cancellation (SIGTERM) ends the transfer within a second: libcurl asks its progress callback at least that often.
///
/// FoundationNetworking's URLSession, used before, received whole bodies before any check, could not time out a
/// trickle and carried `Authorization` across redirects to any host.
package enum HTTPClient {
    /// A user and password for one origin.
    package struct Credentials: Sendable, Equatable {
        package var user: String
        package var password: String
        /// Where they may go: `https://host:443`.
        package var origin: String
    }

    package struct Request: Sendable {
        package var method = "GET"
        package var url: URL
        package var headers: [String: String] = [:]
        package var body: Data?
        /// Sent as Basic authentication to `credentials.origin` only. A user and password written in `url` become
        /// these when none are given.
        package var credentials: Credentials?
        /// The certificate authorities an https server must be signed by: a PEM file, as `SSL_CERT_FILE` names it
        /// (a company's own CA); `nil`, the system's. Verification is never off.
        package var certificateAuthorities: String? = ProcessInfo.processInfo.environment["SSL_CERT_FILE"].flatMap {
            $0.isEmpty ? nil : $0
        }

        /// A Unix socket to reach the server through (the local server's), instead of the address's host.
        package var unixSocket: String?

        package init(method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
        }
    }

    package struct Limits: Sendable {
        /// The whole exchange, redirects included.
        package var deadline: Duration = .seconds(30)
        /// The most bytes a body may have, counted decoded.
        package var largest = 32 << 20
        /// Whether a body past `largest` ends the reading rather than the answer: the first `largest` bytes are
        /// kept, the connection is dropped, and the status stands (a webhook's 2xx is a delivery whatever it says).
        package var truncating = false
        /// How many times its received size a body may grow when decoded (an ICS feed gzips about 8:1; a bomb of
        /// zeros, 1000:1). Checked once the body has reached a mebibyte.
        package var expansion = 100
        /// Redirects followed; with `nil` none is, and a redirect is the answer (a webhook's receiver moving is
        /// its refusal: the signature and headers were meant for the address configured).
        package var redirects: Int? = 5
        /// The most bytes of headers an answer may have.
        package var headerBytes = 256 << 10
    }

    package struct Answer: Sendable {
        package var status: Int
        /// Header names in lower case; a repeated header's last value.
        package var headers: [String: String]
        package var body: Data
        /// Where the answer came from, after redirects.
        package var url: URL
        /// The body's bytes as they came over the wire (before decoding).
        package var received: Int
        /// The body was cut at `Limits.largest` (`truncating`).
        package var truncated = false
    }

    /// Why no answer came, worded for the user without the address (the caller adds it, shown without secrets).
    package struct Failure: Error, Sendable, Equatable {
        package var reason: String
    }

    /// One exchange: the request, and the redirects it leads to.
    package static func send(_ request: Request, limits: Limits = Limits()) async -> Result<Answer, Failure> {
        let end = ContinuousClock.now + limits.deadline
        var request = request
        if request.credentials == nil, let user = request.url.user(percentEncoded: false) {
            request.credentials = Credentials(
                user: user, password: request.url.password(percentEncoded: false) ?? "", origin: request.url.origin)
        }
        request.url = request.url.withoutCredentials
        var hops = 0
        while true {
            let left = end - ContinuousClock.now
            guard left > .zero else {
                return .failure(Failure(reason: "no answer in time (\(seconds(limits.deadline)))"))
            }
            let answer: Answer
            switch await transfer(request, limits: limits, left: left, total: limits.deadline) {
            case .success(let got): answer = got
            case .failure(let failure): return .failure(failure)
            }
            guard let allowed = limits.redirects, [301, 302, 303, 307, 308].contains(answer.status),
                let location = answer.headers["location"]
            else {
                if answer.status == 401, let credentials = request.credentials, credentials.origin != request.url.origin
                {
                    return .failure(
                        Failure(
                            reason: "HTTP 401 at \(request.url.origin): the password is sent only to "
                                + "\(credentials.origin), where it was given"))
                }
                return .success(answer)
            }
            hops += 1
            guard hops <= allowed else {
                return .failure(Failure(reason: "more than \(allowed) redirects (the last to \(shown(location)))"))
            }
            switch redirect(request, status: answer.status, to: location) {
            case .success(let next): request = next
            case .failure(let failure): return .failure(failure)
            }
        }
    }

    /// The request a redirect leads to, checked as the first was: http or https, never from https to http. 303
    /// (and 301 or 302 after a POST) turns it into a GET without a body, as browsers do.
    static func redirect(_ request: Request, status: Int, to location: String) -> Result<Request, Failure> {
        guard let next = URL(string: location, relativeTo: request.url)?.absoluteURL,
            let scheme = next.scheme?.lowercased(), scheme == "http" || scheme == "https", next.host != nil
        else {
            return .failure(Failure(reason: "a redirect to \(shown(location)), not an http or https address"))
        }
        if request.url.scheme?.lowercased() == "https" && scheme == "http" {
            return .failure(
                Failure(
                    reason: "refused a redirect from https to http (\(next.shown)): it would send the request "
                        + "unencrypted"))
        }
        var request = request
        request.url = next.withoutCredentials
        if status == 303 || (request.method == "POST" && [301, 302].contains(status)) {
            request.method = "GET"
            request.body = nil
        }
        return .success(request)
    }

    /// `30 s`.
    static func seconds(_ duration: Duration) -> String { "\(duration.components.seconds) s" }

    /// A redirect's `Location` as a message shows it.
    private static func shown(_ location: String) -> String {
        URL(string: location)?.withoutCredentials.absoluteString ?? String(location.unicodeScalars.prefix(200))
    }

    /// One request, no redirect followed, on a thread of its own (libcurl blocks), cancelled with its task.
    private static func transfer(_ request: Request, limits: Limits, left: Duration, total: Duration) async -> Result<
        Answer, Failure
    > {
        let transfer = Transfer(request: request, limits: limits)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    continuation.resume(returning: transfer.perform(left: left, total: total))
                }
                thread.name = "calwatch http"
                thread.start()
            }
        } onCancel: {
            transfer.cancel()
        }
    }

    /// A byte count as limits are written: `64 KiB`, `32 MiB`.
    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
    }

    /// libcurl's global set-up, once, before the first handle (not thread-safe in every build).
    fileprivate static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

extension HTTPClient.Limits {
    /// The defaults, for another module of this package (the synthesized initializers are internal).
    package static var defaults: Self { Self() }
}

extension URL {
    /// `scheme://host:port`, the port written even when it is the scheme's own: credentials go to this only.
    package var origin: String {
        let scheme = self.scheme?.lowercased() ?? ""
        let port = self.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\((host(percentEncoded: false) ?? "").lowercased()):\(port)"
    }

    /// The address as messages, logs and caches show it: without a user or password.
    var shown: String { withoutCredentials.absoluteString }

    /// The address without a user or password: what is sent, shown, logged and cached.
    var withoutCredentials: URL {
        guard user(percentEncoded: true) != nil || password(percentEncoded: true) != nil,
            var parts = URLComponents(url: self, resolvingAgainstBaseURL: true)
        else { return self }
        parts.user = nil
        parts.password = nil
        return parts.url ?? self
    }
}

/// One libcurl transfer and what it gathered. Its state is touched by the transfer's thread alone until `perform`
/// returns, except `cancelled`, which is locked.
private final class Transfer: @unchecked Sendable {
    let request: HTTPClient.Request
    let limits: HTTPClient.Limits
    private let cancelled = Locked(false)
    // The transfer thread's own, while it runs.
    private var body = Data()
    private var headers: [String: String] = [:]
    private var headerBytes = 0
    /// Why a callback stopped the transfer.
    private var stop: String?
    /// The body reached `limits.largest` and was cut there (`truncating`).
    private var truncated = false
    private var handle: UnsafeMutableRawPointer?

    init(request: HTTPClient.Request, limits: HTTPClient.Limits) {
        self.request = request
        self.limits = limits
    }

    func cancel() { cancelled.withLock { $0 = true } }
    var isCancelled: Bool { cancelled.withLock { $0 } }

    func perform(left: Duration, total: Duration) -> Result<HTTPClient.Answer, HTTPClient.Failure> {
        guard HTTPClient.initialised, let handle = curl_easy_init() else {
            return .failure(HTTPClient.Failure(reason: "libcurl could not start"))
        }
        self.handle = handle
        defer { curl_easy_cleanup(handle) }
        if isCancelled { return .failure(HTTPClient.Failure(reason: "stopped")) }
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        var headerLines = request.headers.map { "\($0.key): \($0.value)" }
        // libcurl waits a second for `100 Continue` before a large body: no server of ours needs it.
        headerLines.append("Expect:")
        if let credentials = request.credentials, credentials.origin == request.url.origin {
            let token = Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
            headerLines.append("Authorization: Basic \(token)")
        }
        for line in headerLines where !line.contains("\r") && !line.contains("\n") {
            list = curl_slist_append(list, line)
        }
        let milliseconds = max(
            1, Int((Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18) * 1000))
        let context = Unmanaged.passUnretained(self).toOpaque()
        let options: [CURLcode] = request.url.absoluteString.withCString { address in
            [
                CCurl_setopt_pointer(handle, CURLOPT_URL, address),
                CCurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
                CCurl_setopt_pointer(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
                CCurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
                CCurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds),
                CCurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, min(milliseconds, 15_000)),
                CCurl_setopt_offset(
                    handle, CURLOPT_MAXFILESIZE_LARGE, limits.truncating ? 0 : curl_off_t(limits.largest)),
                // Every encoding this libcurl decodes; the callbacks count what it gives.
                CCurl_setopt_pointer(handle, CURLOPT_ACCEPT_ENCODING, ""),
                CCurl_setopt_pointer(handle, CURLOPT_USERAGENT, "calwatch"),
                CCurl_setopt_pointer(handle, CURLOPT_HTTPHEADER, list),
                CCurl_setopt_pointer(handle, CURLOPT_CUSTOMREQUEST, request.method),
                CCurl_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, transferWrote),
                CCurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context),
                CCurl_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, transferHeader),
                CCurl_setopt_pointer(handle, CURLOPT_HEADERDATA, context),
                CCurl_setopt_long(handle, CURLOPT_NOPROGRESS, 0),
                CCurl_setopt_progress_callback(handle, transferProgress),
                CCurl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context),
            ]
        }
        if let authorities = request.certificateAuthorities {
            _ = CCurl_setopt_pointer(handle, CURLOPT_CAINFO, authorities)
        }
        if let socket = request.unixSocket {
            _ = CCurl_setopt_pointer(handle, CURLOPT_UNIX_SOCKET_PATH, socket)
        }
        if let failed = options.first(where: { $0 != CURLE_OK }) {
            return .failure(HTTPClient.Failure(reason: "libcurl refused an option: \(Self.words(failed))"))
        }
        if let data = request.body {
            // Copied by libcurl, so it outlives this scope.
            _ = CCurl_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(data.count))
            _ = data.withUnsafeBytes { CCurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
        } else if request.method == "GET" {
            _ = CCurl_setopt_long(handle, CURLOPT_HTTPGET, 1)
        }
        let code = curl_easy_perform(handle)
        if code != CURLE_OK && !truncated {
            return .failure(HTTPClient.Failure(reason: failure(code, total: total)))
        }
        var status = 0
        _ = CCurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(
            HTTPClient.Answer(
                status: status, headers: headers, body: body, url: request.url, received: received,
                truncated: truncated))
    }

    /// The body's bytes before decoding, so far.
    private var received: Int {
        var count: curl_off_t = 0
        if let handle { _ = CCurl_getinfo_offset(handle, CURLINFO_SIZE_DOWNLOAD_T, &count) }
        return Int(count)
    }

    private func failure(_ code: CURLcode, total: Duration) -> String {
        if let stop { return stop }
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return "no answer in time (\(HTTPClient.seconds(total)))"
        case CURLE_ABORTED_BY_CALLBACK: return "stopped"
        case CURLE_COULDNT_CONNECT: return "cannot connect (is the server up?)"
        case CURLE_COULDNT_RESOLVE_HOST: return "unknown host"
        case CURLE_FILESIZE_EXCEEDED:
            return "an answer larger than \(HTTPClient.size(limits.largest)) (by its Content-Length); not read"
        case CURLE_PARTIAL_FILE: return "the answer was cut off (shorter than its Content-Length)"
        case CURLE_GOT_NOTHING: return "the server closed the connection without an answer"
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR: return "the connection was cut"
        case CURLE_BAD_CONTENT_ENCODING: return "the answer's compression is broken"
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE:
            return "TLS failed: \(Self.words(code))"
        default: return Self.words(code)
        }
    }

    private static func words(_ code: CURLcode) -> String {
        String(cString: curl_easy_strerror(code))
    }

    /// A body's bytes, decoded; `nil` (stop) past the limits.
    fileprivate func wrote(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if body.count + bytes.count > limits.largest {
            if limits.truncating {
                body.append(contentsOf: bytes.prefix(limits.largest - body.count))
                truncated = true
                return false
            }
            stop = "an answer larger than \(HTTPClient.size(limits.largest)); not read"
            return false
        }
        body.append(contentsOf: bytes)
        if body.count > 1 << 20, body.count > received * limits.expansion {
            stop =
                "an answer that expands more than \(limits.expansion) times when decompressed (a compression bomb?); "
                + "not read"
            return false
        }
        return true
    }

    fileprivate func header(_ bytes: UnsafeRawBufferPointer) -> Bool {
        headerBytes += bytes.count
        if headerBytes > limits.headerBytes {
            stop = "an answer with more than \(limits.headerBytes >> 10) KiB of headers; not read"
            return false
        }
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            // A new answer (after `100 Continue`): its headers only.
            headers = [:]
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return true
    }
}

private func transferWrote(data: UnsafeMutablePointer<CChar>?, size: Int, count: Int, context: UnsafeMutableRawPointer?)
    -> Int
{
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    // Anything but the count given stops the transfer (CURLE_WRITE_ERROR).
    return transfer.wrote(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
}

private func transferHeader(
    data: UnsafeMutablePointer<CChar>?, size: Int, count: Int, context: UnsafeMutableRawPointer?
)
    -> Int
{
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.header(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
}

/// Called by libcurl at least once a second, even while nothing arrives: non-zero ends the transfer.
private func transferProgress(
    context: UnsafeMutableRawPointer?, _: curl_off_t, _: curl_off_t, _: curl_off_t, _: curl_off_t
) -> Int32 {
    guard let context else { return 1 }
    return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().isCancelled ? 1 : 0
}
