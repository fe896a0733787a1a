import ArgumentParser
import CalWatch
import Foundation

/// What `scan` and `replay` share: the zone, the time arguments, the clock and problem reports.
enum CommandSupport {
    /// The real clock.
    static var now: Instant { Instant(secondsSinceEpoch: Int64(Date().timeIntervalSince1970)) }

    /// `--tz`, or the system zone; IANA or Windows names.
    static func zone(_ name: String?) throws -> ZoneRules {
        let zoneName = name ?? TimeZoneDatabase.systemZoneName
        guard
            let zone = TimeZoneDatabase.rules(named: zoneName)
                ?? WindowsZones.ianaName(for: zoneName).flatMap(TimeZoneDatabase.rules)
        else {
            throw ValidationError("--tz '\(zoneName)' is not a known zone; use an IANA name such as Europe/Berlin.")
        }
        return zone
    }

    /// A time argument, with the option's name in the error.
    static func instant(_ text: String, zone: ZoneRules) throws -> Instant {
        do {
            return try TimeArgument.parse(text, zone: zone, now: now)
        } catch let invalid as TimeArgument.Invalid {
            throw ValidationError(invalid.description)
        }
    }

    /// `[from, to)`, checked.
    static func window(from: Instant, to: Instant) throws -> InstantWindow {
        guard from < to else { throw ValidationError("--to (\(to)) must be after --from (\(from)).") }
        return InstantWindow(start: from, end: to)
    }

    /// Opens the configured sinks; one that cannot be opened ends the command with exit status 74.
    static func openSinks(_ settings: [SinkSettings]) throws -> [any EventSink] {
        try settings.map { sink in
            do {
                let opened = try sink.open(now: { now }, log: { StandardStreams.error("calwatch: \($0)\n") })
                if let file = opened as? JSONLinesSink, file.repairedBytes > 0 {
                    StandardStreams.error(
                        "calwatch: \(sink.name): cut off a partial last line (\(file.repairedBytes) bytes) left by an "
                            + "interrupted write; its events are written again\n")
                }
                return opened
            } catch {
                StandardStreams.error("calwatch: \((error as? SinkError)?.description ?? "\(sink.name): \(error)")\n")
                throw ExitCode(74)
            }
        }
    }

    /// Problems on standard error, one per line.
    static func report(_ problems: [CalendarProblem]) {
        for problem in problems { StandardStreams.error("\(problem)\n") }
    }
}
