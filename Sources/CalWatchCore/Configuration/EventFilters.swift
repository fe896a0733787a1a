/// The filters a sink may have (`on`, `kinds`, `offsets`, `calendars`): hooks, webhooks and MQTT read them alike,
/// and `calwatch why` says which one left an event out.
public protocol EventFilters {
    /// Event types to deliver; `nil` means all.
    var events: Set<EventType>? { get set }
    /// Kinds of occurrence to deliver; `nil` means all.
    var kinds: Set<OccurrenceFacts.Kind>? { get set }
    /// Reminder offsets (seconds) to deliver; other events pass. `nil` means all.
    var offsets: Set<Int64>? { get set }
    /// Calendars (their display names) to deliver; `nil` means all.
    var calendars: Set<String>? { get set }
}
