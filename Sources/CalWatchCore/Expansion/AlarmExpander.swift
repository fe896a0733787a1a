/// One firing of a VALARM: when, for which occurrence, and what the calendar asks for.
public struct AlarmTrigger: Sendable {
    public var occurrence: Occurrence
    public var alarm: Alarm
    /// The alarm's position among its component's VALARMs.
    public var alarmIndex: Int
    public var trigger: Instant
    /// 0 for the first firing, then 1...REPEAT.
    public var repetition: Int
}

/// Turns the VALARMs of occurrences into trigger instants (`calwatch scan --alarms`).
///
/// Relative triggers are added to the start (a to-do's DTSTART) or the end (`RELATED=END`; a to-do's DUE) in the
/// occurrence's zone: an all-day
/// occurrence starts at midnight in the configured zone, so `-PT15M` fires at 23:45 the day before, and `-P1D`
/// is a wall-clock day. REPEAT/DURATION add further firings.
public enum AlarmExpander {
    /// How far a trigger may lie from its occurrence and still be found: the scan widens its window by this.
    public static let reach: Int64 = 366 * 86_400

    /// The triggers of these occurrences that fall inside `window`, sorted by instant.
    ///
    /// An absolute trigger fires once, not once per instance of a series: it is kept with the first instance.
    public static func triggers(of occurrences: [Occurrence], in window: InstantWindow) -> [AlarmTrigger] {
        var result: [AlarmTrigger] = []
        var absoluteSeen = Set<String>()
        for occurrence in occurrences {
            for trigger in triggers(of: occurrence) where window.contains(trigger.trigger) {
                if case .absolute(let value) = trigger.alarm.trigger {
                    let key = "\(occurrence.calendar)\u{0}\(occurrence.uid)\u{0}\(value)\u{0}\(trigger.repetition)"
                    guard absoluteSeen.insert(key).inserted else { continue }
                }
                result.append(trigger)
            }
        }
        return result.sorted {
            ($0.trigger, $0.occurrence.start, $0.occurrence.uid, $0.repetition)
                < ($1.trigger, $1.occurrence.start, $1.occurrence.uid, $1.repetition)
        }
    }

    /// Every firing of one occurrence's alarms, in alarm order.
    public static func triggers(of occurrence: Occurrence) -> [AlarmTrigger] {
        var result: [AlarmTrigger] = []
        for (index, alarm) in occurrence.alarms.enumerated() {
            let first: Instant
            switch alarm.trigger {
            case .absolute(let value):
                first = Instant(secondsSinceEpoch: value.wallClock.secondsAsUTC)
            case .relative(let offset, let toEnd):
                first = shift(toEnd ? occurrence.end : start(of: occurrence), by: offset, in: occurrence.displayZone)
            }
            var instant = first
            for repetition in 0...alarm.repeatCount {
                if repetition > 0, let interval = alarm.repeatInterval {
                    instant = shift(instant, by: interval, in: occurrence.displayZone)
                }
                result.append(
                    AlarmTrigger(
                        occurrence: occurrence, alarm: alarm, alarmIndex: index, trigger: instant,
                        repetition: repetition))
            }
        }
        return result
    }

    /// What `RELATED=START` counts from: the start, and for a to-do (an occurrence at its DUE) its DTSTART, as far
    /// before this instance's DUE as the to-do's DTSTART is before its DUE (RFC 5545 §3.8.6.3). A to-do without a
    /// DTSTART counts from its DUE.
    static func start(of occurrence: Occurrence) -> Instant {
        let component = occurrence.source.component
        guard occurrence.componentKind == .todo, let start = component.start, let due = component.due else {
            return occurrence.start
        }
        return occurrence.start.adding(seconds: -(due.wallClock.secondsAsUTC - start.wallClock.secondsAsUTC))
    }

    /// Adds a duration: nominal days on the wall clock of `zone`, then exact seconds.
    static func shift(_ instant: Instant, by duration: ICalDuration, in zone: ZoneRules) -> Instant {
        var result = instant
        if duration.nominalDays != 0 {
            result = zone.instant(for: zone.wallClock(at: instant).adding(days: duration.nominalDays))
        }
        return result.adding(seconds: duration.exactSeconds)
    }
}
