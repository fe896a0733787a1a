import Foundation

/// An address with credentials in it: any `scheme://user:password@host/…?password=…` (a feed's, a CalDAV
/// account's), or a PostgreSQL connection string read the way libpq reads one (a URI, or `key = value` pairs with
/// optional spaces around `=`, single-quoted values and backslash escapes), so that its password can be kept out
/// of every name, message, log, metric label and journal row calwatch makes of it. The one redaction for all of
/// them.
public struct ConnectionString: Sendable, Hashable {
    public let text: String

    public init(_ text: String) {
        self.text = text
    }

    /// The string without its password, in the form it was written (`postgres://me@db/calwatch`,
    /// `host=db user=me dbname=calwatch`). A string calwatch cannot read is shown as its keys alone.
    public var redacted: String {
        if let uri = uriParts { return uri.redacted }
        guard let pairs = Self.pairs(text) else { return "(a connection string that cannot be read)" }
        return pairs.filter { $0.key.lowercased() != "password" }
            .map { "\($0.key)=" + Self.quoted($0.value) }.joined(separator: " ")
    }

    /// Every form the password takes in the string and in libpq's messages about it: as written, and decoded.
    public var secrets: [String] {
        var found: [String] = []
        if let uri = uriParts {
            found = uri.passwords
        } else if let pairs = Self.pairs(text) {
            found = pairs.filter { $0.key.lowercased() == "password" }.flatMap { [$0.raw, $0.value] }
        }
        return Array(Set(found.filter { !$0.isEmpty })).sorted { $0.count > $1.count }
    }

    /// `message` with every form of the password replaced by `***` (libpq quotes a bad token back, as in
    /// `invalid percent-encoded token: "s3cr%zz"`).
    public func scrubbed(_ message: String) -> String {
        secrets.reduce(message) { $0.replacingOccurrences(of: $1, with: "***") }
    }

    // MARK: URI

    private struct URIParts {
        var redacted: String
        var passwords: [String]
    }

    /// `scheme://[user[:password]@]host…[?key=value&…]`; libpq (and URL parsers) end the user information at the
    /// first `@` before the first `/`.
    private var uriParts: URIParts? {
        guard let separator = text.range(of: "://"),
            text[..<separator.lowerBound].allSatisfy({
                $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0))
            }),
            separator.lowerBound > text.startIndex
        else { return nil }
        var rest = text[separator.upperBound...]
        var head = String(text[..<separator.upperBound])
        var passwords: [String] = []
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        if let at = rest[..<authorityEnd].firstIndex(of: "@") {
            let userinfo = rest[..<at]
            if let colon = userinfo.firstIndex(of: ":") {
                let password = String(userinfo[userinfo.index(after: colon)...])
                passwords += [password, password.removingPercentEncoding ?? password]
                head += userinfo[..<colon] + "@"
            } else {
                head += userinfo + "@"
            }
            rest = rest[rest.index(after: at)...]
        }
        guard let question = rest.firstIndex(of: "?") else {
            return URIParts(redacted: head + rest, passwords: passwords)
        }
        head += rest[...question]
        var kept: [Substring] = []
        for pair in rest[rest.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false) {
            let key = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            if (key.removingPercentEncoding ?? key).lowercased() == "password" {
                let value = String(pair.dropFirst(key.count + 1))
                passwords += [value, value.removingPercentEncoding ?? value]
            } else {
                kept.append(pair)
            }
        }
        return URIParts(redacted: head + kept.joined(separator: "&"), passwords: passwords)
    }

    // MARK: key = value

    private struct Pair {
        var key: String
        /// The value with quotes and escapes undone.
        var value: String
        /// The value as written.
        var raw: String
    }

    /// libpq's `conninfo_parse`: `key = value` separated by white space; a value in single quotes may hold white
    /// space; `\` escapes the next character. `nil` where libpq would refuse the string.
    private static func pairs(_ text: String) -> [Pair]? {
        var pairs: [Pair] = []
        var characters = Substring(text)
        func skipSpace() { characters = characters.drop { $0.isWhitespace } }
        while true {
            skipSpace()
            guard !characters.isEmpty else { return pairs }
            let key = characters.prefix { $0 != "=" && !$0.isWhitespace }
            characters = characters.dropFirst(key.count)
            skipSpace()
            guard !key.isEmpty, characters.first == "=" else { return nil }
            characters = characters.dropFirst()
            skipSpace()
            var value = ""
            let start = characters.startIndex
            if characters.first == "'" {
                characters = characters.dropFirst()
                var closed = false
                while let next = characters.first {
                    characters = characters.dropFirst()
                    if next == "\\", let escaped = characters.first {
                        value.append(escaped)
                        characters = characters.dropFirst()
                    } else if next == "'" {
                        closed = true
                        break
                    } else {
                        value.append(next)
                    }
                }
                guard closed else { return nil }
            } else {
                while let next = characters.first, !next.isWhitespace {
                    characters = characters.dropFirst()
                    if next == "\\", let escaped = characters.first {
                        value.append(escaped)
                        characters = characters.dropFirst()
                    } else {
                        value.append(next)
                    }
                }
            }
            pairs.append(Pair(key: String(key), value: value, raw: String(text[start..<characters.startIndex])))
        }
    }

    private static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0.isWhitespace || $0 == "'" || $0 == "\\" }) else {
            return value
        }
        return "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
