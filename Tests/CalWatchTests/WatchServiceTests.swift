import Foundation
import Synchronization
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The daemon's loop on a manual clock, with real inotify and a real journal: what wakes it and when.
@Suite struct WatchServiceTests {
    /// A folder, a service over it on a manual clock and a fixed wall clock, and what its sink received.
    final class Bench {
        let bench: WatchTests.Bench
        let clock = ManualClock()
        /// The wall clock, fixed: planning happens at 09:50 whatever the manual clock says.
        let wall = Timestamp(utc("2027-03-01T09:50:00Z"))
        let service: WatchService<ManualClock>
        /// The service's log, shown when a step fails.
        let log = LogRecorder()

        /// `reloaded`: what the configuration file gives on a reload (the bench's own configuration by default).
        init(
            debounce: Duration = .milliseconds(100),
            reloaded: (@Sendable (Configuration) -> Configuration)? = nil,
            configure: (inout Configuration) -> Void = { _ in }
        ) throws {
            let bench = try WatchTests.Bench()
            bench.configuration.file = bench.root + "/config.yml"
            configure(&bench.configuration)
            self.bench = bench
            var options = WatchService<ManualClock>.Options()
            options.debounce = debounce
            options.reloadsOnHangup = false
            let configuration = bench.configuration
            let journalPath = bench.journalPath
            let sink = bench.sink
            let wall = wall
            let loads = Mutex(0)
            let setup = WatchService<ManualClock>.Setup(
                load: {
                    let first = loads.withLock { count in
                        defer { count += 1 }
                        return count == 0
                    }
                    return first ? configuration : reloaded?(configuration) ?? configuration
                },
                open: { configuration, now in
                    try await CalendarWatch(
                        configuration: configuration, zone: .utc, journal: JournalStore(path: journalPath),
                        sinks: [sink], now: now, recordedTime: { wall }, logger: LogRecorder().logger)
                })
            service = WatchService(
                setup: setup, options: options, clock: clock, wallClock: { wall },
                logger: log.logger, systemZone: { nil })
        }

        /// The events received about `uid`, as `WatchTests.Bench.describe` words them, without the updates.
        func received(_ uid: String) async -> [String] {
            await bench.sink.events.filter { $0.key.uid == uid && $0.type != .liveActivityUpdate }
                .map(WatchTests.Bench.describe)
        }

        /// Runs the service while `body` acts, then stops it.
        func running(_ body: () async throws -> Void) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { [service] in try await service.run() }
                // Started and asleep: its first wait is a chunk of a minute.
                try await clock.waitForSleeper(.seconds(60))
                do { try await body() } catch {
                    // What the service was doing: its log, its sleep, and how its task ended (an error it threw is
                    // not logged).
                    let sleeps = clock.sleeps
                    group.cancelAll()
                    var ended = "still running when cancelled"
                    do { try await group.next() } catch let thrown { ended = "threw \(thrown)" }
                    Issue.record(
                        "the service logged: \(log.messages), \(log.metadata); its task: \(ended); sleeps from now: \(sleeps)"
                    )
                    throw error
                }
                group.cancelAll()
                try await group.waitForAll()
            }
        }
    }

    /// `calwatch pass add` while the daemon runs: the pass renamed into the passes folder is read at once, without
    /// the clock moving, and the flight it is for is detected again with its seat; removed, nothing repeats.
    @Test func aBoardingPassAddedWhileWatchingJoinsItsFlightAtOnce() async throws {
        let service = try Bench()
        func detected() async -> [String] {
            await service.bench.sink.lines.filter {
                $0.contains("calwatch.flightDetected") && $0.contains(#""subject":"f/"#)
            }
        }
        try await service.running {
            // AC 834 leaves Montreal at 18:30 on 1 March 2027, day 60 of the year there.
            try service.bench.writeRenamed(
                "work/f.ics",
                WatchTests.event(
                    uid: "f", start: "20270301T233000Z", end: "20270302T063000Z", summary: "Flight AC 834 YUL → FRA"))
            try await eventually("the flight detected") { await detected().count == 1 }
            #expect(await !detected()[0].contains(#""pass":"#))
            let folder = service.bench.configuration.passes[0]
            let pass = folder + "/AB12C3-AC834-60.bcbp"
            try "M1DESMARAIS/LUC       EAB12C3 YULFRAAC 0834 060J003A0027 100\n".write(
                toFile: folder + "/.partial", atomically: false, encoding: .utf8)
            #expect(rename(folder + "/.partial", pass) == 0)
            try await eventually("the flight detected again, with the pass") { await detected().count == 2 }
            let again = await detected()[1]
            #expect(
                again.contains(
                    #""seat":"3A","bookingReference":"AB12C3","tier":1,"pass":{"seat":"3A","compartment":"J""#),
                "\(again)")
            // Removed: the detection without it was sent already, and is not sent twice. (A file read after the
            // removal marks that the service has seen it.)
            #expect(unlink(pass) == 0)
            try service.bench.writeRenamed(
                "work/g.ics", WatchTests.event(uid: "g", start: "20270301T100000Z", end: "20270301T103000Z"))
            try await eventually("the file after the removal") { await service.received("g").count == 2 }
            #expect(await detected().count == 2)
        }
        #expect(service.clock.now.offset == .zero)
    }

    /// A wallet pass saved into the passes folder while the daemon runs, for a flight no calendar has: its flight
    /// is detected at once, with its seat. When a calendar gains that flight, the calendar's is the one planned (the
    /// pass's own item is a copy of it); removed again, the pass's copy takes over without repeating itself.
    @Test func aWalletPassWithoutACalendarItemIsAFlightOfItsOwn() async throws {
        let service = try Bench(configure: { configuration in
            configuration.calendars += configuration.passRoots
            configuration.planner.horizon = 400 * 86_400
        })
        let fixtures = SinkFixtures.folder()
        defer { try? FileManager.default.removeItem(atPath: fixtures) }
        _ = try await runProgram(["python3", ConfigurationTests.repository + "/scripts/pkpass-fixtures.py", fixtures])
        func detected() async -> [String] {
            await service.bench.sink.lines.filter { $0.contains("calwatch.flightDetected") }
        }
        try await service.running {
            let folder = service.bench.configuration.passes[0]
            try FileManager.default.copyItem(atPath: fixtures + "/signed.pkpass", toPath: folder + "/.partial")
            #expect(rename(folder + "/.partial", folder + "/AB12C3-AC834-326.pkpass") == 0)
            try await eventually("the pass's flight detected") { await detected().count == 1 }
            let own = await detected()[0]
            #expect(own.contains(#""subject":"AB12C3-AC834-326@pass.calwatch/2027-11-22T22:45:00Z""#), "\(own)")
            #expect(own.contains(#""pass":{"seat":"3A""#) && own.contains(#""source":"calwatch:Boarding passes""#))
            // The calendar gains the flight: the calendar's is planned, and detected, with the pass.
            try service.bench.writeRenamed(
                "work/f.ics",
                WatchTests.event(
                    uid: "f", start: "20271122T233000Z", end: "20271123T064500Z", summary: "Flight AC 834 YUL → FRA"))
            try await eventually("the calendar's flight detected") { await detected().count == 2 }
            #expect(await detected()[1].contains(#""subject":"f/2027-11-22T23:30:00Z""#))
            // Gone from the calendar: the pass's copy is planned again, and its detection is not sent twice.
            #expect(unlink(service.bench.root + "/work/f.ics") == 0)
            try service.bench.writeRenamed(
                "work/g.ics", WatchTests.event(uid: "g", start: "20270301T100000Z", end: "20270301T103000Z"))
            try await eventually("the file after the removal") { await service.received("g").count == 2 }
            #expect(await detected().count == 2)
        }
    }

    @Test func aFileRenamedIntoPlaceIsReadAtOnceAndOneWrittenInPlaceOnceQuiet() async throws {
        let service = try Bench()
        try await service.running {
            // vdirsyncer's rename: read without the clock moving. At 09:50 the 10:00 meeting's 15-minute reminder
            // is late and its live activity has begun.
            try service.bench.writeRenamed(
                "work/a.ics", WatchTests.event(uid: "a", start: "20270301T100000Z", end: "20270301T103000Z"))
            try await eventually("the renamed file's events") { await service.received("a").count == 2 }
            #expect(
                await service.received("a") == [
                    "liveActivityStart 2027-03-01T09:45:00Z", "reminderDue 2027-03-01T09:45:00Z 15m late",
                ])
            // An editor writing in place: nothing until it has been quiet for the debounce.
            try service.bench.writeInPlace(
                "work/b.ics", WatchTests.event(uid: "b", start: "20270301T100000Z", end: "20270301T103000Z"))
            try await service.clock.waitForSleeper(.milliseconds(100))
            #expect(await service.received("b").isEmpty)
            // The write's notices can reach the service in more than one read of inotify; one taken after the clock
            // moved starts the quiet time again from there. So the clock moves on a debounce at a time, only while
            // the service sleeps on one, until the events come.
            try await eventually("the written file's events") {
                if await service.received("b").count == 2 { return true }
                if service.clock.now.offset < .seconds(1) && service.clock.hasSleeper(.milliseconds(100)) {
                    service.clock.advance(by: .milliseconds(100))
                }
                return false
            }
        }
        // Read after one debounce of quiet, or a few when its notices came apart; never before.
        #expect((Duration.milliseconds(100)...Duration.seconds(1)).contains(service.clock.now.offset))
    }

    /// A file renamed into place is complete, even when the writer's last close comes after the rename (a process
    /// that forked while the file was open): read at once, not held back as a file still being written.
    @Test func aRenamedFileWhoseLastCloseComesLateIsReadAtOnce() async throws {
        let service = try Bench()
        try await service.running {
            try service.bench.writeRenamedClosingLate(
                "work/a.ics", WatchTests.event(uid: "a", start: "20270301T100000Z", end: "20270301T103000Z"))
            try await eventually("the renamed file's events") { await service.received("a").count == 2 }
        }
        #expect(service.clock.now.offset == .zero)
    }

    /// A sync that writes hundreds of items: what reading them freed is given back to the system once the files
    /// have stopped changing for a second, not while they come (a first sync of 100,000 items kept 30 MB it no
    /// longer used).
    @Test func memoryFreedByManyFilesIsGivenBackOnceTheyStopChanging() async throws {
        let service = try Bench()
        let items = FreedMemory.largeChange + 44
        try await service.running {
            for index in 0..<items {
                let path = "work/\(index).ics"
                let text = WatchTests.event(uid: "u\(index)", start: "20270301T100000Z", end: "20270301T103000Z")
                // The last one's last close comes after its rename, as when a process forks while it is open (other
                // tests' child processes do that to any of them): it is read again once quiet.
                try index == items - 1
                    ? service.bench.writeRenamedClosingLate(path, text) : service.bench.writeRenamed(path, text)
            }
            try await eventually("every file's events") {
                Set(await service.bench.sink.events.map(\.key.uid)).count == items
            }
            #expect(!service.log.messages.contains("freed memory given back"))
            // The clock moves on to the service's next wake while that is a second or less away: the item closed
            // late is read again once quiet first, and the quiet second starts again after it.
            try await eventually("the memory given back") {
                if let sleep = service.clock.sleeps.first, sleep <= .seconds(1) { service.clock.advance(by: sleep) }
                return service.log.messages.contains("freed memory given back")
            }
        }
        let given = service.log.metadata[service.log.messages.firstIndex(of: "freed memory given back")!]
        // Linux's /proc tells the resident memory either side.
        #expect(
            ["memory.resident_before", "memory.resident_after"].allSatisfy {
                given[$0].map { "\($0)".hasSuffix(" MB") } == true
            },
            "\(given)")
        // Once: nothing changed after.
        #expect(service.log.messages.filter { $0 == "freed memory given back" }.count == 1)
    }

    /// An editor saving config.yml can leave it empty for a moment, and a SIGHUP then read "all defaults": every
    /// hook and sink gone. An empty file, or the file gone, on a reload keeps the configuration in use.
    @Test(arguments: ["empty", "gone"])
    func aReloadOfAnEmptyOrMissingFileKeepsTheConfigurationInUse(state: String) async throws {
        let service = try Bench(reloaded: { current in
            var fresh = Configuration(home: "/nonexistent")
            fresh.file = state == "empty" ? current.file : nil
            fresh.fileIsEmpty = state == "empty"
            return fresh
        })
        #expect(service.bench.configuration.file != nil)
        try await service.running {
            service.service.reload()
            try await eventually("the reload refused") {
                service.log.messages.contains { $0.hasPrefix("configuration not reloaded, the one in use stays") }
            }
            // The sink in use still receives: the watch was never replaced.
            try service.bench.writeRenamed(
                "work/a.ics", WatchTests.event(uid: "a", start: "20270301T100000Z", end: "20270301T103000Z"))
            try await eventually("events through the sink in use") { await service.received("a").count == 2 }
        }
        let refusal = service.log.messages.first { $0.hasPrefix("configuration not reloaded") } ?? ""
        #expect(refusal.contains(state == "empty" ? "holds no settings" : "is gone"), "\(refusal)")
        #expect(!service.log.messages.contains("configuration read again"))
    }

    /// `rm -rf ~/.calendars` and a sync that writes it again: the new folder is followed without a SIGHUP.
    @Test func aRootRemovedAndCreatedAgainIsFollowed() async throws {
        let service = try Bench()
        try await service.running {
            try service.bench.writeRenamed(
                "work/a.ics", WatchTests.event(uid: "a", start: "20270301T100000Z", end: "20270301T103000Z"))
            try await eventually("the first item's events") { await service.received("a").count == 2 }
            try FileManager.default.removeItem(atPath: service.bench.root)
            // The removal is seen: the item's live activity ends (`removed`).
            try await eventually("the removal") {
                await service.received("a").contains { $0.hasPrefix("liveActivityEnd") }
            }
            // The folder's own removal asks for a look at everything once the debounce has passed (other tests'
            // files in the same parent folder ask too, so the clock is moved on until it has happened): the root
            // is reported missing, and its parent is followed instead.
            try await eventually("the look that finds the root missing") {
                service.clock.advance(by: .milliseconds(100))
                return service.log.messages.contains { $0.contains("no such file or directory") }
            }
            try FileManager.default.createDirectory(
                atPath: service.bench.root + "/work", withIntermediateDirectories: true)
            try service.bench.writeRenamed(
                "work/b.ics", WatchTests.event(uid: "b", start: "20270301T100000Z", end: "20270301T103000Z"))
            // The new folder in the parent asks for another look, a debounce after the service takes the notice.
            // The clock moves on 100 ms a poll (every 5 ms of real time), so a service slowed by a busy machine can
            // take the notice seconds of clock time late; it stops at five minutes, still short of the safety
            // rescan every ten, so the look is the one the notice asked for.
            let limit = service.clock.now.offset + .seconds(300)
            try await eventually("the new item's events") {
                if service.clock.now.offset < limit { service.clock.advance(by: .milliseconds(100)) }
                return await service.received("b").count == 2
            }
        }
    }

    /// A sync filling a new collection (a CalDAV account's first sync, vdirsyncer's first run) renames items into
    /// the folder while the daemon lists it: items that land after the listing and before the folder's watch
    /// begins are found by listing it again at once, not by the safety rescan ten minutes later.
    @Test func aNewCollectionFilledWhileItIsFoundHasEveryItemReadAtOnce() async throws {
        let service = try Bench()
        let items = 1_000
        try await service.running {
            let root = service.bench.root
            let writer = Thread {
                try? FileManager.default.createDirectory(atPath: root + "/team", withIntermediateDirectories: true)
                for index in 0..<items {
                    let temporary = root + "/team/.item-\(index).tmp"
                    try? WatchTests.event(uid: "n\(index)", start: "20270301T100000Z", end: "20270301T103000Z")
                        .write(toFile: temporary, atomically: false, encoding: .utf8)
                    rename(temporary, root + "/team/item-\(index).ics")
                }
            }
            writer.start()
            // The new folder asks for a look a debounce after its notice; the clock moves on 100 ms a poll and
            // stops at five minutes, short of the safety rescan every ten: what is read is read by those looks.
            let limit = service.clock.now.offset + .seconds(300)
            try await eventually("every new item's events") {
                if service.clock.now.offset < limit { service.clock.advance(by: .milliseconds(100)) }
                return await Set(service.bench.sink.events.map(\.key.uid).filter { $0.hasPrefix("n") }).count == items
            }
        }
    }
}
