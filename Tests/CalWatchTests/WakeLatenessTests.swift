import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The daemon's loop keeps its wakes ahead of a sync's files, and says what held a late one.
@Suite struct WakeLatenessTests {
    let wake = utc("2027-03-01T09:55:00Z")
    var due: Int64 { wake.secondsSinceEpoch * 1000 }

    @Test func filesAreReadInSlicesThatEndWellBeforeTheNextWake() {
        var unread = UnreadFiles()
        unread.add((0..<5_000).map { "/vdir/item-\($0).ics" })
        unread.took(100, in: .milliseconds(50))  // half a millisecond a file lately
        let far = Timestamp(millisecondsSinceEpoch: due - 10_000)
        let slice = unread.slice(before: wake, now: far)
        #expect(slice > 1 && Double(slice) * unread.millisecondsPerFile <= UnreadFiles.sliceMilliseconds)
        // Near the wake nothing is begun: the loop waits for it, then reads on.
        let near = Timestamp(millisecondsSinceEpoch: due - Int64(UnreadFiles.guardMilliseconds) + 1)
        #expect(unread.slice(before: wake, now: near) == 0)
        let closer = Timestamp(millisecondsSinceEpoch: due - Int64(UnreadFiles.guardMilliseconds) - 4)
        #expect(unread.slice(before: wake, now: closer) == Int(4 / unread.millisecondsPerFile))
        #expect(unread.slice(before: nil, now: near) == slice)
    }

    @Test func aFileDearerThanASliceIsReadAllTheSameWhenTheWakeIsFar() {
        var unread = UnreadFiles()
        unread.add(["/vdir/huge.ics"])
        unread.took(1, in: .milliseconds(400))
        #expect(unread.slice(before: wake, now: Timestamp(millisecondsSinceEpoch: due - 900)) == 1)
        #expect(unread.slice(before: wake, now: Timestamp(millisecondsSinceEpoch: due - 35)) == 0)
    }

    @Test func filesComeOutOnceInTheOrderNoticed() {
        var unread = UnreadFiles()
        unread.add(["/a/2.ics", "/a/1.ics", "/a/2.ics"])
        unread.add(["/a/3.ics", "/a/1.ics"])
        #expect(unread.count == 3)
        #expect(unread.take(2) == ["/a/2.ics", "/a/1.ics"])
        unread.add(["/a/2.ics"])  // renamed again after it was read: read again
        #expect(unread.take(5) == ["/a/3.ics", "/a/2.ics"])
        #expect(unread.isEmpty)
    }

    @Test func aLateWakeIsBlamedOnWhatHeldTheLoopAfterItWasDue() {
        var lateness = WakeLateness()
        lateness.waiting(for: wake, now: due - 5_000)
        lateness.woke(now: due - 40)  // files noticed before the wake
        // A slice begun before the wake and planned then serves nothing; it overran the wake by 25 ms.
        #expect(
            lateness.did("reading changed files", from: due - 40, to: due + 25, plannedAt: wake.adding(seconds: -1))
                == nil)
        lateness.waiting(for: wake, now: due + 25)
        lateness.woke(now: due + 27)
        let served = lateness.did("planning", from: due + 27, to: due + 30, plannedAt: wake)
        #expect(served?.milliseconds == 30)
        #expect(served?.cause == "reading changed files (25 ms)")
        #expect(lateness.lateCount == 1 && lateness.served == 1)
        #expect(lateness.worst?.milliseconds == 30)
    }

    @Test func aWakeServedOnTimeIsNotLate() {
        var lateness = WakeLateness()
        lateness.waiting(for: wake, now: due - 60_000)
        lateness.woke(now: due + 2)
        let served = lateness.did("planning", from: due + 2, to: due + 3, plannedAt: wake)
        #expect(served?.milliseconds == 3)
        #expect(served?.cause == "the wait's own wake-up (2 ms)")
        #expect(lateness.lateCount == 0)
        // The next wake starts a fresh account.
        let next = wake.adding(seconds: 60)
        lateness.waiting(for: next, now: due + 2)
        lateness.woke(now: due + 60_000)
        #expect(lateness.did("planning", from: due + 60_000, to: due + 60_001, plannedAt: next)?.milliseconds == 1)
        #expect(lateness.served == 2)
    }
}
