import ArgumentParser
import CalWatchCore

/// A duration on the command line (`30s`, `10m`, `1h30m`), written as config.yml writes one. Any text is taken when
/// the arguments are parsed; `validate()` checks it against its option's range (`checked`), so the message says
/// what the option takes and shows a right one, as configuration problems do.
struct DurationArgument: ExpressibleByArgument, CustomStringConvertible, Sendable {
    let text: String
    /// `nil` when `text` is not a duration.
    let seconds: Int64?

    init(argument: String) {
        text = argument
        seconds = DurationText.seconds(argument)
    }

    init(_ text: String) { self.init(argument: text) }

    var description: String { text }
    var defaultValueDescription: String { text }

    /// The seconds, within `range`; otherwise a usage error naming `option`, the range and `example`.
    @discardableResult
    func checked(_ option: String, in range: ClosedRange<Int64>, example: String) throws -> Int64 {
        guard let seconds, range.contains(seconds) else {
            throw ValidationError(
                "\(option.isEmpty ? "" : option + " ")'\(text)' is not a duration from "
                    + "\(DurationText.text(range.lowerBound)) to \(DurationText.text(range.upperBound)); write it like "
                    + "\(example).")
        }
        return seconds
    }

    /// The value, once `validate()` has checked it.
    var duration: Duration { .seconds(seconds ?? 0) }
}
