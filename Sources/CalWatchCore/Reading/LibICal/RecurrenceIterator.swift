import CICal

/// Walks the instances of one RRULE with libical's `icalrecur_iterator`, in wall-clock time.
///
/// The rule is handed over without `UNTIL` (see `RecurrenceRuleText`): calwatch applies `UNTIL` itself so that a
/// UTC `UNTIL` is compared as an instant against a zoned start, and a DATE `UNTIL` on a DATE-TIME series covers
/// its whole day. Not `Sendable`: the C iterator is owned by this object and freed in `deinit`.
final class RecurrenceIterator {
    private let iterator: OpaquePointer

    /// Creates an iterator, or `nil` when libical cannot read the rule.
    init?(rule: String, start: LocalDateTime, isDate: Bool) {
        _ = LibICal.ready
        let recurrence = icalrecurrencetype_from_string(rule)
        guard recurrence.freq != ICAL_NO_RECURRENCE else { return nil }
        guard let iterator = icalrecur_iterator_new(recurrence, Self.icalTime(start, isDate: isDate)) else {
            return nil
        }
        self.iterator = iterator
    }

    deinit {
        // "icalrecur_iterator_free: Frees the iterator": it owns a copy of the rule, nothing else of ours.
        icalrecur_iterator_free(iterator)
    }

    /// The next instance as wall time, or `nil` at the end of the rule.
    func next() -> LocalDateTime? {
        let time = icalrecur_iterator_next(iterator)
        if icaltime_is_null_time(time) != 0 { return nil }
        return LocalDateTime(
            Int(time.year), Int(time.month), Int(time.day), Int(time.hour), Int(time.minute), Int(time.second))
    }

    /// Whether libical reads `rule` as a valid recurrence.
    static func accepts(_ rule: String) -> Bool {
        _ = LibICal.ready
        let recurrence = icalrecurrencetype_from_string(rule)
        icalerror_clear_errno()
        return recurrence.freq != ICAL_NO_RECURRENCE
    }

    private static func icalTime(_ wall: LocalDateTime, isDate: Bool) -> icaltimetype {
        var time = icaltime_null_time()
        time.year = Int32(wall.date.year)
        time.month = Int32(wall.date.month)
        time.day = Int32(wall.date.day)
        time.hour = isDate ? 0 : Int32(wall.hour)
        time.minute = isDate ? 0 : Int32(wall.minute)
        time.second = isDate ? 0 : Int32(wall.second)
        time.is_date = isDate ? 1 : 0
        return time
    }
}
