import CalWatchLocalAddress

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The `calwatch` command as it is typed: a front that links only the Swift runtime and starts in about 2 ms.
//
// `calwatch next` (what a status bar runs every few seconds) is answered here when a daemon reading the same
// configuration file runs: its line is asked of the daemon's local server over the Unix socket linked under
// $XDG_RUNTIME_DIR (docs/commands/next.md). Everything else, and `next` whenever the daemon does not answer, is the
// program itself, `calwatch-commands`, run in this process's place (same process id, arguments and environment), so
// signals, exit statuses and systemd's view of the daemon are the program's own. Starting that program costs tens of
// milliseconds (67 shared libraries, the Swift runtime, Foundation), which is why `next` is worth a front.

/// Runs the program in this process's place; returns only when it cannot be run.
func runProgram() -> Never {
    var candidates: [String] = []
    if let executable = readLink("/proc/self/exe") {
        let folder = String(executable[..<(executable.lastIndex(of: "/") ?? executable.endIndex)])
        // Beside the front in a build folder; in /usr/libexec/calwatch when installed in /usr/bin.
        candidates = [folder + "/calwatch-commands", folder + "/../libexec/calwatch/calwatch-commands"]
    }
    var failure = ENOENT
    for candidate in candidates {
        execv(candidate, CommandLine.unsafeArgv)
        if errno != ENOENT { failure = errno }
    }
    let reason = String(cString: strerror(failure))
    let message =
        "calwatch: cannot run calwatch-commands (\(reason)); looked in \(candidates.joined(separator: " and ")). "
        + "Install calwatch again: the front and the program come together.\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(69)
}

func readLink(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let text = String(cString: value)
    return text.isEmpty ? nil : text
}

/// The query of `GET /v1/next` for these arguments of `next`, and the configuration file they name; `nil` for
/// anything the front does not answer itself (the program then says what is wrong with an argument). An option
/// given twice takes its last value, as the program's parser does.
func nextQuery(_ arguments: ArraySlice<String>) -> (query: [(String, String)], configuration: String?)? {
    let parameters = [
        "--format": "format", "--kinds": "kinds", "--calendars": "calendars", "--within": "horizon",
        "--max-width": "maxWidth", "--none": "none", "--markup": "markup", "--config": "config",
    ]
    var values: [String: String] = [:]
    var rest = arguments
    while let argument = rest.popFirst() {
        let equals = argument.firstIndex(of: "=")
        let name = String(argument[..<(equals ?? argument.endIndex)])
        guard name.hasPrefix("--"), let parameter = parameters[name],
            let value = equals.map({ String(argument[argument.index(after: $0)...]) }) ?? rest.popFirst()
        else { return nil }
        values[parameter] = value
    }
    let format = values["format"] ?? "text"
    switch (values.removeValue(forKey: "markup") ?? "none", format) {
    case ("none", _): break
    case ("pango", "i3blocks"): values["pango"] = "1"
    default: return nil
    }
    if let width = values["maxWidth"] { guard let columns = Int(width), columns >= 1 else { return nil } }
    values["kinds"] = values["kinds"]?.filter { $0 != " " }
    let configuration = values.removeValue(forKey: "config")
    values["format"] = format
    return (values.sorted { $0.key < $1.key }, configuration)
}

func trimmed(_ text: Substring) -> String {
    String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
}

/// The names of the variables `$NAME` and `${NAME}` in a configuration's text: the daemon resolves the file's paths
/// with this process's values of them, so it answers only when they lead where its own do.
func variables(in text: [UInt8]) -> Set<String> {
    var names: Set<String> = ["HOME"]
    var index = 0
    while index < text.count, names.count < 64 {
        defer { index += 1 }
        guard text[index] == UInt8(ascii: "$"), index + 1 < text.count else { continue }
        var start = index + 1
        if text[start] == UInt8(ascii: "{") { start += 1 }
        var end = start
        while end < text.count, text[end] == UInt8(ascii: "_") || isalnum(Int32(text[end])) != 0, text[end] < 128 {
            end += 1
        }
        if end > start { names.insert(String(decoding: text[start..<end], as: UTF8.self)) }
    }
    return names
}

/// At most `limit` bytes of the file at `path`; `nil` when it cannot be read or is larger.
func contents(of path: String, limit: Int) -> [UInt8]? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    return readAll(descriptor, limit: limit)
}

func readAll(_ descriptor: Int32, limit: Int) -> [UInt8]? {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 << 10)
    while true {
        let count = read(descriptor, &chunk, chunk.count)
        if count < 0, errno == EINTR { continue }
        guard count >= 0 else { return nil }
        if count == 0 { return bytes }
        bytes += chunk[..<count]
        if bytes.count > limit { return nil }
    }
}

/// Everything but unreserved characters percent-encoded (RFC 3986 §2.3).
func percentEncoded(_ text: String) -> String {
    var encoded = ""
    for byte in text.utf8 {
        if isalnum(Int32(byte)) != 0 && byte < 128 || "-._~".utf8.contains(byte) {
            encoded.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            let digits = Array("0123456789ABCDEF".utf8)
            encoded += "%" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
        }
    }
    return encoded
}

/// The socket's answer to `request`, whole, within 2 s; `nil` when none comes.
func ask(socket path: String, request: String) -> [UInt8]? {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    #if canImport(Glibc)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    #else
        let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
    #endif
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard connected == 0 else { return nil }
    var pending = Array(request.utf8)[...]
    while !pending.isEmpty {
        let sent = pending.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if sent < 0, errno == EINTR { continue }
        guard sent > 0 else { return nil }
        pending = pending.dropFirst(sent)
    }
    return readAll(descriptor, limit: 4 << 20)
}

/// The body of an HTTP/1.1 answer with status 200 and a `Content-Length` (what the daemon's server sends for a
/// line: it knows the whole body first); `nil` for anything else, which the program then asks for itself.
func body(ofSuccess answer: [UInt8]) -> [UInt8]? {
    guard let end = find([13, 10, 13, 10], in: answer) else { return nil }
    let lines = String(decoding: answer[..<end], as: UTF8.self).lowercased().split(separator: "\r\n")
    guard let status = lines.first, status.hasPrefix("http/1.1 200 ") || status == "http/1.1 200",
        let length = lines.first(where: { $0.hasPrefix("content-length:") }),
        let count = Int(trimmed(length.dropFirst("content-length:".count))), answer.count - end - 4 >= count
    else { return nil }
    return Array(answer[(end + 4)..<(end + 4 + count)])
}

/// Where `pattern` first occurs in `bytes`.
func find(_ pattern: [UInt8], in bytes: [UInt8]) -> Int? {
    guard bytes.count >= pattern.count else { return nil }
    return (0...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
}

/// `next`'s line from the daemon that reads the same configuration, or `nil`.
func nextFromDaemon(_ arguments: ArraySlice<String>) -> [UInt8]? {
    guard let (found, configuration) = nextQuery(arguments), let home = environment("HOME"),
        let runtime = environment("XDG_RUNTIME_DIR")
    else { return nil }
    let file = configuration ?? ((environment("XDG_CONFIG_HOME") ?? home + "/.config") + "/calwatch/config.yml")
    guard let real = realpath(file, nil) else { return nil }
    let path = String(cString: real)
    free(real)
    guard let text = contents(of: path, limit: 1 << 20) else { return nil }
    var query = found + [("file", path)]
    for name in variables(in: text).sorted() {
        if let value = getenv(name) { query.append(("env." + name, String(cString: value))) }
    }
    let target = "/v1/next?" + query.map { percentEncoded($0.0) + "=" + percentEncoded($0.1) }.joined(separator: "&")
    let request = "GET \(target) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    guard let answer = ask(socket: LocalAddress.link(configuration: path, runtimeDirectory: runtime), request: request),
        let line = body(ofSuccess: answer), line.last == UInt8(ascii: "\n")
    else { return nil }
    return line
}

let arguments = CommandLine.arguments
if arguments.count >= 2, arguments[1] == "next", let line = nextFromDaemon(arguments.dropFirst(2)) {
    var written = 0
    while written < line.count {
        let count = line[written...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { exit(74) }
        written += count
    }
    exit(0)
}
runProgram()
