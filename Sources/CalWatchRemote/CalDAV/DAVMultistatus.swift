import CalWatchCore
package import Foundation

/// A WebDAV `multistatus` answer as a CalDAV client reads it (RFC 4918 §13, RFC 6578, RFC 4791): each response's
/// href, its status, and the properties it was found to have. Read with the same libxml2 pull reader, and the same
/// limits, as CalDAV exports (`CalDAVMultistatus`).
package struct DAVMultistatus: Sendable {
    package struct Response: Sendable, Equatable {
        package var href: String
        /// The response's own status (`404` for a member gone from a sync-collection answer), `nil` when it has
        /// only propstats.
        package var status: Int?
        /// Properties found (propstat status 2xx), by local name: `displayname`, `calendar-color`, `getetag`,
        /// `getctag`, `sync-token`, `calendar-data`; for `current-user-principal` and `calendar-home-set`, the href
        /// they hold.
        package var properties: [String: String] = [:]
        /// Whether its `resourcetype` holds CalDAV's `calendar`.
        package var isCalendar = false

        package subscript(_ name: String) -> String? { properties[name] }
    }

    package var responses: [Response] = []
    /// The collection's new token, in a sync-collection answer.
    package var syncToken: String?

    /// The properties read; any other is skipped with its contents.
    private static let read: Set<String> = [
        "displayname", "calendar-color", "getetag", "getctag", "sync-token", "calendar-data",
        "current-user-principal", "calendar-home-set",
    ]

    /// The XML could not be read: where it broke, in libxml2's words.
    package struct Unreadable: Error, Sendable {
        package var line: Int?
        package var reason: String
    }

    /// Reads an answer, or throws `Unreadable` naming the line where the XML broke.
    package init(data: Data) throws(Unreadable) {
        var collector = Collector()
        do {
            try CalDAVMultistatus.read(data) { event in
                switch event {
                case .start(let name, let namespace): collector.start(name, namespace: namespace)
                case .end(let name, _): collector.end(name)
                case .text(let text): collector.text(text)
                }
            }
        } catch let failure as CalDAVMultistatus.ParseFailure {
            throw Unreadable(line: failure.line, reason: failure.reason)
        } catch {
            throw Unreadable(line: nil, reason: "\(error)")
        }
        guard collector.sawMultistatus else {
            throw Unreadable(line: nil, reason: "this XML is not a WebDAV multistatus document")
        }
        responses = collector.responses
        syncToken = collector.syncToken
    }

    /// `HTTP/1.1 404 Not Found` → 404.
    static func statusCode(_ line: String) -> Int? {
        let parts = line.split(separator: " ")
        return parts.count >= 2 ? Int(parts[1]) : nil
    }

    /// The state of one document being read: the response, the propstat and the property open now.
    private struct Collector {
        var responses: [Response] = []
        var syncToken: String?
        var sawMultistatus = false
        private var response: Response?
        /// The open propstat's properties, kept only when its status is 2xx.
        private var found: [String: String] = [:]
        private var foundCalendar = false
        private var property: String?
        private var text = ""
        private var inResourceType = false
        private var inPropstat = false
        /// The element whose text is gathered: `href`, `status`, `sync-token` or a property.
        private var gathering: String?

        mutating func start(_ name: String, namespace: String) {
            switch name {
            case "multistatus" where namespace == CalDAVMultistatus.davNamespace: sawMultistatus = true
            case "response" where namespace == CalDAVMultistatus.davNamespace:
                response = Response(href: "")
            case "propstat":
                inPropstat = true
                found = [:]
                foundCalendar = false
            case "resourcetype": inResourceType = true
            case "calendar" where inResourceType && namespace == CalDAVMultistatus.calDAVNamespace:
                foundCalendar = true
            case "href", "status":
                // An href inside a property (current-user-principal) is that property's value.
                if property == nil || name == "href" { begin(name) }
            case "sync-token" where response == nil:
                begin(name)
            case _ where Self.isProperty(name) && response != nil && property == nil:
                property = name
                begin(name)
            default: break
            }
        }

        private mutating func begin(_ name: String) {
            gathering = name
            text = ""
        }

        mutating func text(_ string: String) {
            if gathering != nil { text += string }
        }

        /// The gathered text without the white space around it; worked out only where it is used (a calendar's data
        /// is kept as it came, and the text stays gathered until the next element begins).
        private var value: String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

        mutating func end(_ name: String) {
            switch name {
            case "href" where gathering == "href":
                if let property {
                    found[property] = value
                    gathering = property
                } else {
                    let href = value  // read before `response` is changed: one access to `self` at a time
                    response?.href = href
                    gathering = nil
                }
            case "status" where gathering == "status":
                gathering = nil
                let code = DAVMultistatus.statusCode(value)
                if !inPropstat {
                    response?.status = code
                } else if let code, (200..<300).contains(code) {
                    for (key, value) in found { response?.properties[key] = value }
                    if foundCalendar { response?.isCalendar = true }
                }
            case "sync-token" where response == nil && gathering == "sync-token":
                syncToken = value
                gathering = nil
            case "resourcetype": inResourceType = false
            case "propstat": inPropstat = false
            case "response":
                if let response { responses.append(response) }
                response = nil
            case _ where name == property:
                // A property holding an href (current-user-principal) keeps the href; others their text.
                if found[name] == nil || !["current-user-principal", "calendar-home-set"].contains(name) {
                    found[name] = name == "calendar-data" ? text : value
                }
                property = nil
                gathering = nil
            default: break
            }
        }

        static func isProperty(_ name: String) -> Bool { DAVMultistatus.read.contains(name) }
    }
}
