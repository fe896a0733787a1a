import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// Recurrence rules, overrides and exceptions, each on a fixture written the way a real producer writes it.
@Suite(.ownThread) struct RecurrenceTests {
    @Test func googleSeriesWithOverrideExdateCancellationAndUntilInUTC() {
        let result = scan([fixture("google-recurring.ics")], from: "2025-03-01", to: "2025-05-01")
        let uid = "7kukuqrfedlm2f9t4oa4kr5j6c@google.com"
        // MO,WE from 24 March until 13 April 21:59:59Z; 2 April excluded; 26 March moved to 14:00.
        #expect(
            starts(result, uid: uid) == [
                "2025-03-24T08:30:00Z", "2025-03-26T13:00:00Z", "2025-03-31T07:30:00Z", "2025-04-07T07:30:00Z",
                "2025-04-09T07:30:00Z",
            ])
        let moved = result.occurrences.first { $0.uid == uid && $0.start == utc("2025-03-26T13:00:00Z") }!
        #expect(moved.summary == "Standup (afternoon this week)")
        #expect(moved.recurrenceID?.description == "2025-03-26T08:30:00Z")
        #expect(moved.end == utc("2025-03-26T13:15:00Z"))
        let cancelled = result.occurrences.first { $0.uid == uid && $0.start == utc("2025-04-07T07:30:00Z") }!
        #expect(cancelled.status == .cancelled)
        #expect(result.occurrences.allSatisfy { $0.calendar == "Team" })
        #expect(result.problems.isEmpty)
    }

    @Test func overrideMovedIntoTheWindowFromOutsideIsFound() {
        // The 26 March instance is moved to 14:00; a window holding only the new time still finds it.
        let result = scan([fixture("google-recurring.ics")], from: "2025-03-26T13:30", to: "2025-03-26T14:10")
        #expect(triples(result) == ["7kukuqrfedlm2f9t4oa4kr5j6c@google.com 2025-03-26T13:00:00Z 2025-03-26T13:15:00Z"])
    }

    @Test func thisAndFutureShiftsEveryLaterInstanceInWallTime() {
        let result = scan([fixture("thunderbird-this-and-future.ics")], from: "2025-03-01", to: "2025-05-01")
        #expect(
            triples(result) == [
                "4a5b6c7d-thunderbird-series 2025-03-06T18:00:00Z 2025-03-06T19:00:00Z",
                "4a5b6c7d-thunderbird-series 2025-03-13T18:00:00Z 2025-03-13T19:00:00Z",
                "4a5b6c7d-thunderbird-series 2025-03-20T17:30:00Z 2025-03-20T19:00:00Z",
                "4a5b6c7d-thunderbird-series 2025-03-27T17:30:00Z 2025-03-27T19:00:00Z",
                // After the change to summer time the series stays at 18:30 Paris time.
                "4a5b6c7d-thunderbird-series 2025-04-03T16:30:00Z 2025-04-03T18:00:00Z",
                "4a5b6c7d-thunderbird-series 2025-04-10T16:30:00Z 2025-04-10T18:00:00Z",
            ])
        #expect(result.occurrences.last?.summary == "Book club (new time)")
    }

    @Test func rdateWithTZIDAndPeriodExdateAsDateAndDeduplication() {
        let result = scan([fixture("fastmail-rdate-exdate.ics")], from: "2025-03-01", to: "2025-04-01")
        #expect(
            triples(result, uid: "a6f2b0d4-4c1e-4b5a-9d6e-rdate-tzid") == [
                "a6f2b0d4-4c1e-4b5a-9d6e-rdate-tzid 2025-03-04T22:00:00Z 2025-03-04T22:45:00Z",
                "a6f2b0d4-4c1e-4b5a-9d6e-rdate-tzid 2025-03-08T10:00:00Z 2025-03-08T10:45:00Z",  // London RDATE
                "a6f2b0d4-4c1e-4b5a-9d6e-rdate-tzid 2025-03-11T21:00:00Z 2025-03-11T21:45:00Z",  // RRULE = RDATE, once
                "a6f2b0d4-4c1e-4b5a-9d6e-rdate-tzid 2025-03-15T14:00:00Z 2025-03-15T16:00:00Z",  // PERIOD start/end
                "a6f2b0d4-4c1e-4b5a-9d6e-rdate-tzid 2025-03-22T14:00:00Z 2025-03-22T14:30:00Z",  // PERIOD start/PT30M
                // 18 March removed by EXDATE;VALUE=DATE.
                "a6f2b0d4-4c1e-4b5a-9d6e-rdate-tzid 2025-03-25T21:00:00Z 2025-03-25T21:45:00Z",
            ])
        #expect(
            starts(result, uid: "b7e3c1e5-5d2f-4c6b-8e7f-date-on-datetime") == [
                "2025-03-03T06:00:00Z", "2025-03-05T06:00:00Z", "2025-03-07T06:00:00Z",
            ])
    }

    @Test func exruleRemovesItsInstances() {
        let result = scan([fixture("fastmail-rdate-exdate.ics")], from: "2025-03-01", to: "2025-04-01")
        // Ten weekdays from Monday 3 March, less the Fridays 7 and 14 March.
        #expect(
            starts(result, uid: "exrule-from-an-old-exporter") == [
                "2025-03-03T11:00:00Z", "2025-03-04T11:00:00Z", "2025-03-05T11:00:00Z", "2025-03-06T11:00:00Z",
                "2025-03-10T11:00:00Z", "2025-03-11T11:00:00Z", "2025-03-12T11:00:00Z", "2025-03-13T11:00:00Z",
            ])
    }

    @Test func untilAsDateOnADateTimeSeriesCoversItsWholeDay() {
        let result = scan([fixture("until-and-count.ics")], from: "2025-01-01", to: "2025-02-01")
        #expect(
            starts(result, uid: "until-date-on-datetime") == [
                "2025-01-06T08:00:00Z", "2025-01-07T08:00:00Z", "2025-01-08T08:00:00Z",
            ])
    }

    @Test func untilInUTCIsComparedAsAnInstantAgainstAZonedStart() {
        let result = scan([fixture("until-and-count.ics")], from: "2025-01-01", to: "2025-02-01")
        // UNTIL 01:00Z on 8 January is 20:00 New York on the 7th: that instance is the last.
        #expect(starts(result, uid: "until-utc-against-new-york") == ["2025-01-07T01:00:00Z", "2025-01-08T01:00:00Z"])
    }

    @Test func dtstartCountsAsTheFirstInstanceEvenWhenTheRuleSkipsIt() {
        let result = scan([fixture("until-and-count.ics")], from: "2025-01-01", to: "2025-02-01")
        #expect(
            starts(result, uid: "count-with-unsynchronised-start") == ["2025-01-01T09:00:00Z", "2025-01-06T09:00:00Z"])
    }

    @Test func monthlyOnThe31stSkipsShortMonths() {
        let result = scan([fixture("until-and-count.ics")], from: "2025-01-01", to: "2026-01-01")
        #expect(
            result.occurrences.filter { $0.uid == "monthly-31st" }.map { $0.recurrenceID!.description } == [
                "2025-01-31", "2025-03-31", "2025-05-31",
            ])
    }

    @Test func newestCopyOfADuplicatedComponentWins() {
        let result = scan([fixture("duplicates.ics")], from: "2025-03-01", to: "2025-04-01")
        #expect(starts(result, uid: "dup-series") == ["2025-03-03T12:00:00Z", "2025-03-04T12:00:00Z"])
        #expect(result.occurrences.allSatisfy { $0.summary == "New time" })
    }

    @Test func brokenRulesAreRepairedOrReportedNeverSilentlyDropped() {
        let result = scan([fixture("broken-rrules.ics")], from: "2025-03-01", to: "2025-04-01")
        #expect(
            starts(result, uid: "repairable-trailing-comma") == [
                "2025-03-03T17:00:00Z", "2025-03-10T17:00:00Z", "2025-03-17T17:00:00Z",
            ])
        #expect(starts(result, uid: "repairable-interval-zero").count == 2)
        #expect(starts(result, uid: "unrepairable-no-freq") == ["2025-03-04T10:00:00Z"])
        let messages = result.problems.map(\.description)
        #expect(messages.contains { $0.contains("broken-rrules.ics:4: warning") && $0.contains("BYDAY=MO;COUNT=3") })
        #expect(messages.contains { $0.contains("unrepairable-no-freq") && $0.contains("no FREQ") })
        #expect(messages.contains { $0.contains(":27: error") && $0.contains("no usable DTSTART") })
    }

    @Test func repairKeepsOnlyUnambiguousFixes() {
        let accepts = { (rule: String) in RecurrenceIterator.accepts(rule) }
        #expect(
            RecurrenceRuleRepair.repair("freq=weekly; byday=mo,we,;", accepts: accepts)
                == .repaired(
                    "FREQ=WEEKLY;BYDAY=MO,WE",
                    changes: ["upper-cased", "removed stray commas in BYDAY", "dropped an empty part"]))
        #expect(
            RecurrenceRuleRepair.repair("FREQ=DAILY;UNTIL=2025-01-31", accepts: accepts)
                == .repaired("FREQ=DAILY;UNTIL=20250131", changes: ["UNTIL written without ISO 8601 punctuation"]))
        guard case .unrepairable = RecurrenceRuleRepair.repair("FREQ=DAILY;COUNT=2;COUNT=3", accepts: accepts) else {
            Issue.record("conflicting COUNTs must not be guessed")
            return
        }
    }

    @Test func pathologicalRulesAreBoundedByTheWindowAndCapped() {
        let result = scan([fixture("pathological.ics")], from: "2025-03-01T00:00Z", to: "2025-03-01T00:10Z")
        #expect(result.occurrences.filter { $0.uid == "every-second-forever" }.count == 600)
        let long = scan([fixture("pathological.ics")], from: "2025-01-01", to: "2025-01-03")
        #expect(long.occurrences.filter { $0.uid == "every-second-forever" }.count == 100_000)
        #expect(long.problems.contains { $0.message.contains("only the first 100000 are shown") })
        #expect(starts(long, uid: "daily-forever") == ["2025-01-01T07:00:00Z", "2025-01-02T07:00:00Z"])
    }
}
