import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Extracts the calendar objects of a CalDAV REPORT response (`multistatus` XML).
///
/// Elements are matched by namespace URI, not prefix (`C:calendar-data`, `cal:calendar-data` and a default
/// namespace are all the same element); CDATA and escaped text both work.
enum CalDAVMultistatus {
    static let calDAVNamespace = "urn:ietf:params:xml:ns:caldav"
    static let davNamespace = "DAV:"

    /// One `calendar-data` element and the `href` of its response.
    struct Object: Sendable {
        var href: String?
        var calendarData: String

        /// The collection the object lives in: the last folder of its href (`/dav/calendars/me/work/x.ics` → `work`).
        var collectionName: String? {
            guard let href else { return nil }
            let folders = href.split(separator: "/").dropLast()
            return folders.last.map { $0.removingPercentEncoding ?? String($0) }
        }
    }

    /// The calendar objects in a document, or an error naming the line where the XML broke.
    static func objects(in data: Data) throws -> [Object] {
        let collector = Collector()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = collector
        guard parser.parse() else {
            throw ParseFailure(
                line: parser.lineNumber,
                reason: parser.parserError.map { "\($0.localizedDescription)" } ?? "malformed XML")
        }
        guard collector.sawMultistatus else {
            throw ParseFailure(line: nil, reason: "this XML is not a WebDAV multistatus document")
        }
        return collector.objects
    }

    /// The XML could not be read.
    struct ParseFailure: Error, Sendable {
        var line: Int?
        var reason: String
    }

    private final class Collector: NSObject, XMLParserDelegate {
        var objects: [Object] = []
        var sawMultistatus = false
        private var href: String?
        private var text: String?
        private var inHref = false

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            switch (namespaceURI, name) {
            case (davNamespace, "multistatus"): sawMultistatus = true
            case (davNamespace, "response"): href = nil
            case (davNamespace, "href"):
                inHref = true
                href = ""
            case (calDAVNamespace, "calendar-data"): text = ""
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            // A `response` opened inside an `href` resets it: text after that starts the href again.
            if text != nil { text?.append(string) } else if inHref { href = (href ?? "") + string }
        }

        func parser(_ parser: XMLParser, foundCDATA block: Data) {
            text?.append(String(decoding: block, as: UTF8.self))
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            switch (namespaceURI, name) {
            case (davNamespace, "href"): inHref = false
            case (calDAVNamespace, "calendar-data"):
                if let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    objects.append(
                        Object(href: href?.trimmingCharacters(in: .whitespacesAndNewlines), calendarData: text))
                }
                text = nil
            default: break
            }
        }
    }
}
