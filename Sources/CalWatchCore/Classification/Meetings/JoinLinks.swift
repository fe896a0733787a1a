import Foundation

/// A URL taken apart the strict way: an `http(s)` scheme, a host of letters, digits, dots and dashes, no user
/// information (`https://zoom.us@evil.example/` is refused, not read as Zoom).
struct WebLink: Hashable {
    var text: String
    var host: String
    var path: String
    var query: String
    var fragment: String

    init?(_ text: String) {
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "https" || scheme == "http" else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@"), !authority.contains("\\") else { return nil }
        var host = authority.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
        if host.hasSuffix(".") { host.removeLast() }
        guard !host.isEmpty, host.contains("."),
            host.unicodeScalars.allSatisfy({
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "-")
            })
        else { return nil }
        var remainder = rest[authorityEnd...]
        var fragment = ""
        if let hash = remainder.firstIndex(of: "#") {
            fragment = String(remainder[remainder.index(after: hash)...])
            remainder = remainder[..<hash]
        }
        var query = ""
        if let mark = remainder.firstIndex(of: "?") {
            query = String(remainder[remainder.index(after: mark)...])
            remainder = remainder[..<mark]
        }
        // Scheme and host in lower case (`HTTPS://Whereby.com/Team` joins `https://whereby.com/Team`), without the
        // scheme's own port (`teams.microsoft.com:443`); the path, query and fragment as written.
        var shownAuthority = authority.lowercased()
        let defaultPort = scheme == "https" ? ":443" : ":80"
        if shownAuthority.hasSuffix(defaultPort) { shownAuthority.removeLast(defaultPort.count) }
        self.text = scheme + "://" + shownAuthority + rest[authorityEnd...]
        self.host = host
        self.path = remainder.isEmpty ? "/" : String(remainder)
        self.query = query
        self.fragment = fragment
    }

    /// Whether the host is `domain` or one of its subdomains.
    func isHost(_ domain: String) -> Bool { host == domain || host.hasSuffix("." + domain) }

    /// A query parameter, percent-decoded.
    func parameter(_ name: String) -> String? {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
        }
        return nil
    }
}

/// Finds links in calendar text: plain text, `<https://…>` (Outlook), HTML `href`s (`X-ALT-DESC`), and links
/// without a scheme to known services (`meet.google.com/abc-defg-hij`); unwraps mail-security redirects.
enum JoinLinkText {
    /// The links in `text`, in order, each unwrapped.
    static func links(in text: String, html: Bool = false) -> [WebLink] {
        var found: [WebLink] = []
        let source = html ? decodeEntities(text) : text
        var index = source.startIndex
        while let start = nextScheme(in: source, from: index) {
            var end = source[start...].firstIndex(where: isLinkEnd) ?? source.endIndex
            var candidate = String(source[start..<end])
            candidate = trimmed(candidate)
            if let link = WebLink(candidate).map(unwrap) { found.append(link) }
            if end == start { end = source.index(after: start) }
            index = end
        }
        // Links written without a scheme, to services people type by hand.
        guard source.utf8.contains(UInt8(ascii: "/")) else { return found }
        for word in source.split(whereSeparator: {
            $0.isWhitespace || $0 == "<" || $0 == ">" || $0 == "\"" || $0 == "("
        })
        where !word.contains("://") && word.contains("/") && word.contains(".") {
            let text = trimmed(String(word))
            let lower = text.lowercased()
            guard Self.barePrefixes.contains(where: { lower.hasPrefix($0) }), let link = WebLink("https://" + text)
            else { continue }
            found.append(link)
        }
        return found
    }

    /// Hosts people write without `https://`.
    static let barePrefixes = [
        "meet.google.com/", "zoom.us/", "us02web.zoom.us/", "us04web.zoom.us/", "us05web.zoom.us/", "us06web.zoom.us/",
        "teams.microsoft.com/", "teams.live.com/", "meet.jit.si/", "whereby.com/", "facetime.apple.com/",
        "chime.aws/", "join.skype.com/", "discord.gg/", "bluejeans.com/", "meet.goto.com/",
    ]

    /// Where the next `http://` or `https://` (any case) begins.
    static func nextScheme(in text: String, from index: String.Index) -> String.Index? {
        let utf8 = text.utf8
        var position = index.samePosition(in: utf8) ?? utf8.startIndex
        func lower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }
        while let h = utf8[position...].firstIndex(where: { $0 == UInt8(ascii: "h") || $0 == UInt8(ascii: "H") }) {
            let rest = utf8[h...].prefix(8).map(lower)
            if rest.starts(with: Array("https://".utf8)) || rest.starts(with: Array("http://".utf8)) {
                return h
            }
            position = utf8.index(after: h)
        }
        return nil
    }

    private static func isLinkEnd(_ character: Character) -> Bool {
        character.isWhitespace || character == "<" || character == ">" || character == "\"" || character == "'"
            || character == "`" || character == "|" || character == "\\" || character == "]" || character == "}"
            || character == "^"
    }

    /// Drops what ends a sentence around a link: `.`, `,`, `;`, `:`, `!`, `?`, a closing `)` without its
    /// opening one, `>`, `*` and `_` of Markdown.
    static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while let last = text.last {
            if ".,;:!?>*_'\"".contains(last) {
                text = text.dropLast()
            } else if last == ")" && text.filter({ $0 == "(" }).count < text.filter({ $0 == ")" }).count {
                text = text.dropLast()
            } else {
                break
            }
        }
        return String(text)
    }

    /// Outlook SafeLinks (under every regional host, and Teams' own `atp-safelinks.html` page), Proofpoint URL
    /// Defense (v1, v2 and v3), Google's redirect, Barracuda, Trend Micro, Symantec, Trellix, Sophos and Cisco link
    /// protection, repeatedly (a link can be wrapped twice). Mimecast keeps the original on its server: only the
    /// service's domain is left to read (`MeetingClassifier.service`).
    static func unwrap(_ link: WebLink) -> WebLink {
        var link = link
        for _ in 0..<4 {
            guard let inner = unwrapOnce(link), let parsed = WebLink(trimmed(inner)) else { return link }
            link = parsed
        }
        return link
    }

    private static func unwrapOnce(_ link: WebLink) -> String? {
        if link.isHost("safelinks.protection.outlook.com") || link.isHost("safelinks.outlook.microsoft.com") {
            return link.parameter("url")
        }
        if link.isHost("statics.teams.cdn.office.net"), link.path.lowercased().hasSuffix("/atp-safelinks.html") {
            return link.parameter("url")
        }
        if link.isHost("google.com") && link.path == "/url" { return link.parameter("q") ?? link.parameter("url") }
        if link.isHost("linkprotect.cudasvc.com") { return link.parameter("a") }
        // Trend Micro (`…trendmicro.com/wis/clicktime/v1/query?url=`), Symantec ClickTime, Trellix (FireEye) and
        // Proofpoint v1: the original in a parameter.
        if link.isHost("trendmicro.com") || link.isHost("trendmicro.eu"), link.path.contains("/clicktime/") {
            return link.parameter("url")
        }
        if link.isHost("clicktime.symantec.com") { return link.parameter("u") }
        if link.isHost("fireeye.com") || link.isHost("trellix.com"), link.path.hasPrefix("/v1/url") {
            return link.parameter("u")
        }
        if link.isHost("urldefense.proofpoint.com"), link.path.hasPrefix("/v1/url") { return link.parameter("u") }
        // Sophos: the original in base64 (URL-safe alphabet, padding dropped).
        if link.isHost("protection.sophos.com"), let encoded = link.parameter("u") {
            var base64 = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            return Data(base64Encoded: base64).flatMap { String(data: $0, encoding: .utf8) }
        }
        // Cisco Secure Email: the original percent-encoded as the last segment of the path.
        if link.isHost("secure-web.cisco.com"), let last = link.path.split(separator: "/").last,
            last.lowercased().hasPrefix("http")
        {
            return String(last).removingPercentEncoding
        }
        if link.isHost("urldefense.proofpoint.com"), link.path.hasPrefix("/v2/url"), let encoded = link.parameter("u") {
            // v2: `-` stands for `%` and `_` for `/`.
            return encoded.replacingOccurrences(of: "_", with: "/").replacingOccurrences(of: "-", with: "%")
                .removingPercentEncoding
        }
        if link.isHost("urldefense.com"), link.path.hasPrefix("/v3/__") {
            // v3: the original between `__` and `__;`, with `*` for characters it replaced.
            let body = link.text.components(separatedBy: "/v3/__").dropFirst().first ?? ""
            return body.components(separatedBy: "__;").first
        }
        return nil
    }

    /// `&amp;` and the other entities of HTML that appear in links.
    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = text
        for (entity, character) in [
            ("&quot;", "\""), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">"), ("&#61;", "="), ("&#43;", "+"),
            ("&nbsp;", " "), ("&amp;", "&"),
        ] {
            result = result.replacingOccurrences(of: entity, with: character)
        }
        return result
    }
}
