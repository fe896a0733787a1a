/// What settles an item's kind without code, where calwatch's judgement is wrong for a user's calendar: the item's
/// own `X-CALWATCH-KIND:flight|meeting|event` property, or a `classify:` entry of config.yml matching its summary,
/// calendar or UID (the first that matches wins; the property wins over every entry).
public struct KindRule: Sendable, Hashable {
    public var kind: OccurrenceFacts.Kind
    /// Calendars it applies to, compared without regard to case (`nil`: any).
    public var calendars: [String]?
    /// UIDs it applies to (`nil`: any).
    public var uids: Set<String>?
    /// A regular expression the summary must contain a match of.
    public var summary: SummaryPattern?
    /// The entry's line in config.yml, for `explain`.
    public var line: Int?

    public init(kind: OccurrenceFacts.Kind) { self.kind = kind }

    /// How the evidence of a settled item begins: "settled as flight by …".
    public static let settledPrefix = "settled as "

    func matches(_ occurrence: Occurrence) -> Bool {
        if let calendars, !calendars.namesCalendar(occurrence.calendar) { return false }
        if let uids, !uids.contains(occurrence.uid) { return false }
        if let summary, !summary.matches(occurrence.summary ?? "") { return false }
        return true
    }

    /// Its conditions as config.yml wrote them, for `explain`.
    var describe: String {
        var parts: [String] = []
        if let summary { parts.append("summary: \(summary.pattern)") }
        if let calendars { parts.append("calendars: \(calendars.joined(separator: ", "))") }
        if let uids { parts.append("uids: \(uids.sorted().joined(separator: ", "))") }
        return parts.joined(separator: "; ")
    }

    /// A rule without conditions would settle every item: refused when read.
    public var matchesEverything: Bool { calendars == nil && uids == nil && summary == nil }

    /// `result` with its kind settled as `kind`, `why` saying by what. A flight settled without flight facts gets
    /// what the flight scan read whatever the weights decided; a meeting without meeting facts an empty one; an
    /// event loses both.
    static func settle(
        _ result: inout Classification, as kind: OccurrenceFacts.Kind, why: Evidence, input: ClassifierInput
    ) {
        result.evidence.append(why)
        result.kind = kind
        result.confidence = 1
        switch kind {
        case .event:
            result.flight = nil
            result.meeting = nil
        case .flight:
            if result.flight == nil {
                var scan = FlightClassifier.Scan(input: input, classifier: FlightClassifier.settled)
                scan.run()
                result.flight = scan.result() ?? FlightFacts(tier: 3)
            }
        case .meeting:
            result.flight = nil
            if result.meeting == nil { result.meeting = MeetingFacts() }
        }
    }
}
