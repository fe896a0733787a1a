import Foundation

/// One rule that fired: which, on what text, and what it did to the result.
public struct Evidence: Sendable, Hashable, CustomStringConvertible {
    /// For a flight or against it, or for a meeting; `fact` records an extracted value.
    public enum Effect: String, Sendable {
        case flight
        case notFlight = "not a flight"
        case meeting, fact
    }

    public var effect: Effect
    /// The rule, in words: `route between two airports`, `veto: train`.
    public var rule: String
    /// The property the text came from: `SUMMARY`, `LOCATION`, `DESCRIPTION`, `ATTENDEE`, …
    public var property: String
    /// The text the rule matched.
    public var text: String
    /// What the flight decision gave it (`flight-weights.txt`); for the decision itself, the sum.
    public var weight: Double?

    /// The rule of a decision whose sum came within `closeMargin` of zero: `check --unsure` lists such items.
    public static let closeDecision = "a close decision"
    static let closeMargin = 1.5

    public init(_ effect: Effect, _ rule: String, in property: String, text: String) {
        self.effect = effect
        self.rule = rule
        self.property = property
        self.text = text
    }

    /// `+ flight number of British Airways: SUMMARY "BA286"`: + for the result, − against it, · a fact taken.
    public var description: String {
        let sign =
            switch effect {
            case .flight, .meeting: "+"
            case .notFlight: "−"
            case .fact: "·"
            }
        let weighed = weight.map { String(format: " [%+.2f]", $0) } ?? ""
        return "\(sign) \(rule): \(property) \"\(text.prefix(rule.hasPrefix("decision") ? 600 : 120))\"\(weighed)"
    }

    /// The same evidence with its weight.
    func weighing(_ weight: Double) -> Evidence {
        var weighed = self
        weighed.weight = weight
        return weighed
    }
}
