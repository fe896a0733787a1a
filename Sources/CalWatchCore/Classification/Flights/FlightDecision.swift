import Foundation

/// What decides whether an item is a flight, once `FlightClassifier`'s scan has found its evidence: each piece of
/// evidence is a named feature, and the decision adds their weights. The weights are data (`flight-weights.txt`,
/// checked against the manifest like the airport tables), fitted by `scripts/fit-flight-weights.py` on the labelled
/// corpus (`make fit-flights`), so a new shape is met by new evidence and a refit, not by another rule.
enum FlightFeature: String, CaseIterable, Sendable {
    case flightWord = "flight-word"
    case knownNumber = "known-flight-number"
    case unknownNumber = "unknown-designator-number"
    case productLikeNumber = "one-digit-glued-number"
    case yearLikeNumber = "year-like-number"
    case route
    case airport = "one-airport"
    case destinationCity = "destination-city"
    case bookingReference = "booking-reference"
    case wordy = "more-than-six-words"
    case veryWordy = "more-than-ten-words"
    case workWord = "work-word"
    case ground = "veto-ground-transport"
    case errand = "veto-errand"
    case leisureFlying = "veto-leisure-flying"
    case notTravel = "veto-not-travel"
    case price = "veto-price"
    case task = "veto-task-about-flights"
    case someoneElses = "veto-someone-elses-flight"
    case claim = "veto-claim"
    case simulator = "veto-simulator"
    case virtualFlight = "veto-virtual-flight"
    case flightAfterGroundLeg = "flight-after-a-ground-leg"
    case othersInvited = "attendees-not-you"
    case allDay = "all-day"
    case impossibleDuration = "impossible-duration"
    case tooFast = "too-fast-for-the-distance"
    case tooSlow = "too-slow-for-the-distance"
    case shortHop = "airports-under-50-km-apart"

    /// What no airliner flies: these decide alone, before any weight.
    static let implausible: Set<FlightFeature> = [.allDay, .impossibleDuration, .tooFast, .tooSlow]

    /// The features a veto of the scan stands for (`veto: train` is ground transport).
    static func veto(_ what: String) -> FlightFeature {
        // "train (Deutsche Bahn sells rail seats under 2A)": a rail designator.
        if what.hasPrefix("train") { return .ground }
        return switch what {
        case "train", "bus", "ferry", "taxi", "car", "on foot", "bicycle", "cargo": .ground
        case "airport pickup", "airport drop-off", "hotel", "parking", "rental car", "a check-in reminder": .errand
        case "general aviation", "flight lesson", "a hobby": .leisureFlying
        case "a price", "a price alert": .price
        case "a task about flights": .task
        case "someone else's flight": .someoneElses
        case "a claim": .claim
        case "a simulator": .simulator
        case "a virtual flight": .virtualFlight
        default: .notTravel
        }
    }
}

/// The fitted weights: a bias and one weight per feature. An item is a flight when the bias and the weights of its
/// features add up to more than zero; the logistic of that sum is the confidence.
public final class FlightWeights: Sendable {
    public static let shared = FlightWeights(ReferenceData.text("flight-weights"))

    /// Where the weights come from, as `calwatch --version` and `calwatch check` name it.
    public static var dataSource: String { ReferenceData.summary(of: "flight-weights") }

    let bias: Double
    let weights: [FlightFeature: Double]

    /// Reads `feature|weight` lines (`bias|…` for the bias; `#` starts a comment). Without the file (refused by
    /// its checksum, or missing) nothing is a flight: `calwatch check` says why.
    init(_ text: String?) {
        var bias = -1.0
        var weights: [FlightFeature: Double] = [:]
        for line in (text ?? "").split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let parts = line.split(separator: "|")
            guard parts.count == 2, let value = Double(parts[1]) else { continue }
            if parts[0] == "bias" {
                bias = value
            } else if let feature = FlightFeature(rawValue: String(parts[0])) {
                weights[feature] = value
            }
        }
        self.bias = bias
        self.weights = weights
    }

    init(bias: Double, weights: [FlightFeature: Double]) {
        self.bias = bias
        self.weights = weights
    }

    public var count: Int { weights.count }

    func weight(_ feature: FlightFeature) -> Double { weights[feature] ?? 0 }

    /// The sum, in the features' declared order: the same item always gets the same score to the last bit.
    func score(_ features: Set<FlightFeature>) -> Double {
        FlightFeature.allCases.reduce(bias) { features.contains($1) ? $0 + weight($1) : $0 }
    }
}
