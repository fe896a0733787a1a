import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The daemon's pipeline on real folders written the way vdirsyncer, khal and Radicale write, with real inotify
/// notices and real SQLite journals, on a manual clock: each step says at which instant it happens.
@Suite struct WatchTests {
    /// A calendar folder, its journal, a watcher on it and a daemon pipeline over it.
    final class Bench {
        let root: String
        let journalPath: String
        let sink = ReplayTests.CollectingSink()
        let watcher: DirectoryWatcher
        var watch: CalendarWatch!
        /// The running bus of `watch`, as `WatchService` runs it; `received` ends it.
        var bus: Task<Void, Never>?
        var configuration: Configuration
        var options = CalendarWatch.Options()
        /// Sinks beside the collecting one (a real SQLite file, …).
        var otherSinks: [any EventSink] = []
        /// Calendars of a fleet taken over from another watcher (`CalendarWatch`'s `handOver`).
        var handOver: PlannerState.HandOver?
        /// The flight-status service's answers, when `configuration.flights.status` names one.
        var statuses: FlightStatusCache?

        init(collections: [String] = ["work"]) throws {
            root = TestFolders.path("calwatch-watch")
            for collection in collections {
                try FileManager.default.createDirectory(
                    atPath: root + "/" + collection, withIntermediateDirectories: true)
            }
            journalPath = root + ".journal.db"
            configuration = Configuration(home: root)
            configuration.calendars = [root]
            configuration.timeZone = "UTC"
            configuration.passes = [root + ".passes"]
            watcher = try DirectoryWatcher {}
        }

        deinit {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: root + ".passes")
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: journalPath + suffix) }
        }

        /// Starts (or restarts, on the same journal) the pipeline at `now`.
        @discardableResult
        func start(at now: String) async throws -> CalendarWatch.Report {
            watch = try await CalendarWatch(
                configuration: configuration, zone: .utc, journal: JournalStore(path: journalPath),
                sinks: [sink] + otherSinks,
                now: utc(now), options: options, statuses: statuses, handOver: handOver,
                recordedTime: { Timestamp(utc(now)) },
                logger: LogRecorder().logger)
            bus = Task { [bus = watch.bus] in await bus.run() }
            let report = try await watch.start(at: utc(now))
            watcher.follow(watch.files.directories)
            return report
        }

        /// Waits (in real time: the kernel's) for inotify to tell of what was just done, then hands it over.
        @discardableResult
        func changes(at now: String, expecting paths: Set<String> = [], rescan: Bool = false) async throws
            -> CalendarWatch.Report
        {
            var notices = DirectoryWatcher.Notices()
            // Generous: other suites share the machine. Taken once more after the deadline, since this task may
            // not have run at all while it passed.
            let deadline = Date().addingTimeInterval(60)
            let wanted = Set(paths.map { root + "/" + $0 })
            while true {
                notices.merge(watcher.take())
                if wanted.isSubset(of: notices.files) && (!rescan || notices.rescan) && !notices.isEmpty { break }
                if Date() >= deadline { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(wanted.isSubset(of: notices.files), "inotify told of \(notices.files.sorted())")
            if rescan { #expect(notices.rescan) }
            let report = try await watch.filesChanged(notices, at: utc(now))
            if notices.rescan { watcher.follow(watch.files.directories) }
            return report
        }

        @discardableResult
        func advance(to now: String) async throws -> CalendarWatch.Report { try await watch.advance(to: utc(now)) }

        /// What the sink received: `type @time` lines, with the end reason or reminder offset. Finishes the bus
        /// (so everything committed has arrived): only `start` may follow, continuing on the same journal.
        func received() async -> [String] {
            _ = await watch.finish()
            await bus?.value
            return await sink.events.map(Self.describe)
        }

        static func describe(_ event: PlannedEvent) -> String {
            var text = "\(event.type.rawValue) \(event.time)"
            if let reminder = event.reminder {
                text += " \(reminder.secondsBefore / 60)m"
                if reminder.late { text += " late" }
                if reminder.snoozeCount > 0 { text += " snoozed \(reminder.snoozeCount)" }
            }
            if let reason = event.liveActivity?.endReason { text += " \(reason.rawValue)" }
            return text
        }

        // MARK: Writing the way producers write

        /// vdirsyncer and khal: a temporary `item.icsXXXXXXXX` beside the item, then renamed over it.
        func writeRenamed(_ path: String, _ text: String) throws {
            let temporary = root + "/" + path + String(UUID().uuidString.prefix(8))
            try text.write(toFile: temporary, atomically: false, encoding: .utf8)
            #expect(rename(temporary, root + "/" + path) == 0)
        }

        /// vdirsyncer's rename while another thread of its process forks: the child holds a copy of the temporary's
        /// descriptor until its exec, so the last close (inotify's `IN_CLOSE_WRITE`) comes after the rename.
        func writeRenamedClosingLate(_ path: String, _ text: String) throws {
            let temporary = root + "/" + path + String(UUID().uuidString.prefix(8))
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            #expect(descriptor >= 0)
            let bytes = Array(text.utf8)
            #expect(write(descriptor, bytes, bytes.count) == bytes.count)
            let copy = dup(descriptor)
            close(descriptor)
            #expect(rename(temporary, root + "/" + path) == 0)
            close(copy)
        }

        /// vdirsyncer creating an item it must not overwrite: hard link, then the temporary removed.
        func writeLinked(_ path: String, _ text: String) throws {
            let temporary = root + "/" + path + String(UUID().uuidString.prefix(8))
            try text.write(toFile: temporary, atomically: false, encoding: .utf8)
            #expect(link(temporary, root + "/" + path) == 0)
            #expect(unlink(temporary) == 0)
        }

        /// An editor writing in place.
        func writeInPlace(_ path: String, _ text: String) throws {
            try text.write(toFile: root + "/" + path, atomically: false, encoding: .utf8)
        }

        func delete(_ path: String) throws { try FileManager.default.removeItem(atPath: root + "/" + path) }
    }

    static func event(
        uid: String, start: String, end: String, summary: String = "Design review", status: String? = nil,
        location: String? = nil
    ) -> String {
        var lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch tests//EN", "BEGIN:VEVENT", "UID:\(uid)",
            "DTSTAMP:20270101T000000Z", "DTSTART:\(start)", "DTEND:\(end)", "SUMMARY:\(summary)",
        ]
        if let status { lines.append("STATUS:\(status)") }
        if let location { lines.append("LOCATION:\(location)") }
        lines += ["END:VEVENT", "END:VCALENDAR"]
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    @Test func anItemRenamedIntoPlaceGetsItsRemindersAndAMoveReplacesThem() async throws {
        let bench = try Bench()
        try await bench.start(at: "2027-03-01T08:00:00Z")
        try bench.writeRenamed(
            "work/review.ics", Self.event(uid: "r1", start: "20270301T100000Z", end: "20270301T110000Z"))
        let created = try await bench.changes(at: "2027-03-01T08:00:01Z", expecting: ["work/review.ics"])
        #expect(created.parsed == 1 && created.changed == 1 && created.total == 0)
        try await bench.advance(to: "2027-03-01T09:30:00Z")

        // Moved to 11:00 after its first reminder: new reminders, none of the old.
        try bench.writeRenamed(
            "work/review.ics", Self.event(uid: "r1", start: "20270301T110000Z", end: "20270301T120000Z"))
        try await bench.changes(at: "2027-03-01T09:31:00Z", expecting: ["work/review.ics"])
        for instant in ["09:45", "09:55", "10:30", "10:45", "10:55"] {
            try await bench.advance(to: "2027-03-01T\(instant):00Z")
        }
        let received = await bench.received().filter { !$0.hasPrefix("liveActivityUpdate") }
        #expect(
            received == [
                "reminderDue 2027-03-01T09:30:00Z 30m", "reminderDue 2027-03-01T10:30:00Z 30m",
                "liveActivityStart 2027-03-01T10:45:00Z", "reminderDue 2027-03-01T10:45:00Z 15m",
                "reminderDue 2027-03-01T10:55:00Z 5m",
            ])
    }

    @Test func deletedAndCancelledItemsEndTheirLiveActivities() async throws {
        let bench = try Bench()
        bench.configuration.planner.reminderOffsets = []
        try bench.writeLinked("work/a.ics", Self.event(uid: "a", start: "20270301T100000Z", end: "20270301T110000Z"))
        try bench.writeInPlace("work/b.ics", Self.event(uid: "b", start: "20270301T100000Z", end: "20270301T110000Z"))
        try await bench.start(at: "2027-03-01T09:50:00Z")
        try bench.delete("work/a.ics")
        try await bench.changes(at: "2027-03-01T10:05:00Z", expecting: ["work/a.ics"])
        try bench.writeInPlace(
            "work/b.ics",
            Self.event(uid: "b", start: "20270301T100000Z", end: "20270301T110000Z", status: "CANCELLED"))
        try await bench.changes(at: "2027-03-01T10:06:00Z", expecting: ["work/b.ics"])
        try await bench.advance(to: "2027-03-01T11:00:00Z")
        let received = await bench.received().filter { !$0.hasPrefix("liveActivityUpdate") }
        #expect(
            received == [
                "liveActivityStart 2027-03-01T09:45:00Z", "liveActivityStart 2027-03-01T09:45:00Z",
                "liveActivityEnd 2027-03-01T10:05:00Z removed", "liveActivityEnd 2027-03-01T10:06:00Z cancelled",
            ])
    }

    /// A one-off meeting moved while its live activity runs, then deleted: each end names the activity it ends (its
    /// subject and times are the start's), so a consumer keyed on subject and the SQLite view of running activities
    /// both see the old card end; the `removed` end still says what went away.
    @Test func aMovedSingleEventEndsTheActivityItStartedAndARemovalSaysWhatWentAway() async throws {
        let bench = try Bench()
        bench.configuration.planner.reminderOffsets = []
        let database = bench.root + ".events.db"
        defer { try? FileManager.default.removeItem(atPath: database) }
        bench.otherSinks = [try SQLiteSink(path: database)]
        try bench.writeRenamed(
            "work/r.ics",
            Self.event(
                uid: "r1", start: "20270301T100000Z", end: "20270301T110000Z", summary: "Design review",
                location: "Room 4"))
        try await bench.start(at: "2027-03-01T09:50:00Z")
        try bench.writeRenamed(
            "work/r.ics",
            Self.event(
                uid: "r1", start: "20270301T101000Z", end: "20270301T111000Z", summary: "Design review",
                location: "Room 4"))
        try await bench.changes(at: "2027-03-01T09:52:00Z", expecting: ["work/r.ics"])
        try await bench.advance(to: "2027-03-01T09:56:00Z")
        let moved = ["2027-03-01T10:10:00Z|r1/2027-03-01T10:10:00Z"]
        let query = "SELECT start, subject FROM current_live_activities"
        try await eventually("the moved activity is the only one running") {
            try SinkFixtures.rows(database, query) == moved
        }

        try bench.delete("work/r.ics")
        try await bench.changes(at: "2027-03-01T10:20:00Z", expecting: ["work/r.ics"])
        // A sink that lags behind reads the moved activity's start back from the journal after the deletion: it
        // still gets the occurrence's facts.
        let rows = try await JournalStore(path: bench.journalPath).events(after: 0, limit: 1000)
        let start = try #require(
            rows.last { $0.event.type == .liveActivityStart && $0.event.subject == "r1/2027-03-01T10:10:00Z" })
        let readBack = bench.watch.occurrences.entry(start)
        #expect(readBack.occurrence?.summary == "Design review" && readBack.occurrence?.location == "Room 4")
        _ = await bench.received()
        #expect(try SinkFixtures.rows(database, "SELECT subject FROM current_live_activities").isEmpty)
        let lifecycle = await bench.sink.lines.map { try! EventSchemaTests.JSON.parse($0) }.filter {
            $0["type"]?.string != "calwatch.liveActivityUpdate"
        }
        let described = lifecycle.map { event in
            [
                event["type"]?.string ?? "", event["subject"]?.string ?? "",
                event["data"]?["occurrence"]?["start"]?.string ?? "",
                event["data"]?["liveActivity"]?["reason"]?.string ?? "",
                event["data"]?["occurrence"]?["summary"]?.string ?? "",
                event["data"]?["occurrence"]?["location"]?.string ?? "",
            ]
        }
        #expect(
            described == [
                [
                    "calwatch.liveActivityStart", "r1/2027-03-01T10:00:00Z", "2027-03-01T10:00:00Z", "",
                    "Design review",
                    "Room 4",
                ],
                [
                    "calwatch.liveActivityEnd", "r1/2027-03-01T10:00:00Z", "2027-03-01T10:00:00Z", "rescheduled",
                    "Design review", "Room 4",
                ],
                [
                    "calwatch.liveActivityStart", "r1/2027-03-01T10:10:00Z", "2027-03-01T10:10:00Z", "",
                    "Design review",
                    "Room 4",
                ],
                [
                    "calwatch.liveActivityEnd", "r1/2027-03-01T10:10:00Z", "2027-03-01T10:10:00Z", "removed",
                    "Design review", "Room 4",
                ],
            ])
    }

    @Test func aFlightWhoseTimeChangesIsDetectedAgain() async throws {
        let bench = try Bench(collections: ["travel"])
        try bench.writeRenamed(
            "travel/flight.ics",
            Self.event(uid: "f", start: "20270310T080000Z", end: "20270310T100000Z", summary: "Flight BA 987 BER → LHR")
        )
        let first = try await bench.start(at: "2027-03-01T08:00:00Z")
        #expect(first.events[.flightDetected] == 1)
        try bench.writeRenamed(
            "travel/flight.ics",
            Self.event(uid: "f", start: "20270310T090000Z", end: "20270310T110000Z", summary: "Flight BA 987 BER → LHR")
        )
        let moved = try await bench.changes(at: "2027-03-02T08:00:00Z", expecting: ["travel/flight.ics"])
        #expect(moved.events[.flightDetected] == 1)
        // The same content written again is not parsed, and detects nothing.
        try bench.writeRenamed(
            "travel/flight.ics",
            Self.event(uid: "f", start: "20270310T090000Z", end: "20270310T110000Z", summary: "Flight BA 987 BER → LHR")
        )
        let same = try await bench.changes(at: "2027-03-02T08:01:00Z", expecting: ["travel/flight.ics"])
        #expect(same.parsed == 0 && same.total == 0)
    }

    @Test func aHalfWrittenFileIsNotUsedUntilItSettlesOrCompletes() async throws {
        let bench = try Bench()
        try await bench.start(at: "2027-03-01T08:00:00Z")
        let whole = Self.event(uid: "h", start: "20270301T090000Z", end: "20270301T100000Z")
        // Half of it, written in place: the writer has not closed it yet.
        try bench.writeInPlace("work/half.ics", String(whole.prefix(whole.count / 2)))
        let half = try await bench.changes(at: "2027-03-01T08:00:01Z", expecting: ["work/half.ics"])
        #expect(half.unsettled == [bench.root + "/work/half.ics"] && half.changed == 0 && half.problems.isEmpty)
        try bench.writeInPlace("work/half.ics", whole)
        let complete = try await bench.changes(at: "2027-03-01T08:00:02Z", expecting: ["work/half.ics"])
        #expect(complete.changed == 1 && complete.unsettled.isEmpty && complete.problems.isEmpty)
        try await bench.advance(to: "2027-03-01T08:30:00Z")
        #expect(await bench.received() == ["reminderDue 2027-03-01T08:30:00Z 30m"])
    }

    @Test func garbageKeepsTheLastGoodVersionReportedOnceUntilRepaired() async throws {
        let bench = try Bench()
        try bench.writeRenamed("work/g.ics", Self.event(uid: "g", start: "20270301T100000Z", end: "20270301T110000Z"))
        try await bench.start(at: "2027-03-01T08:00:00Z")
        try bench.writeRenamed("work/g.ics", "\u{0}\u{1}PK garbage from a broken sync\n")
        let first = try await bench.changes(at: "2027-03-01T08:01:00Z", expecting: ["work/g.ics"])
        #expect(first.unsettled.count == 1 && first.problems.isEmpty)
        // Still garbage after it settled: reported once, and the last good version stays in effect.
        let settled = try await bench.watch.filesChanged(
            .init(files: Set(first.unsettled)), at: utc("2027-03-01T08:01:02Z"))
        #expect(settled.problems.count == 1)
        #expect(settled.problems.first?.description.contains("the version read before stays in effect") == true)
        let rescan = try await bench.watch.filesChanged(.init(rescan: true), at: utc("2027-03-01T08:10:00Z"))
        #expect(rescan.problems.isEmpty && rescan.parsed == 0)
        try await bench.advance(to: "2027-03-01T09:30:00Z")
        // Repaired, an hour later.
        try bench.writeRenamed("work/g.ics", Self.event(uid: "g", start: "20270301T110000Z", end: "20270301T120000Z"))
        let repaired = try await bench.changes(at: "2027-03-01T09:31:00Z", expecting: ["work/g.ics"])
        #expect(repaired.changed == 1 && repaired.problems.isEmpty)
        try await bench.advance(to: "2027-03-01T10:30:00Z")
        #expect(
            await bench.received() == ["reminderDue 2027-03-01T09:30:00Z 30m", "reminderDue 2027-03-01T10:30:00Z 30m"])
    }

    @Test func aHostileCalDAVExportBesideTheFolderIsReportedAndTheWatchGoesOn() async throws {
        let bench = try Bench()
        let export = bench.root + ".export.xml"
        try CommandLineTests.hrefHoldingAResponse.write(toFile: export, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: export) }
        bench.configuration.calendars = [bench.root, export]
        try bench.writeRenamed("work/a.ics", Self.event(uid: "a", start: "20270301T100000Z", end: "20270301T110000Z"))
        let start = try await bench.start(at: "2027-03-01T08:00:00Z")
        // Perhaps half-written: given its time to settle, then reported once.
        #expect(start.unsettled == [export])
        let settled = try await bench.watch.filesChanged(.init(files: [export]), at: utc("2027-03-01T08:00:02Z"))
        #expect(
            settled.problems.map(\.description).contains {
                $0.hasPrefix("\(export): error: the multistatus document holds no calendar-data")
            })
        _ = try await bench.advance(to: "2027-03-01T09:30:00Z")
        #expect(await bench.received() == ["reminderDue 2027-03-01T09:30:00Z 30m"])
    }

    @Test func aNewRadicaleCollectionIsFollowedAndHiddenFoldersAreNot() async throws {
        let bench = try Bench()
        try await bench.start(at: "2027-03-01T08:00:00Z")
        // Radicale uploads a collection into a hidden temporary folder, then renames it into place.
        let temporary = bench.root + "/.Radicale.tmp-3fa9"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        try #"{"D:displayname": "Family", "tag": "VCALENDAR"}"#.write(
            toFile: temporary + "/.Radicale.props", atomically: false, encoding: .utf8)
        try Self.event(uid: "fam", start: "20270301T100000Z", end: "20270301T110000Z").write(
            toFile: temporary + "/fam", atomically: false, encoding: .utf8)
        #expect(rename(temporary, bench.root + "/family") == 0)
        // Hidden folders hold no items, whatever their files are called.
        try FileManager.default.createDirectory(
            atPath: bench.root + "/family/.Radicale.cache/item", withIntermediateDirectories: true)
        try Self.event(uid: "cache", start: "20270301T100000Z", end: "20270301T110000Z").write(
            toFile: bench.root + "/family/.Radicale.cache/item/cached.ics", atomically: false, encoding: .utf8)
        let found = try await bench.changes(at: "2027-03-01T08:00:01Z", rescan: true)
        #expect(found.changed == 1)
        #expect(bench.watch.files.directories.contains(bench.root + "/family"))
        #expect(!bench.watch.files.directories.contains { $0.contains("/.") })
        // The new folder is watched: an item added there is seen.
        try Self.event(uid: "fam2", start: "20270301T120000Z", end: "20270301T130000Z").write(
            toFile: bench.root + "/family/.Radicale.tmp-item", atomically: false, encoding: .utf8)
        #expect(rename(bench.root + "/family/.Radicale.tmp-item", bench.root + "/family/fam2") == 0)
        let added = try await bench.changes(at: "2027-03-01T08:00:02Z", expecting: ["family/fam2"])
        #expect(added.changed == 1)
        try await bench.advance(to: "2027-03-01T09:30:00Z")
        try await bench.advance(to: "2027-03-01T11:30:00Z")
        _ = await bench.received()
        let reminders = await bench.sink.events.filter { $0.type == .reminderDue }
        #expect(reminders.map(\.key.calendar) == ["Family", "Family"])
        #expect(reminders.map(\.key.uid) == ["fam", "fam2"])
    }

    @Test func onlyTheChangedFileIsParsed() async throws {
        let bench = try Bench()
        for index in 0..<50 {
            try bench.writeInPlace(
                "work/item\(index).ics",
                Self.event(uid: "i\(index)", start: "20270302T100000Z", end: "20270302T110000Z"))
        }
        let started = try await bench.start(at: "2027-03-01T08:00:00Z")
        #expect(started.parsed == 50)
        try bench.writeRenamed(
            "work/item7.ics", Self.event(uid: "i7", start: "20270302T120000Z", end: "20270302T130000Z"))
        let changed = try await bench.changes(at: "2027-03-01T08:00:01Z", expecting: ["work/item7.ics"])
        #expect(changed.parsed == 1 && changed.changed == 1)
        // A touched file (new mtime, same content) is read but not parsed; a rescan parses nothing.
        #expect(utime(bench.root + "/work/item3.ics", nil) == 0)
        let rescan = try await bench.watch.filesChanged(.init(rescan: true), at: utc("2027-03-01T08:10:00Z"))
        #expect(rescan.parsed == 0 && rescan.changed == 0)
    }

    @Test func aRestartAfterMissedRemindersSendsTheLatestOnceMarkedLate() async throws {
        let bench = try Bench()
        try bench.writeRenamed("work/m.ics", Self.event(uid: "m", start: "20270301T100000Z", end: "20270301T110000Z"))
        try await bench.start(at: "2027-03-01T09:00:00Z")
        _ = await bench.received()
        // Down (or suspended) from 09:10 to 09:57: the 30- and 15-minute reminders were missed.
        try await bench.start(at: "2027-03-01T09:57:00Z")
        try await bench.advance(to: "2027-03-01T10:00:00Z")
        #expect(
            await bench.received() == [
                "liveActivityStart 2027-03-01T09:45:00Z", "reminderDue 2027-03-01T09:55:00Z 5m late",
                "liveActivityUpdate 2027-03-01T09:57:00Z", "liveActivityUpdate 2027-03-01T10:00:00Z",
            ])
        // Started again at the same instant: nothing twice.
        try await bench.start(at: "2027-03-01T10:00:00Z")
        #expect(await bench.received().count == 4)
    }

    @Test func theWindowRollsForwardAsDaysPass() async throws {
        let bench = try Bench()
        bench.configuration.planner.horizon = 86_400
        // Every day at 10:00, for a year.
        try bench.writeRenamed(
            "work/daily.ics",
            Self.event(uid: "d", start: "20270301T100000Z", end: "20270301T103000Z").replacingOccurrences(
                of: "SUMMARY:", with: "RRULE:FREQ=DAILY;COUNT=365\r\nSUMMARY:"))
        try await bench.start(at: "2027-03-01T00:00:00Z")
        var now = utc("2027-03-01T00:00:00Z")
        let end = utc("2027-03-20T00:00:00Z")
        while let wake = bench.watch.nextWake, wake < end {
            now = wake
            _ = try await bench.watch.advance(to: now)
        }
        let reminders = await bench.received().filter { $0.hasPrefix("reminderDue") && $0.hasSuffix(" 5m") }
        #expect(reminders.count == 19)
        #expect(reminders.last == "reminderDue 2027-03-19T09:55:00Z 5m")
    }

    /// Between reads an item is held in short (its one event, without the calendar around it), and built again
    /// when the window rolls: what it gives then has the calendar name, zone and time a fresh read gives.
    @Test func itemsHeldSinceTheirReadKeepTheirCalendarNameAndZoneWhenTheWindowRolls() async throws {
        let bench = try Bench(collections: ["work", "family"])
        bench.configuration.planner.horizon = 86_400
        try #"{"D:displayname": "Family", "tag": "VCALENDAR"}"#.write(
            toFile: bench.root + "/family/.Radicale.props", atomically: false, encoding: .utf8)
        // On 4 March, beyond the first window: only the roll expands them.
        try bench.writeRenamed(
            "family/plain.ics", Self.event(uid: "plain", start: "20270304T100000Z", end: "20270304T103000Z"))
        let berlin = [
            "BEGIN:VTIMEZONE", "TZID:Office (Berlin)", "BEGIN:STANDARD", "DTSTART:19701025T030000",
            "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU", "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100", "END:STANDARD",
            "BEGIN:DAYLIGHT", "DTSTART:19700329T020000", "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
            "TZOFFSETFROM:+0100", "TZOFFSETTO:+0200", "END:DAYLIGHT", "END:VTIMEZONE",
        ].joined(separator: "\r\n")
        try bench.writeRenamed(
            "work/zoned.ics",
            Self.event(uid: "zoned", start: "20270304T100000", end: "20270304T103000")
                .replacingOccurrences(of: "DTSTART:", with: "DTSTART;TZID=Office (Berlin):")
                .replacingOccurrences(of: "DTEND:", with: "DTEND;TZID=Office (Berlin):")
                .replacingOccurrences(of: "BEGIN:VEVENT", with: berlin + "\r\nBEGIN:VEVENT"))
        try bench.writeRenamed(
            "work/named.ics",
            Self.event(uid: "named", start: "20270304T110000Z", end: "20270304T113000Z").replacingOccurrences(
                of: "VERSION:2.0", with: "VERSION:2.0\r\nX-WR-CALNAME:Named"))
        try await bench.start(at: "2027-03-01T00:00:00Z")
        while let wake = bench.watch.nextWake, wake < utc("2027-03-05T00:00:00Z") {
            _ = try await bench.watch.advance(to: wake)
        }
        _ = await bench.received()
        let reminders = await bench.sink.events.filter { $0.type == .reminderDue && $0.reminder?.secondsBefore == 300 }
        #expect(
            reminders.map { "\($0.key.uid) \($0.key.calendar) \($0.time)" } == [
                "zoned work 2027-03-04T08:55:00Z", "plain Family 2027-03-04T09:55:00Z",
                "named Named 2027-03-04T10:55:00Z",
            ])
    }
}
