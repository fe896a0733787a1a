import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRemote
@testable import CalWatchRuntime

/// The ways' history, the estimate while the engine does not answer: the median of the last answers at the same
/// hour of the week, else the nearest hour of the week answered; kept in a file a stranger may have written.
@Suite struct RouteHistoryTests {
    static let home = GeoPoint(latitude: 52.52, longitude: 13.40)!
    static let office = GeoPoint(latitude: 52.50, longitude: 13.37)!
    /// Monday 2027-03-01 08:00 UTC.
    static let monday = Instant(secondsSinceEpoch: 1_803_888_000)

    static func key(weeks: Int64 = 0, hours: Int64 = 0) -> RouteCache.Key {
        RouteCache.Key(
            origin: home, destination: office, mode: .driving,
            at: monday.adding(seconds: weeks * 7 * 86_400 + hours * 3600))
    }

    @Test func theMedianOfTheLastAnswersAtThatHourOfTheWeekElseTheNearestHour() {
        let cache = RouteCache()
        #expect(cache.usual(for: Self.key()) == nil)
        // Six Mondays at 08:00, one of them a jam: the last five kept, their median.
        for (week, seconds) in [3000, 600, 640, 2400, 620, 660].enumerated() {
            cache.store(Int64(seconds), for: Self.key(weeks: Int64(week)))
        }
        #expect(cache.usual(for: Self.key(weeks: 9))! == (seconds: 640, answers: 5))
        // Sunday night's way has no answers of its own: the nearest hour of the week answered, across the week's end.
        cache.store(300, for: Self.key(hours: -10))
        #expect(cache.usual(for: Self.key(weeks: 5, hours: -11))?.seconds == 300)
        #expect(cache.usual(for: Self.key(weeks: 5, hours: 2))?.seconds == 640)
        // Another mode is another way.
        var cycling = Self.key()
        cycling.mode = .cycling
        #expect(cache.usual(for: cycling) == nil)
    }

    @Test func theFileKeepsTheHistoryAndAStrangersFileGivesNone() async throws {
        let folder = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = RouteHistoryFile(journal: folder + "/journal.db")
        let cache = RouteCache()
        cache.store(600, for: Self.key())
        try await file.save(cache)
        #expect(file.load().usual(for: Self.key(weeks: 1))?.seconds == 600)
        for hostile in [
            "not json", #"[{"from":[999,0],"to":[0,0],"mode":"driving","hours":{"0":[600]}}]"#,
            #"[{"from":[52.52,13.4],"to":[52.5,13.37],"mode":"driving","hours":{"900":[600],"1":[-5,999999999]}}]"#,
        ] {
            try hostile.write(toFile: file.path, atomically: true, encoding: .utf8)
            let loaded = file.load()
            #expect((0..<168).allSatisfy { loaded.usual(for: Self.key(hours: Int64($0))) == nil }, "\(hostile)")
        }
    }

    @Test func anEstimateIsSaidWhereTheTimeToLeaveIsRead() throws {
        var leave = Leave(
            by: Self.monday, travelSeconds: 1500, source: .routing, mode: .cycling,
            destination: .init(name: "Office", at: Self.office))
        leave.confidence = .usual
        #expect(leave.explanation.contains("estimated: the way's usual time"))
        let (occurrence, _) = try LeaveTests.facts(LeaveTests.office, places: [])
        var facts = OccurrenceFacts.event
        facts.leave = leave
        let status = NextUp(
            [occurrence], facts: { _ in facts }, options: .init(), now: Self.monday.adding(seconds: -600), zone: .utc)
        #expect(
            NextUpFormat.line(status)?.hasSuffix("(25 min by bike, estimated)") == true,
            "\(String(describing: NextUpFormat.line(status)))")
        // The cards' and pushes' detail line, with the time to get ready.
        leave.prep = .init(seconds: 1800, source: .travel)
        facts.leave = leave
        var planner = PlannerConfiguration()
        planner.anchors[.event] = .leaveBy
        let plan = Planner.plan(
            [occurrence], facts: { _ in facts }, state: PlannerState(), configuration: planner,
            now: Self.monday.adding(seconds: -300))
        let reminder = try #require(plan.due.first { $0.type == .reminderDue })
        let entry = JournalStore.Entry(
            sequence: 1, event: reminder, occurrence: occurrence, facts: facts,
            recorded: Timestamp(millisecondsSinceEpoch: 0))
        #expect(
            ReminderText.details(entry).last == "get ready 07:30, leave by 08:00 (estimated)",
            "\(ReminderText.details(entry))")
    }
}
