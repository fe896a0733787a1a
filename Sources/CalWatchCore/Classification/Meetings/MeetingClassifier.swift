import Foundation

/// Finds meetings (docs/design.md §4): a join link of a known service, read from the item's properties in a fixed order,
/// or attendees besides the user. Also reports whether the user declined.
public struct MeetingClassifier: ItemClassifier {
    /// The user's own addresses (`me` in the configuration), lower case.
    let me: Set<String>
    /// The services links are matched against: the configuration's own (`meetings.providers:`) first.
    let providers: [MeetingProvider]

    public init(me: [String] = [], providers: [MeetingProvider] = []) {
        self.me = Self.addresses(me)
        self.providers = providers + MeetingProvider.all
    }

    /// Addresses as attendees are compared: lower case, without `mailto:`.
    static func addresses(_ written: [String]) -> Set<String> {
        Set(written.map { $0.lowercased().replacingOccurrences(of: "mailto:", with: "") })
    }

    /// The properties a producer fills in for the meeting itself, before the free text of LOCATION and DESCRIPTION.
    static let structured = Set(linkOrder.prefix { $0 != "LOCATION" })

    /// The properties join links are read from, first wins (docs/design.md §4).
    static let linkOrder: [String] = [
        "CONFERENCE", "X-GOOGLE-CONFERENCE", "X-MICROSOFT-SKYPETEAMSMEETINGURL", "X-MICROSOFT-ONLINEMEETINGCONFLINK",
        "X-MICROSOFT-ONLINEMEETINGEXTERNALLINK", "X-MS-OLK-CONFERENCEURL", "URL", "LOCATION", "DESCRIPTION",
        "X-ALT-DESC",
    ]

    public func classify(_ input: ClassifierInput, into classification: inout Classification) {
        let component = input.component
        let me = input.me ?? self.me
        let mine = component.attendees.first { me.contains($0.address) }
        classification.participation = mine.map { $0.participation ?? "NEEDS-ACTION" }
        if let mine, mine.participation == "DECLINED" {
            classification.declined = true
            classification.evidence.append(Evidence(.fact, "you declined", in: "ATTENDEE", text: mine.address))
        }
        var meeting: MeetingFacts?
        let links = joinLinks(in: input)
        if let chosen = Self.choose(links, location: input.location, providers: providers) {
            let (property, link, service) = links[chosen]
            var found = MeetingFacts(service: service, joinURL: link.text)
            found.meetingID = Self.meetingID(in: link, service: service)
            if service == "teams", let passcode = link.parameter("p") { found.passcode = passcode }
            classification.evidence.append(Evidence(.meeting, "\(service) join link", in: property, text: link.text))
            // The others, for `explain`: a stale Zoom link under a current Teams one is a known trap.
            var shown: Set<String> = [link.text]
            for (property, other, service) in links where shown.insert(other.text).inserted {
                classification.evidence.append(
                    Evidence(.fact, "another join link (\(service)), not the one used", in: property, text: other.text))
            }
            meeting = found
        }
        let others = Set(component.attendees.map(\.address) + [component.organizer].compactMap { $0 })
            .subtracting(me).filter { !$0.isEmpty }
        let hasOthers = me.isEmpty ? others.count >= 2 : !others.isEmpty
        if meeting == nil && hasOthers {
            meeting = MeetingFacts()
            classification.evidence.append(
                Evidence(
                    .meeting, "attendees besides you", in: "ATTENDEE",
                    text: others.sorted().prefix(3).joined(separator: ", ")))
        }
        guard var meeting else { return }
        Self.readDetails(input, into: &meeting)
        classification.meeting = meeting
        guard classification.kind == .event else { return }
        classification.kind = .meeting
        classification.confidence = meeting.joinURL != nil ? 0.97 : 0.8
    }

    /// Every join link of a known service in the item, in `linkOrder` (at most 16).
    private func joinLinks(in input: ClassifierInput) -> [(property: String, link: WebLink, service: String)] {
        var found: [(property: String, link: WebLink, service: String)] = []
        for property in Self.linkOrder {
            for (text, html) in texts(of: property, in: input) {
                for link in JoinLinkText.links(in: text, html: html) {
                    guard let service = Self.service(of: link, providers: providers) else { continue }
                    found.append((property, link, service))
                    if found.count == 16 { return found }
                }
            }
        }
        if found.isEmpty, let invited = Self.invitedLink(in: input) { found.append(invited) }
        return found
    }

    /// A link of a service calwatch does not know, on a line that asks to join a meeting ("Rejoindre la réunion :
    /// https://visio.example.fr/abc", "会議に参加 https://…", or the line before says so): the service is named
    /// `web`. Both a join word and a meeting word must be there: "Join us at https://…" is an invitation to a
    /// place, not to a call.
    static func invitedLink(in input: ClassifierInput) -> (property: String, link: WebLink, service: String)? {
        for (property, text) in [("LOCATION", input.location), ("DESCRIPTION", input.description)]
        where JoinLinkText.nextScheme(in: text, from: text.startIndex) != nil {
            var previous = ""
            for line in text.split(whereSeparator: \.isNewline).prefix(80) {
                defer { previous = String(line) }
                guard line.contains("://") else { continue }
                let words = AirportDatabase.fold(previous + " " + line)
                guard MeetingProvider.joinWords.contains(where: { Self.says($0, in: words) }),
                    MeetingProvider.meetingWords.contains(where: { Self.says($0, in: words, asStem: true) })
                else { continue }
                for link in JoinLinkText.links(in: String(line))
                where !MeetingProvider.notMeetingHosts.contains(where: link.isHost)
                    && !MeetingProvider.helpHostPrefixes.contains(where: { link.host.hasPrefix($0) })
                    && link.path.count > 1
                {
                    return (property, link, "web")
                }
            }
        }
        return nil
    }

    /// Whether folded `text` holds `word`: as a whole word where it is written with Latin letters (or as a word's
    /// start, `asStem`: "spotkan" in "spotkania"), anywhere in scripts written without spaces.
    private static func says(_ word: String, in text: String, asStem: Bool = false) -> Bool {
        guard word.unicodeScalars.allSatisfy({ $0.value < 0x3000 }) else { return text.contains(word) }
        var start = text.startIndex
        while let range = text.range(of: word, range: start..<text.endIndex) {
            let before = range.lowerBound == text.startIndex || !text[text.index(before: range.lowerBound)].isLetter
            let after = asStem || range.upperBound == text.endIndex || !text[range.upperBound].isLetter
            if before && after { return true }
            start = range.upperBound
        }
        return false
    }

    /// Which of several join links to use: the first a structured property holds (CONFERENCE,
    /// X-GOOGLE-CONFERENCE, Teams' URL properties, URL), else the first of the service LOCATION names
    /// ("Microsoft Teams Meeting"), else the first.
    static func choose(
        _ links: [(property: String, link: WebLink, service: String)], location: String, providers: [MeetingProvider]
    ) -> Int? {
        guard !links.isEmpty else { return nil }
        if let structured = links.firstIndex(where: { Self.structured.contains($0.property) }) { return structured }
        let place = location.lowercased()
        if !place.isEmpty {
            let named = Set(
                providers.filter { provider in provider.names.contains { place.contains($0) } }.map(\.id))
            if let index = links.firstIndex(where: { named.contains($0.service) }) { return index }
        }
        return 0
    }

    /// The texts of `property` in the item, each with whether it is HTML.
    private func texts(of property: String, in input: ClassifierInput) -> [(String, Bool)] {
        switch property {
        case "LOCATION": return [(input.location, false)]
        case "DESCRIPTION": return [(input.description, false)]
        default:
            // Outlook's other X-MICROSOFT-ONLINEMEETING* properties take their turn with the conference link's.
            func matches(_ name: String) -> Bool {
                name == property
                    || (property == "X-MICROSOFT-ONLINEMEETINGCONFLINK" && name.hasPrefix("X-MICROSOFT-ONLINEMEETING")
                        && !Self.linkOrder.contains(name))
            }
            return input.linkProperties.filter { matches($0.name) }.map {
                ($0.value, property == "X-ALT-DESC")
            }
        }
    }

    /// The service a link joins, or `nil` for help, dial-in and start pages and unknown hosts.
    static func service(of link: WebLink, providers: [MeetingProvider] = MeetingProvider.all) -> String? {
        if MeetingProvider.helpHostPrefixes.contains(where: { link.host.hasPrefix($0) }) { return nil }
        let path = link.path.lowercased()
        // FaceTime keeps the meeting in the fragment (`/join#v=1&p=…`).
        let pathAndQuery =
            path + (link.query.isEmpty ? "" : "?" + link.query.lowercased())
            + (link.fragment.isEmpty ? "" : "#" + link.fragment)
        var knownHost = false
        for provider in providers where provider.hosts.contains(where: link.isHost) {
            knownHost = true
            if provider.notJoin.contains(where: { path.hasPrefix($0) }) { continue }
            if provider.join.isEmpty {
                if path.count >= 2 { return provider.id }
            } else if provider.join.contains(where: { prefix in
                // Something must follow the prefix: `https://zoom.us/j/` names no meeting.
                prefix.hasPrefix("*")
                    ? pathAndQuery.contains(prefix.dropFirst())
                    : pathAndQuery.hasPrefix(prefix) && pathAndQuery.count > prefix.count
            }) {
                return provider.id
            }
        }
        // A link a mail gateway wrapped beyond recovery (Mimecast) still names the service's domain.
        if link.isHost("mimecast.com"), let domain = link.parameter("domain"),
            let named = WebLink("https://" + domain + "/j/1"),
            let provider = providers.first(where: { $0.hosts.contains(where: named.isHost) })
        {
            return provider.id
        }
        // A known service's other pages (`meet.goto.com/install`) are not someone's own server.
        return knownHost ? nil : MeetingProvider.selfHosted(link, path: path)
    }

    /// The meeting's id as the link carries it: Zoom's number or personal name, a Meet code, a Teams or GoTo
    /// number, a personal room's name; `nil` where the link holds only an opaque token.
    static func meetingID(in link: WebLink, service: String) -> String? {
        let parts = link.path.split(separator: "/").map(String.init)
        func after(_ names: Set<String>) -> String? {
            guard let index = parts.firstIndex(where: { names.contains($0.lowercased()) }), index + 1 < parts.count
            else { return nil }
            return parts[index + 1]
        }
        switch service {
        case "zoom", "zoomgov":
            // `/j/ID`, `/join?confno=ID`, and the web client's `/wc/ID/join` and `/wc/join/ID`.
            if let number = link.parameter("confno") { return number }
            if let id = after(["j", "my", "w"]) { return id }
            guard let client = parts.firstIndex(where: { $0.lowercased() == "wc" }), client + 1 < parts.count else {
                return nil
            }
            let next = parts[client + 1]
            return next.lowercased() == "join" ? (client + 2 < parts.count ? parts[client + 2] : nil) : next
        case "teams", "webex": return after(["meet"])
        case "gotomeeting": return link.parameter("meetingId") ?? after(["join"]) ?? (parts.count == 1 ? parts[0] : nil)
        case "chime": return link.parameter("meetingId") ?? (parts.count == 1 ? parts[0] : nil)
        case "meet", "jitsi", "whereby", "bluejeans", "lifesize", "vonage": return parts.last
        default: return nil
        }
    }

    static let idLabels: Set<String> = [
        "meeting id", "meeting-id", "meetingid", "besprechungs-id", "besprechungs id", "id de reunion",
        "id de la reunion", "id de reunion", "meeting number", "meeting number (access code)", "access code",
        "id riunione", "conference id",
    ]
    static let passcodeLabels: Set<String> = [
        "passcode", "password", "meeting password", "kenncode", "code secret", "codigo de acceso", "pass code",
        "meeting passcode", "passwort", "mot de passe", "contrasena", "code",
    ]

    /// How to join by phone: a `tel:` link, else a one-tap line (`+16465588656,,86462134759#`), else the first
    /// number on or just after a line about dialling in.
    static func dialIn(in input: ClassifierInput) -> String? {
        let htmlTexts = input.linkProperties.filter { $0.name == "X-ALT-DESC" }.map(\.value)
        for text in [input.description] + htmlTexts {
            if let range = text.range(of: "tel:", options: .caseInsensitive) {
                let number = text[range.upperBound...].prefix { $0.isNumber || "+,#*;".contains($0) }
                if number.filter(\.isNumber).count >= 6 { return String(number) }
            }
        }
        let lines = input.description.split(whereSeparator: \.isNewline).map(String.init)
        func phone(in line: String) -> String? {
            let start = line.drop { $0 != "+" }
            let number = start.prefix { $0.isNumber || "+ -().,#*".contains($0) }
                .trimmingCharacters(in: CharacterSet(charactersIn: " -(.,"))
            return number.filter(\.isNumber).count >= 8 ? number : nil
        }
        if let oneTap = lines.first(where: { $0.contains(",,") }).flatMap(phone) { return oneTap }
        for (index, line) in lines.enumerated() {
            let folded = line.lowercased()
            guard
                folded.contains("dial") || folded.contains("phone") || folded.contains("telefon")
                    || folded.contains("call in") || folded.contains("einwahl")
            else { continue }
            for candidate in lines[index..<min(lines.count, index + 3)] {
                if let number = phone(in: candidate) {
                    // "+1 318-555-0147 PIN: 263#": the number ends where the words begin.
                    return number.split(separator: " ").prefix { !$0.contains(where: \.isLetter) }.joined(
                        separator: " ")
                }
            }
        }
        return nil
    }

    /// Meeting id, passcode and dial-in from the description's labelled lines and its `tel:` links.
    static func readDetails(_ input: ClassifierInput, into meeting: inout MeetingFacts) {
        let fields = LabelledFields(input.description)
        if meeting.meetingID == nil, let value = fields.value(idLabels) {
            meeting.meetingID =
                value.filter { $0.isNumber || $0.isLetter || $0 == "-" }.isEmpty
                ? nil
                : value.trimmingCharacters(in: .whitespaces)
        }
        if meeting.passcode == nil, let value = fields.value(passcodeLabels) {
            meeting.passcode = value.split(separator: " ").first.map(String.init)
        }
        meeting.dialIn = dialIn(in: input)
    }
}
