import CXML2
package import Foundation

/// Extracts the calendar objects of a CalDAV REPORT response (`multistatus` XML).
///
/// Elements are matched by namespace URI, not prefix (`C:calendar-data`, `cal:calendar-data` and a default
/// namespace are all the same element); CDATA and escaped text both work.
package enum CalDAVMultistatus {
    package static let calDAVNamespace = "urn:ietf:params:xml:ns:caldav"
    package static let davNamespace = "DAV:"
    static let appleICalNamespace = "http://apple.com/ns/ical/"

    /// One `calendar-data` element and the `href` of its response.
    struct Object: Sendable {
        var href: String?
        var calendarData: String
        /// The collection's `displayname` and `calendar-color`, when the document has a response for the collection
        /// itself (an export made with a Depth 1 PROPFIND, or a REPORT with the collection's properties beside).
        var collectionDisplayName: String?
        var collectionColor: String?

        /// The collection the object lives in: its `displayname` when the document gives it, else the last folder of
        /// its href (`/dav/calendars/me/work/x.ics` → `work`).
        var collectionName: String? {
            if let collectionDisplayName { return collectionDisplayName }
            guard let href else { return nil }
            let folders = href.split(separator: "/").dropLast()
            return folders.last.map { $0.removingPercentEncoding ?? String($0) }
        }

        /// The href of the collection holding the object, percent-decoded and ending in `/`.
        var collectionHref: String? {
            guard let href, let slash = href.lastIndex(of: "/") else { return nil }
            return CalDAVMultistatus.normalized(String(href[...slash]))
        }
    }

    /// An href compared with another: percent-decoded, with a final `/`.
    static func normalized(_ href: String) -> String {
        let decoded = href.removingPercentEncoding ?? href
        return decoded.hasSuffix("/") ? decoded : decoded + "/"
    }

    /// The calendar objects in a document, or an error naming the line where the XML broke.
    static func objects(in data: Data) throws -> [Object] {
        var collector = Collector()
        try read(data) { event in
            switch event {
            case .start(let name, let namespace): collector.start(name, namespace: namespace)
            case .end(let name, let namespace): collector.end(name, namespace: namespace)
            case .text(let text): collector.text(text)
            }
        }
        guard collector.sawMultistatus else {
            throw ParseFailure(line: nil, reason: "this XML is not a WebDAV multistatus document")
        }
        var objects = collector.objects
        for index in objects.indices {
            guard let collection = objects[index].collectionHref.flatMap({ collector.collections[$0] }) else {
                continue
            }
            objects[index].collectionDisplayName = collection.name
            objects[index].collectionColor = collection.color
        }
        return objects
    }

    /// What the pull reader meets, in document order.
    package enum XMLEvent {
        case start(String, namespace: String)
        case end(String, namespace: String)
        case text(String)
    }

    /// Reads a document with libxml2's pull reader, telling `handle` of each element and text, or throws an error
    /// naming the line where the XML broke.
    ///
    /// Foundation's XMLParser traps on invalid UTF-8 in an element name, an end tag, a prefix or a processing
    /// instruction, which took every other path of the command down with it. The reader never fetches anything
    /// (`XML_PARSE_NONET`), never substitutes entities (no `XML_PARSE_NOENT`, so no entity can expand or read a
    /// file), and keeps libxml2's limits on depth and sizes (no `XML_PARSE_HUGE`).
    package static func read(_ data: Data, _ handle: (XMLEvent) -> Void) throws {
        _ = libxml2Ready
        calwatch_xml_silence()
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOERROR.rawValue)
        let reader = data.withUnsafeBytes { bytes in
            xmlReaderForMemory(
                bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(clamping: bytes.count), nil, nil,
                options)
        }
        guard let reader else { throw ParseFailure(line: nil, reason: "libxml2 cannot read this document") }
        defer { xmlFreeTextReader(reader) }
        xmlResetLastError()
        while true {
            let step = xmlTextReaderRead(reader)
            if step == 0 { break }
            guard step == 1 else { throw failure(at: xmlTextReaderGetParserLineNumber(reader)) }
            switch xmlTextReaderNodeType(reader) {
            case Int32(XML_READER_TYPE_ELEMENT.rawValue):
                let name = string(xmlTextReaderConstLocalName(reader))
                let namespace = string(xmlTextReaderConstNamespaceUri(reader))
                handle(.start(name, namespace: namespace))
                if xmlTextReaderIsEmptyElement(reader) == 1 { handle(.end(name, namespace: namespace)) }
            case Int32(XML_READER_TYPE_END_ELEMENT.rawValue):
                handle(
                    .end(
                        string(xmlTextReaderConstLocalName(reader)),
                        namespace: string(xmlTextReaderConstNamespaceUri(reader))))
            case Int32(XML_READER_TYPE_TEXT.rawValue), Int32(XML_READER_TYPE_CDATA.rawValue),
                Int32(XML_READER_TYPE_SIGNIFICANT_WHITESPACE.rawValue), Int32(XML_READER_TYPE_WHITESPACE.rawValue):
                handle(.text(string(xmlTextReaderConstValue(reader))))
            default: break
            }
        }
    }

    /// The XML could not be read.
    package struct ParseFailure: Error, Sendable {
        package var line: Int?
        package var reason: String
    }

    /// libxml2's one-time set-up, before any thread parses ("xmlInitParser … should be called once before
    /// processing in case of use in multithreaded programs").
    private static let libxml2Ready: Void = xmlInitParser()

    /// libxml2's own words for the last error on this thread (`Input is not proper UTF-8, indicate encoding !`),
    /// with its line.
    private static func failure(at readerLine: Int32) -> ParseFailure {
        guard let error = xmlGetLastError(), let message = error.pointee.message else {
            return ParseFailure(line: readerLine > 0 ? Int(readerLine) : nil, reason: "malformed XML")
        }
        // libxml2 puts the offending bytes on a second line ("…indicate encoding !\nBytes: 0xFF 0x6F"): one line.
        let reason = String(cString: message).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "; ")
        let line = error.pointee.line > 0 ? Int(error.pointee.line) : Int(readerLine)
        return ParseFailure(line: line > 0 ? line : nil, reason: "malformed XML: " + reason)
    }

    private static func string(_ pointer: UnsafePointer<xmlChar>?) -> String {
        guard let pointer else { return "" }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: strlen(pointer)), as: UTF8.self)
    }

    /// What the reader found, gathered into objects: the state of one document.
    private struct Collector {
        var objects: [Object] = []
        var sawMultistatus = false
        /// Names and colours of the collections the document describes, by normalized href.
        var collections: [String: (name: String, color: String?)] = [:]
        private var href: String?
        private var data: String?
        private var inHref = false
        /// The response's `displayname` and `calendar-color` while one is read, and whether it held calendar-data.
        private var displayName: String?
        private var color: String?
        private var property: String?
        private var heldData = false

        mutating func start(_ name: String, namespace: String) {
            switch (namespace, name) {
            case (davNamespace, "multistatus"): sawMultistatus = true
            case (davNamespace, "response"):
                href = nil
                displayName = nil
                color = nil
                heldData = false
            case (davNamespace, "href"):
                inHref = true
                href = ""
            case (calDAVNamespace, "calendar-data"): data = ""
            case (davNamespace, "displayname"):
                property = name
                displayName = ""
            case (appleICalNamespace, "calendar-color"):
                property = name
                color = ""
            default: break
            }
        }

        mutating func text(_ string: String) {
            // A `response` opened inside an `href` resets it: text after that starts the href again.
            if data != nil {
                data?.append(string)
            } else if inHref {
                href = (href ?? "") + string
            } else if property == "displayname" {
                displayName?.append(string)
            } else if property == "calendar-color" {
                color?.append(string)
            }
        }

        mutating func end(_ name: String, namespace: String) {
            switch (namespace, name) {
            case (davNamespace, "displayname"), (appleICalNamespace, "calendar-color"): property = nil
            case (davNamespace, "response"):
                // The collection's own response: its name for the objects it holds (a bounded, printable name).
                let trimmed = displayName?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                if !heldData, !trimmed.isEmpty, let href = href?.trimmingCharacters(in: .whitespacesAndNewlines) {
                    let name = String(
                        trimmed.unicodeScalars.filter { $0.properties.generalCategory != .control }
                            .prefix(200).map(Character.init))
                    let color = color?.trimmingCharacters(in: .whitespacesAndNewlines)
                    collections[normalized(href)] = (name, color?.isEmpty == false ? color : nil)
                }
            case (davNamespace, "href"): inHref = false
            case (calDAVNamespace, "calendar-data"):
                heldData = true
                if let data, !data.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    objects.append(
                        Object(href: href?.trimmingCharacters(in: .whitespacesAndNewlines), calendarData: data))
                }
                data = nil
            default: break
            }
        }
    }
}
