import Foundation

/// Finds flights (docs/design.md §4): a flight number of a known airline, a route between two airports of the
/// database, and flight words in several languages, in the shapes producers write (Google's "Flight to London
/// (BA 286)" at "San Francisco SFO", TripIt's "UA123 SFO to EWR", airline exports with "Flight number:",
/// hand-typed "✈️ FRA-JFK"); and what only looks like one (trains sold with airline numbers, airport pickups,
/// hotels, parking, rental cars, "book flights", flight lessons, office codes, prices, issue keys). What it finds
/// is evidence; `FlightDecision.swift` weighs it with fitted weights, and its words are data (`FlightWords`).
///
/// Only the summary and location decide; the description adds labelled facts ("Flight number: LH 400",
/// "Terminal: 1", "Seat: 14A") and a route, but its free text (booking boilerplate, directions) never makes an
/// item a flight by itself.
public struct FlightClassifier: ItemClassifier {
    /// The tables, loaded on first use: most calendars have items that never need the airports.
    var airports: AirportDatabase { .shared }
    var airlines: AirlineTable { .shared }
    /// The user's own addresses (`me`), lower case: an item with attendees that leave the user out is someone
    /// else's trip.
    let me: Set<String>
    let weights: FlightWeights

    public init(me: [String] = []) {
        self.me = MeetingClassifier.addresses(me)
        weights = .shared
    }

    /// A scan whose decision always says flight (the implausible aside): what an item settled as a flight reads.
    static let settled = FlightClassifier(weights: FlightWeights(bias: 1, weights: [:]))

    init(me: [String] = [], weights: FlightWeights) {
        self.me = MeetingClassifier.addresses(me)
        self.weights = weights
    }

    // MARK: Words

    /// "Flight" in the languages calendars are written in.
    static let flightWords: Set<String> = FlightWords.shared.set("flight-words")
    /// Words before an all-day item's departure time: "Departs 13:25", "Abflug 7.05".
    static let departureTimeWords: Set<String> = FlightWords.shared.set("departure-time-words")
    /// "Airport" in the languages calendars are written in.
    static let airportWords: Set<String> = FlightWords.shared.set("airport-words")
    /// "Flight" where a language writes it without spaces around it (Japanese, Chinese, Korean).
    static let flightWordsWithin: [String] = FlightWords.shared.list("flight-words-within")
    /// Counter words after a flight number in Japanese, Korean and Chinese ("LH252便", "A3591편", "OS639航班").
    static let numberCounters: [String] = FlightWords.shared.list("number-counters")
    /// Words around a city a flight is bound for, written without spaces: before it (`飞往`) or after it (`行き`).
    static let boundForBefore: [String] = FlightWords.shared.list("bound-for-before")
    static let boundForAfter: [String] = FlightWords.shared.list("bound-for-after")
    /// Words that mean the item is on the ground or on rails: a veto, with what it is.
    static let groundWords: [String: String] = FlightWords.shared.map("ground-words")
    /// Words that veto inside text written without spaces: "空港へお迎え" (a pickup), "新幹線" (a train), "投诉".
    static let groundWordsWithin: [(String, String)] = {
        let meanings = FlightWords.shared.map("ground-words-within")
        return FlightWords.shared.list("ground-words-within").compactMap { word in meanings[word].map { (word, $0) } }
    }()
    /// Words that veto only beside a flight word: "Flight lesson", "Scenic flight" (a "training" alone says
    /// nothing about flying).
    static let lessonWords: [String: String] = FlightWords.shared.map("lesson-words")
    /// Two-word phrases that veto: `pick up`, `car hire`, `wine flight`.
    static let groundPhrases: [(String, String, String)] = FlightWords.shared.phrases("ground-phrases")
    /// Titles before a name: "Dr. Flug" is a person.
    static let titles: Set<String> = FlightWords.shared.set("titles")
    /// Words before "'s flight" that are times, not people: "Today's flight" is the user's own.
    static let ownPossessives: Set<String> = FlightWords.shared.set("own-possessives")
    /// Verbs after a person's name that make the flight theirs, arriving to be met: "Ben arrives AF 752".
    static let arrivalVerbs: Set<String> = FlightWords.shared.set("arrival-verbs")
    /// Verbs that make "flights" a task, not a trip: "Book flights to Lisbon".
    static let planningVerbs: Set<String> = FlightWords.shared.set("planning-verbs")
    /// Words of meetings, work, study and errands: beside an airport code, a route or a number with nothing else
    /// to say "flight" ("SFO team offsite", "SFO-LAX pricing sync", "AI 101 lecture", "Book LH 400 seats"), the
    /// item is about something else.
    static let meetingWords: Set<String> = FlightWords.shared.set("meeting-words")
    /// Currencies (and `%`): beside a number they make a price ("ab 380 EUR", "€99", "-30%").
    static let currencies: Set<String> = FlightWords.shared.set("currencies")
    /// Words after a number that make it a count or a quantity, not a flight: "Lufthansa 5 years".
    static let quantityWords: Set<String> = FlightWords.shared.set("quantity-words")
    /// Three-letter upper-case words that are also airport codes but usually mean something else; they count
    /// as airports only next to a flight word or number.
    static let commonCodes: Set<String> = FlightWords.shared.set("common-codes")
    /// Upper-case two-letter words that are also airline designators: a number after them is a flight only
    /// written together (`AS123`) or next to a flight word or route.
    static let wordLikeDesignators: Set<String> = FlightWords.shared.set("word-like-designators")
    /// Words after which a number is a room, gate, seat or ticket, never a flight.
    static let numberContexts: Set<String> = FlightWords.shared.set("number-contexts")
    /// Words that join a route's two ends: "SFO to EWR", "nach", "à".
    static let routeWords: Set<String> = FlightWords.shared.set("route-words")
    /// Words that introduce a destination ("Flight to London") or an origin ("from SFO").
    static let toWords: Set<String> = FlightWords.shared.set("to-words")
    static let fromWords: Set<String> = FlightWords.shared.set("from-words")
    /// Words in a description line before the airport a flight leaves from or goes to ("Finnair 1323 departing
    /// Geneva (GVA) arriving Lima (LIM)"), and a Sabre itinerary's `LV`/`AR` lines.
    static let departureMarkers: Set<String> = FlightWords.shared.set("departure-markers")
    static let arrivalMarkers: Set<String> = FlightWords.shared.set("arrival-markers")
    /// Description labels and what they hold.
    static let numberLabels: Set<String> = FlightWords.shared.set("number-labels")
    static let originLabels: Set<String> = FlightWords.shared.set("origin-labels")
    static let destinationLabels: Set<String> = FlightWords.shared.set("destination-labels")
    static let bookingLabels: Set<String> = FlightWords.shared.set("booking-labels")
    /// Words before a booking code written without a colon ("Confirmation 4PQDVS", "PNR USVYRL", "AGENCY RECORD
    /// LOCATOR SVVJDX"); a code after the weaker ones must hold a digit ("Confirmation PENDING" is not one).
    static let bookingWords: [(words: [String], strong: Bool)] = FlightWords.shared.wordLists("booking-words")
    static let terminalLabels: Set<String> = FlightWords.shared.set("terminal-labels")
    static let gateLabels: Set<String> = FlightWords.shared.set("gate-labels")
    static let seatLabels: Set<String> = FlightWords.shared.set("seat-labels")
    static let airlineLabels: Set<String> = FlightWords.shared.set("airline-labels")

    // MARK: Classification

    public func classify(_ input: ClassifierInput, into classification: inout Classification) {
        var scan = Scan(input: input, classifier: self)
        scan.run()
        guard let flight = scan.result() else {
            classification.evidence += scan.evidence
            return
        }
        classification.kind = .flight
        classification.confidence = scan.confidence
        classification.flight = flight
        classification.evidence += scan.evidence
    }

    /// A flight number found in text.
    struct FlightNumber {
        var designator: String
        var number: Int
        var text: String
        var known: Bool
    }

    /// One pass over an item: the signals found, then the decision.
    struct Scan {
        typealias FlightNumber = FlightClassifier.FlightNumber
        let input: ClassifierInput
        let classifier: FlightClassifier
        let summary: TextTokens
        let location: TextTokens
        let fields: LabelledFields
        var evidence: [Evidence] = []
        var keyword: String?
        var number: FlightNumber?
        var route: (origin: Airport, destination: Airport)?
        var origin: Airport?
        var destination: Airport?
        var destinationCity: String?
        var veto: String?
        /// The booking code under a booking label, read once for the decision and the facts.
        var labelledBooking: String?
        /// An all-day item's departure time from its text, in minutes after midnight.
        var allDayDeparture: Int?
        /// The summary's words that raised the veto.
        var vetoText: String?
        /// The features the decision weighed.
        var weighed: Set<FlightFeature>?
        /// The flight was read from the description's lines alone (`findLegsInDescription`), and the time on the
        /// first leg's line.
        var legsInDescription = false
        var legDeparture: (minute: Int, text: String)?
        var confidence = 0.0
        /// The description's first 60 lines, links left out, cut into tokens once, the first time a rule reads
        /// them (only items whose summary or location already hint at a flight get that far).
        lazy var descriptionLines: [(text: Substring, tokens: TextTokens)] = input.description
            .split(whereSeparator: \.isNewline).prefix(60).map { ($0, TextTokens(TextTokens.withoutLinks(String($0)))) }

        init(input: ClassifierInput, classifier: FlightClassifier) {
            self.input = input
            self.classifier = classifier
            summary = TextTokens(TextTokens.withoutLinks(input.summary))
            location = TextTokens(TextTokens.withoutLinks(input.location))
            fields = LabelledFields(input.description)
        }

        mutating func run() {
            findKeyword()
            findNumber()
            // Most items have neither a flight word nor a number, nor a code or an arrow that could make a route:
            // they are done here, before the costlier look-ups.
            let couldRoute = [summary, location].contains { tokens in
                tokens.tokens.contains { $0.kind == .arrow || ($0.kind == .word && $0.text.count == 3 && $0.isUpper) }
            }
            guard keyword != nil || number != nil || couldRoute else {
                findLegsInDescription()
                return
            }
            findRoute()
            if keyword != nil || number != nil || route != nil { findVetoes() }
        }
    }
}
