/// The text of a calendar item that classifiers read, each field with its property name.
public struct ClassifierInput: Sendable {
    public var component: CalendarComponent
    /// Seconds from start to end of an occurrence (the first one of a series); `nil` for all-day items.
    public var duration: Double?
    /// Whose item it is, when not the configuration's `me`: a fleet's calendar of another person (its `person`),
    /// lower case without `mailto:`.
    public var me: Set<String>?

    public let summary: String
    public let location: String
    public let description: String
    /// CONFERENCE, URL, X-ALT-DESC (the HTML body) and the services' own link properties, each bounded like the
    /// description.
    public let linkProperties: [NamedText]

    /// The most of each text the classifiers read, in UTF-8 bytes: what decides an item (a flight's lines, a join
    /// link, a dial-in) is near the top of even a long invitation, and a stranger's 450 KB description must not cost
    /// half a second per item.
    public static let textLimit = (summary: 2_048, location: 2_048, description: 32_768)

    public init(component: CalendarComponent, duration: Double?) {
        self.component = component
        self.duration = duration
        summary = Self.bounded(component.summary ?? "", Self.textLimit.summary)
        location = Self.bounded(component.location ?? "", Self.textLimit.location)
        description = Self.bounded(component.description ?? "", Self.textLimit.description)
        linkProperties = component.linkProperties.prefix(64).map {
            NamedText(name: $0.name, value: Self.bounded($0.value, Self.textLimit.description))
        }
    }

    /// The text cut to at most `limit` UTF-8 bytes, at a Unicode scalar boundary.
    static func bounded(_ text: String, _ limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: limit)
        while end.samePosition(in: text.unicodeScalars) == nil { end = text.utf8.index(before: end) }
        return String(text.unicodeScalars[..<end])
    }
}
