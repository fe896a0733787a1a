import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// VALARM triggers (`scan --alarms`).
@Suite struct AlarmTests {
    func triggers(from: String, to: String) -> [String] {
        let result = scan([fixture("apple-all-day.ics")], from: from, to: to, lookAround: AlarmExpander.reach)
        let berlin = TimeZoneDatabase.rules(named: "Europe/Berlin")!
        let window = InstantWindow(
            start: try! TimeArgument.parse(from, zone: berlin, now: utc("2025-01-01T00:00:00Z")),
            end: try! TimeArgument.parse(to, zone: berlin, now: utc("2025-01-01T00:00:00Z")))
        return AlarmExpander.triggers(of: result.occurrences, in: window).map {
            "\($0.occurrence.summary ?? "") \($0.alarm.action) \($0.trigger) #\($0.repetition)"
        }
    }

    @Test func relativeAbsoluteRepeatingAndAllDayTriggers() {
        #expect(
            triggers(from: "2025-03-14", to: "2025-03-19") == [
                // All-day on 15 March in Berlin starts 23:00Z the day before: -PT15M is 22:45Z, PT9H is 09:00 local.
                "Mum's birthday DISPLAY 2025-03-14T22:45:00Z #0",
                "Mum's birthday DISPLAY 2025-03-15T08:00:00Z #0",
                // Absolute trigger, once.
                "Dentist DISPLAY 2025-03-17T18:00:00Z #0",
                // RELATED=END PT10M after 09:00 local, then REPEAT 2 every 5 minutes.
                "Dentist AUDIO 2025-03-18T08:10:00Z #0",
                "Dentist AUDIO 2025-03-18T08:15:00Z #1",
                "Dentist AUDIO 2025-03-18T08:20:00Z #2",
            ])
    }

    @Test func triggerBeforeTheWindowsOccurrenceIsFoundFromTheOccurrenceAfterIt() {
        // The birthday on 15 March starts after this window, but its -PT15M trigger falls inside it.
        #expect(triggers(from: "2025-03-14", to: "2025-03-15") == ["Mum's birthday DISPLAY 2025-03-14T22:45:00Z #0"])
    }
}
