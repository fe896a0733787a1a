/// A meeting's join details.
public struct MeetingFacts: Sendable, Hashable {
    /// The provider id (`zoom`, `teams`, `meet`, …), `nil` for attendees without a join link.
    public var service: String?
    public var joinURL: String?
    public var meetingID: String?
    public var passcode: String?
    public var dialIn: String?

    public init(service: String? = nil, joinURL: String? = nil) {
        self.service = service
        self.joinURL = joinURL
    }
}
