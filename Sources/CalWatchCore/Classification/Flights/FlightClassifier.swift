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

        // MARK: Signals

        private mutating func findKeyword() {
            for (property, tokens) in [("SUMMARY", summary), ("LOCATION", location)] {
                for (index, token) in tokens.tokens.enumerated() {
                    if token.isPlane {
                        keyword = String(token.text)
                    } else if token.kind == .word || token.kind == .mixed,
                        token.text.utf8.contains(where: { $0 >= 0x80 }),
                        let word = FlightClassifier.flightWordsWithin.first(where: { token.text.contains($0) })
                    {
                        // "ミュンヘン行きフライト", "飞往北京的航班": written without spaces.
                        keyword = word
                    } else if token.kind == .word, FlightClassifier.flightWords.contains(token.folded) {
                        // "Vol. 3" is a volume; "LOT" shouts, "lot" is Polish for flight only before a number.
                        let next = tokens.at(index + 1)
                        if next?.kind == .punctuation && next?.text == "." { continue }
                        // ("Lot do Pragi", "Lot z Warszawy": Polish for a flight to or from.)
                        if token.folded == "lot"
                            && !(next.map { $0.kind == .word && ($0.isUpper || $0.folded == "do" || $0.folded == "z") }
                                ?? false)
                        {
                            continue
                        }
                        // "Dr. Flug", "Herr Flug": a name.
                        let before = tokens.at(index - 1)?.kind == .punctuation ? index - 2 : index - 1
                        if let title = tokens.at(before), FlightClassifier.titles.contains(title.folded) { continue }
                        keyword = String(token.text)
                    } else {
                        continue
                    }
                    evidence.append(Evidence(.flight, "flight word", in: property, text: keyword!))
                    return
                }
            }
        }

        private mutating func findNumber() {
            if let found = flightNumber(in: summary, property: "SUMMARY") ?? namedNumber(in: summary) {
                number = found
                return
            }
            if let value = fields.value(FlightClassifier.numberLabels),
                let found = flightNumber(in: TextTokens(value), property: "DESCRIPTION", labelled: true)
            {
                number = found
                return
            }
            if let found = itineraryNumber() {
                number = found
                return
            }
            if let found = flightNumber(in: location, property: "LOCATION") { number = found }
        }

        /// Under a title that names a trip ("Lisbon", "Urlaub", "出張"), the flight only in the description: a line
        /// with a known airline's number and a route between two airport codes ("TP 1351 LHR 09.30 → LIS 12:05"),
        /// several such lines chained into one journey. Only when the item lasts what that journey takes: a note
        /// or a call that quotes a flight does not.
        private mutating func findLegsInDescription() {
            // An all-day item of a day or two (a travel day) may hold its flight below too; its length says nothing.
            let days = allDayLength
            guard input.duration != nil || (days ?? 3) <= 2, Self.mayHoldRoute(input.description) else { return }
            let duration = input.duration
            var legs: [(number: FlightNumber, route: (origin: Airport, destination: Airport))] = []
            var legLines: [TextTokens] = []
            // The number on the route's line, or alone on the line above it ("TAP TP 1351" over "LHR → LIS").
            var above: FlightNumber?
            for (_, tokens) in descriptionLines {
                let number = flightNumber(in: tokens, property: "DESCRIPTION").flatMap { $0.known ? $0 : nil }
                defer { above = number }
                guard let found = route(in: tokens, strong: true), let leg = number ?? above else { continue }
                if let last = legs.last, last.route.destination.code != found.origin.code { break }
                legs.append((leg, found))
                legLines.append(tokens)
                if legs.count == 4 { break }
            }
            guard let first = legs.first, let last = legs.last else { return }
            // "Call with Anna", "Dinner in Lisbon": a title that names something else quotes the flight below.
            if let word = summary.tokens.first(where: { FlightClassifier.meetingWords.contains($0.folded) }) {
                evidence.append(
                    Evidence(
                        .notFlight, "a flight in the description, but the title names something else", in: "SUMMARY",
                        text: String(word.text)))
                return
            }
            let typical = legs.map { $0.route.origin.typicalFlightSeconds(to: $0.route.destination) }
            let longest = typical.reduce(0, +) * 1.5 + Double(legs.count - 1) * 4 * 3600 + 3600
            guard duration.map({ $0 >= typical[0] * 0.6 && $0 <= longest }) ?? true else {
                evidence.append(
                    Evidence(
                        .notFlight, "a flight in the description, but the item does not last what it takes",
                        in: "DTEND",
                        text: "\(first.number.text) \(first.route.origin.code) → \(last.route.destination.code)"))
                return
            }
            number = first.number
            route = (first.route.origin, last.route.destination)
            legsInDescription = true
            // "TP 1351 LHR 09:30 → LIS 12:05": the first time on the first leg's line is when it leaves.
            if let line = legLines.first {
                for index in line.tokens.indices {
                    if let minute = Self.clockTime(line[index], line.at(index + 1), line.at(index + 2)) {
                        legDeparture = (minute, "\(minute / 60):" + String(format: "%02d", minute % 60))
                        break
                    }
                }
            }
            evidence.append(
                Evidence(
                    .flight,
                    duration == nil
                        ? "flight in the description of a travel day"
                        : "flight in the description, as long as the item",
                    in: "DESCRIPTION",
                    text: "\(first.number.text) \(first.route.origin.code) → \(last.route.destination.code)"))
            findVetoes()
        }

        /// An all-day item's length in days (`nil`: a timed item).
        var allDayLength: Int? {
            guard input.duration == nil, case .date(let start)? = input.component.start else { return nil }
            guard case .date(let end)? = input.component.end else { return 1 }
            return Int(end.daysSinceEpoch - start.daysSinceEpoch)
        }

        /// A flight number in an agency itinerary: Sabre's `AIR LUFTHANSA   FLT:0400   ECONOMY` (the airline by
        /// name) or `FLT: LH 0400`, and Amadeus' `FLIGHT LH 0400 - LUFTHANSA` at the start of a line.
        private mutating func itineraryNumber() -> FlightNumber? {
            for field in fields.fields where field.key == "flt" || field.key.hasSuffix(" flt") {
                let value = TextTokens(field.value)
                if let found = flightNumber(in: value, property: "DESCRIPTION", labelled: true), found.known {
                    return found
                }
                guard field.key.hasPrefix("air "), let digits = value.tokens.first, digits.kind == .digits,
                    digits.text.count <= 4, let figure = Int(digits.text), figure > 0
                else { continue }
                let name = field.key.dropFirst(4).dropLast(4).split(whereSeparator: { !$0.isLetter && !$0.isNumber })
                    .map(String.init)
                guard let carrier = classifier.airlines.carrier(named: name), !carrier.isRail else { continue }
                let text = "\(carrier.name) FLT:\(digits.text)"
                evidence.append(Evidence(.fact, "flight number of \(carrier.name)", in: "DESCRIPTION", text: text))
                return FlightNumber(designator: carrier.designator, number: figure, text: text, known: true)
            }
            // The description's free text is read only when the summary says "flight" (it never makes an item a
            // flight by itself).
            guard keyword != nil else { return nil }
            for (_, tokens) in descriptionLines {
                guard let first = tokens.tokens.first, first.kind == .word, ["flight", "flt"].contains(first.folded),
                    tokens.at(1)?.kind != .colon,
                    let found = flightNumber(in: tokens, property: "DESCRIPTION"), found.known
                else { continue }
                return found
            }
            // "Alaska Airlines 84": the airline's name, then its number, alone on a line.
            for (line, tokens) in descriptionLines where line.count <= 60 {
                if let found = namedNumber(in: tokens, property: "DESCRIPTION") { return found }
            }
            // "British Airways BA 1442", "Icelandair FI 630": a line that names the airline, then its number.
            for (line, tokens) in descriptionLines where line.count <= 80 {
                let words = tokens.tokens.prefix { $0.kind == .word }.map(\.folded)
                guard !words.isEmpty, let found = flightNumber(in: tokens, property: "DESCRIPTION"), found.known,
                    (1...min(4, words.count)).contains(where: {
                        classifier.airlines.carrier(named: Array(words.prefix($0)))?.designator == found.designator
                            || classifier.airlines.carrier(firstWord: words[0])?.designator == found.designator
                    })
                else { continue }
                return found
            }
            return nil
        }

        /// A number after an airline's name: "Delta Air Lines Flight 1234", "Southwest 1234".
        private mutating func namedNumber(in tokens: TextTokens, property: String = "SUMMARY") -> FlightNumber? {
            guard tokens.tokens.contains(where: { $0.kind == .digits }) else { return nil }
            let words = tokens.tokens.map(\.folded)
            for start in words.indices {
                for length in stride(from: 4, through: 1, by: -1) where start + length <= words.count {
                    let name = Array(words[start..<start + length])
                    // "United 925 Washington Dulles → London": a common first word names its airline only where the
                    // text already says flight.
                    let saysFlight = keyword != nil || tokens.tokens.contains { $0.kind == .arrow }
                    guard
                        let carrier = classifier.airlines.carrier(named: name)
                            ?? (saysFlight && length == 1 ? classifier.airlines.carrier(firstWord: name[0]) : nil)
                    else { continue }
                    var next = start + length
                    if next < words.count, FlightClassifier.flightWords.contains(words[next]) { next += 1 }
                    if next < words.count, ["number", "no", "nr", "num"].contains(words[next]) { next += 1 }
                    if next < words.count, tokens[next].kind == .punctuation, tokens[next].text == "." { next += 1 }
                    if next < words.count, tokens[next].kind == .other, tokens[next].text == "#" { next += 1 }
                    guard next < tokens.count, tokens[next].kind == .digits, tokens[next].text.count <= 4,
                        let value = Int(tokens[next].text), value > 0, !carrier.isRail,
                        !(tokens.at(next + 1).map {
                            // "5-10" is a range; "1350 - Lisbon to Porto" is a route after the number.
                            FlightClassifier.quantityWords.contains($0.folded) || ($0.kind == .dash && !$0.spaceBefore)
                        }
                            ?? false)
                    else { continue }
                    let text = tokens.tokens[start...next].map(\.text).joined(separator: " ")
                    evidence.append(Evidence(.flight, "flight number of \(carrier.name)", in: property, text: text))
                    return FlightNumber(designator: carrier.designator, number: value, text: text, known: true)
                }
            }
            return nil
        }

        /// The first flight number in `tokens`: `BA286`, `BA 286`, `U2 1234`, `6E2013`, `LH0400`, or after a
        /// flight word also `LH-400`.
        private mutating func flightNumber(in tokens: TextTokens, property: String, labelled: Bool = false)
            -> FlightNumber?
        {
            var unknown: FlightNumber?
            for index in tokens.tokens.indices {
                let token = tokens[index]
                let previous = tokens.at(index - 1)
                if let previous, FlightClassifier.numberContexts.contains(previous.folded), !labelled,
                    !(FlightClassifier.flightWords.contains(previous.folded) && token.isUpper && token.kind != .digits)
                {
                    continue
                }
                if let previous, previous.kind == .other, previous.text == "#" { continue }
                // "OK 5012편", "CA 41便": a number with a counter word says flight as a flight word would.
                let counted = tokens.at(index + 1).flatMap(Self.countedNumber)
                let afterKeyword =
                    labelled || counted != nil
                    || (previous.map { FlightClassifier.flightWords.contains($0.folded) || $0.isPlane } ?? false)
                var candidate: (String, Substring, String)?
                // "LH252便": the number without its counter word.
                let core =
                    token.kind == .mixed
                    ? FlightClassifier.numberCounters.first { token.text.hasSuffix($0) }.map {
                        token.text.dropLast($0.count)
                    } ?? token.text : token.text
                if token.kind == .mixed, core.count >= 3, core.count <= 7,
                    core.allSatisfy({ !$0.isLetter || $0.isUppercase })
                {
                    let designator = core.prefix(2)
                    let digits = core.dropFirst(2)
                    if designator.contains(where: \.isLetter), digits.allSatisfy(\.isNumber), !digits.isEmpty,
                        digits.count <= 4
                    {
                        candidate = (String(designator), digits, String(core))
                    }
                } else if token.kind == .word, token.text.count == 3, token.isUpper, afterKeyword,
                    let carrier = classifier.airlines.carrier(icao: token.text), let next = tokens.at(index + 1),
                    next.kind == .digits, next.text.count <= 4
                {
                    // "Flight DLH 400": an ICAO designator, after a flight word only ("KLM 2027" is a year).
                    candidate = (carrier.designator, next.text, "\(token.text) \(next.text)")
                } else if token.kind == .word || token.kind == .mixed, token.text.count == 2, token.isUpper,
                    let next = tokens.at(index + 1), let digits = next.kind == .digits ? next.text : counted,
                    digits.count <= 4
                {
                    if next.spaceBefore || afterKeyword {
                        candidate = (String(token.text), digits, "\(token.text) \(digits)")
                    }
                } else if token.kind == .word || token.kind == .mixed, token.text.count == 2, token.isUpper,
                    afterKeyword, let dash = tokens.at(index + 1), dash.kind == .dash, !dash.spaceBefore,
                    let next = tokens.at(index + 2), next.kind == .digits, next.text.count <= 4, !next.spaceBefore
                {
                    candidate = (String(token.text), next.text, "\(token.text)-\(next.text)")
                }
                // "EZY8653", "DLH400": an ICAO designator glued to its number stands for the IATA one.
                if candidate == nil, token.kind == .mixed, (4...7).contains(token.text.count), token.isUpper,
                    token.text.prefix(3).allSatisfy(\.isLetter), token.text.dropFirst(3).allSatisfy(\.isNumber),
                    let carrier = classifier.airlines.carrier(icao: token.text.prefix(3))
                {
                    candidate = (carrier.designator, token.text.dropFirst(3), String(token.text))
                }
                guard let (designator, digits, text) = candidate, let value = Int(digits), value > 0 else { continue }
                // "AB-1234" is an issue key, "10 EUR" a price: a number glued to a dash, or followed by a
                // currency or unit, is not a flight.
                let after = tokens.at(index + (text.contains(" ") || text.contains("-") ? 2 : 1))
                if let after, !after.spaceBefore, after.kind == .dash, !afterKeyword { continue }
                if let after, FlightClassifier.currencies.contains(after.folded) { continue }
                if let after, FlightClassifier.quantityWords.contains(after.folded) { continue }
                // "BA1 1LN", "CR2 6XH": a British postcode's two halves, not flight BA 1.
                if !afterKeyword, !text.contains(" "), let after, after.spaceBefore, after.kind == .mixed,
                    after.text.count == 3, after.text.first?.isNumber == true,
                    after.text.dropFirst().allSatisfy({ $0.isUppercase })
                {
                    continue
                }
                if !afterKeyword, text.contains(" "), FlightClassifier.wordLikeDesignators.contains(designator) {
                    // "AT 10", "DE 2024": a word and a number, unless a flight word or a route says otherwise.
                    if unknown == nil {
                        unknown = FlightNumber(designator: designator, number: value, text: text, known: false)
                    }
                    continue
                }
                guard let carrier = classifier.airlines.carrier(designator) else {
                    if unknown == nil && afterKeyword {
                        unknown = FlightNumber(designator: designator, number: value, text: text, known: false)
                    }
                    continue
                }
                if carrier.isRail {
                    veto = "train (\(carrier.name) sells rail seats under \(designator))"
                    evidence.append(Evidence(.notFlight, "rail designator", in: property, text: text))
                    return nil
                }
                evidence.append(Evidence(.flight, "flight number of \(carrier.name)", in: property, text: text))
                return FlightNumber(designator: designator, number: value, text: text, known: true)
            }
            return unknown
        }

        private mutating func findRoute() {
            // "Rail&Fly: ICE 513 Köln → FRA, dann LH 402 FRA → EWR": of a summary's routes, the one after the
            // flight number is the flight's.
            let afterNumber = number.flatMap { number in
                input.summary.range(of: number.text).map {
                    TextTokens(TextTokens.withoutLinks(String(input.summary[$0.upperBound...])))
                }
            }
            for (property, tokens) in [("SUMMARY", afterNumber), ("SUMMARY", summary), ("LOCATION", location)] {
                if let tokens, let found = route(in: tokens) {
                    route = found
                    evidence.append(
                        Evidence(
                            .flight, "route between two airports", in: property,
                            text: "\(found.origin.code) → \(found.destination.code)"))
                    break
                }
            }
            // "DL 1576 ATL MSY": two airport codes side by side after a flight number.
            if route == nil, let number, number.known, let after = afterNumber {
                let words = after.tokens.prefix(3)
                if words.count >= 2,
                    words.prefix(2).allSatisfy({ $0.kind == .word && $0.text.count == 3 && $0.isUpper }),
                    !words.prefix(2).contains(where: { FlightClassifier.commonCodes.contains(String($0.text)) }),
                    let origin = classifier.airports.airport(words[words.startIndex].text),
                    let destination = classifier.airports.airport(words[words.startIndex + 1].text),
                    origin.code != destination.code
                {
                    route = (origin, destination)
                    evidence.append(
                        Evidence(
                            .flight, "route between two airports", in: "SUMMARY",
                            text: "\(origin.code) \(destination.code)"))
                }
            }
            // "LH400 FRAJFK": a reservation system's city pair, six capitals beside a flight number.
            if route == nil, number != nil {
                for token in summary.tokens where token.kind == .word && token.text.count == 6 && token.isUpper {
                    let text = token.text
                    let middle = text.index(text.startIndex, offsetBy: 3)
                    if let origin = classifier.airports.airport(text[..<middle]),
                        let destination = classifier.airports.airport(text[middle...]), origin.code != destination.code
                    {
                        route = (origin, destination)
                        evidence.append(
                            Evidence(
                                .flight, "route between two airports (a city pair)", in: "SUMMARY", text: String(text)))
                        break
                    }
                }
            }
            // A route in the description, and the number on its line: "United Airlines UA 1234 ORD → DEN" (also
            // when the summary gave the route in words and no number).
            if (route == nil && (keyword != nil || number != nil)) || (route != nil && number == nil && keyword != nil)
            {
                for (_, tokens) in descriptionLines {
                    if let found = route(in: tokens) {
                        guard route == nil else {
                            if let found = flightNumber(in: tokens, property: "DESCRIPTION"), found.known {
                                number = found
                            }
                            break
                        }
                        route = found
                        // "United Airlines UA 1234 ORD → DEN": the number on the route's line is the flight's.
                        if number == nil, let found = flightNumber(in: tokens, property: "DESCRIPTION"), found.known {
                            number = found
                        }
                        evidence.append(
                            Evidence(
                                .fact, "route in the description", in: "DESCRIPTION",
                                text: "\(found.origin.code) → \(found.destination.code)"))
                        break
                    }
                }
            }
            // "Bangkok (BKK) - Chiang Mai (CNX)" with "Thai Airways TG 102" below, as agencies write it: the summary
            // names the airports, the description the flight; its first known number on a line of its own is it.
            if route != nil, number == nil {
                for (_, tokens) in descriptionLines.prefix(12) {
                    if let found = flightNumber(in: tokens, property: "DESCRIPTION"), found.known {
                        number = found
                        break
                    }
                }
            }
            // "Ryanair FR 169 London to Munich" at "London Stansted Airport": the route named the city, the location
            // names its airport.
            // ("Paris Orly Airport (ORY)": its code in brackets says so too.)
            if let found = route, !summary.tokens.contains(where: { $0.text == found.origin.code }),
                let located = namedAirport(location) ?? bracketedAirport(location), located.code != found.origin.code,
                AirportDatabase.fold(located.city) == AirportDatabase.fold(found.origin.city)
                    || classifier.airports.airports(inCity: found.origin.city).contains(located)
            {
                route = (located, found.destination)
            }
            // Origin: the location (Google writes "San Francisco SFO", TripIt "San Francisco (SFO)"), else a
            // labelled field; destination: a labelled field, else "to <city>" in the summary.
            if route == nil {
                // A labelled city ("Departure: London") gives way to the airport the location names in it ("London
                // Gatwick Airport"): the airport written beats the city's main one.
                let labelled = labelledAirport(FlightClassifier.originLabels)
                let located = airportIn(location, property: "LOCATION") ?? namedAirport(location)
                if let labelled, let located, AirportDatabase.fold(labelled.city) == AirportDatabase.fold(located.city)
                {
                    origin = located
                } else if let airport = labelled ?? located {
                    origin = airport
                }
                if let airport = labelledAirport(FlightClassifier.destinationLabels) {
                    destination = airport
                } else if let airport = codeAfter(FlightClassifier.toWords, in: summary) {
                    destination = airport
                } else if let city = cityAfter(FlightClassifier.toWords, in: summary) {
                    destinationCity = city
                } else if let city = boundFor(in: summary) {
                    destinationCity = city
                } else if origin == nil, let airport = airportIn(summary, property: "SUMMARY") {
                    // "✈ LHR" or "Flight (LHR)": one airport in the summary is where the flight goes.
                    destination = airport
                }
                if origin == nil, let airport = codeAfter(FlightClassifier.fromWords, in: summary) {
                    // "Trip to Boston: B6 1018 from JFK".
                    origin = airport
                }
                if origin == nil, let city = cityAfter(FlightClassifier.fromWords, in: summary) {
                    let words = city.split(separator: " ").count
                    let named = summary.tokens.indices.first {
                        summary[$0].kind == .word && FlightClassifier.fromWords.contains(summary[$0].folded)
                            && self.city(after: $0, in: summary) == city
                    }.flatMap { summary.at($0 + 1 + words) }.flatMap {
                        $0.kind == .word ? classifier.airports.airport(inCity: city, named: String($0.text)) : nil
                    }
                    origin = named ?? classifier.airports.airports(inCity: city).first
                }
                if keyword != nil || number != nil {
                    if origin == nil { origin = markedAirport(FlightClassifier.departureMarkers) }
                    if destination == nil && destinationCity == nil {
                        destination = markedAirport(FlightClassifier.arrivalMarkers)
                    }
                }
            }
        }

        /// The airport whose code a location gives in brackets: "Paris Orly Airport (ORY)".
        private func bracketedAirport(_ tokens: TextTokens) -> Airport? {
            for index in tokens.tokens.indices
            where tokens[index].kind == .word && tokens[index].text.count == 3 && tokens[index].isUpper
                && tokens.at(index - 1)?.kind == .open && tokens.at(index + 1)?.kind == .close
            {
                if let airport = classifier.airports.airport(tokens[index].text) { return airport }
            }
            return nil
        }

        /// A location that is only a city, or a city and the name of its airport ("London Heathrow", "Tokyo
        /// Haneda", "Frankfurt"), read when the summary says flight.
        private mutating func namedAirport(_ tokens: TextTokens) -> Airport? {
            guard keyword != nil || number != nil, (1...4).contains(tokens.count),
                tokens.tokens.allSatisfy({ $0.kind == .word })
            else { return nil }
            var words = tokens.tokens.map { String($0.text) }
            // "London Gatwick Airport": the airport word says nothing more.
            if words.count >= 2, FlightClassifier.airportWords.contains(AirportDatabase.fold(words.last!)) {
                words.removeLast()
            }
            let whole = words.joined(separator: " ")
            var found = classifier.airports.isCity(whole) ? classifier.airports.airports(inCity: whole).first : nil
            if found == nil, words.count >= 2 {
                let city = words.dropLast().joined(separator: " ")
                found = classifier.airports.airport(inCity: city, named: words.last!)
            }
            if let found { evidence.append(Evidence(.fact, "airport \(found.name)", in: "LOCATION", text: whole)) }
            return found
        }

        /// The airport after a marker word in a description line: "departing Geneva (GVA)", Sabre's
        /// `LV SAN FRANCISCO SFO 1030A` (`LV` and `AR` only at the start of a line, in capitals). Of the codes within
        /// six words, one in brackets, else one its own city names, else the last.
        private mutating func markedAirport(_ markers: Set<String>) -> Airport? {
            for (line, tokens) in descriptionLines {
                for index in tokens.tokens.indices {
                    let marker = tokens[index]
                    guard marker.kind == .word, markers.contains(marker.folded),
                        marker.folded.count > 2 || (index == 0 && marker.isUpper)
                    else { continue }
                    var found: [(airport: Airport, bracketed: Bool, named: Bool)] = []
                    var at = index + 1
                    if tokens.at(at)?.kind == .colon { at += 1 }
                    while let token = tokens.at(at), at - index <= 7,
                        (token.kind != .digits && token.kind != .mixed) || Self.isGDSTime(token)
                    {
                        if token.kind == .word, token.text.count == 3, token.isUpper,
                            let airport = classifier.airports.airport(token.text)
                        {
                            let bracketed = tokens.at(at - 1)?.kind == .open
                            let named =
                                city(before: at - (bracketed ? 1 : 0), in: tokens).map {
                                    classifier.airports.airports(inCity: $0).contains(airport)
                                        || AirportDatabase.fold($0) == AirportDatabase.fold(airport.city)
                                } ?? false
                            found.append((airport, bracketed, named))
                        }
                        at += 1
                    }
                    guard let chosen = found.first(where: \.bracketed) ?? found.first(where: \.named) ?? found.last
                    else { continue }
                    evidence.append(
                        Evidence(.fact, "airport \(chosen.airport.name)", in: "DESCRIPTION", text: String(line)))
                    return chosen.airport
                }
            }
            return nil
        }

        /// `FRA-JFK`, `SFO to EWR`, `MUC → LIS`, `Frankfurt (FRA) – New York (JFK)`, `London ✈ Paris`.
        private func route(in tokens: TextTokens, strong: Bool = false) -> (origin: Airport, destination: Airport)? {
            let strong = strong || keyword != nil || number != nil
            for index in tokens.tokens.indices {
                let separator = tokens[index]
                let joins =
                    separator.kind == .dash || separator.kind == .arrow || separator.kind == .slash
                    || (separator.kind == .word && FlightClassifier.routeWords.contains(separator.folded))
                guard joins else { continue }
                guard let left = code(before: index, in: tokens), let right = code(after: index, in: tokens),
                    left.code != right.code
                else {
                    // Cities on both sides of an arrow or plane ("Frankfurt → New York"), or of a dash or "to" when a
                    // flight word or number says it is a flight ("Vuelo IB 3011 Madrid – Lisboa", "Icelandair Flight
                    // Number 13: Boston to Atlanta"); the origin may be named by its airport ("London Heathrow").
                    // A code on one side and a city on the other counts too ("AA 100 New York JFK - London
                    // Heathrow"), and so does a slash ("LH 400 FRANKFURT/NEW YORK").
                    let joinsCities =
                        separator.kind == .arrow
                        || (strong
                            && (separator.kind == .dash || separator.kind == .slash
                                || (separator.kind == .word && FlightClassifier.routeWords.contains(separator.folded))))
                    let leftCode = code(before: index, in: tokens)
                    let leftCity = leftCode == nil ? originCity(before: index, in: tokens) : nil
                    let glued = separator.kind == .dash && !separator.spaceBefore
                    // "Budapest - Luton": an airport known by its own name stands for its city ("Paris-Orly", glued,
                    // is one name).
                    let rightNamed = tokens.at(index + 1).flatMap {
                        $0.kind == .word && !glued ? classifier.airports.airport(named: String($0.text)) : nil
                    }
                    // "Heathrow to JFK", "Madrid → CDG": an airport's name or a city on the left, a code on the right.
                    // ("Paris-Orly (ORY)", glued, is one name; "NEW YORK" is no code.)
                    if joinsCities, !glued, leftCode == nil, let leftCity,
                        let rightCode = code(after: index, in: tokens),
                        !FlightClassifier.commonCodes.contains(rightCode.code),
                        let named = leftCity.1 ?? classifier.airports.airports(inCity: leftCity.0).first,
                        named.code != rightCode.code
                    {
                        return (named, rightCode)
                    }
                    if joinsCities, leftCode != nil || leftCity != nil,
                        let right = city(after: index, in: tokens) ?? rightNamed?.city
                    {
                        let origin =
                            leftCode ?? leftCity?.1
                            ?? leftCity.flatMap { classifier.airports.airports(inCity: $0.0).first }
                        // "London Luton": a word after the city that names one of its airports.
                        let rightWords = right.split(separator: " ").count
                        let qualifier = tokens.at(index + 1 + rightWords).flatMap {
                            $0.kind == .word ? classifier.airports.airport(inCity: right, named: String($0.text)) : nil
                        }
                        let destination =
                            qualifier ?? rightNamed
                            ?? origin.flatMap {
                                classifier.airports.airports(inCity: right, from: $0, duration: input.duration).first
                            }
                        if let origin, let destination, origin.code != destination.code {
                            return (origin, destination)
                        }
                    }
                    continue
                }
                if !strong,
                    FlightClassifier.commonCodes.contains(left.code)
                        || FlightClassifier.commonCodes.contains(right.code)
                {
                    continue
                }
                // A slash or a bare "to" between codes needs a flight word or number: "SFO/LHR office".
                if !strong, separator.kind == .slash { continue }
                // "FRA-SIN-SYD": the trip ends at the last code of the chain.
                var destination = right
                var next = index + 2
                while let more = tokens.at(next), more.kind == .dash || more.kind == .arrow,
                    let further = code(after: next, in: tokens), further.code != destination.code
                {
                    destination = further
                    next += 2
                }
                return (left, destination)
            }
            return nil
        }

        /// An airport code just before `index`, possibly in parentheses or followed by a time: `FRA`, `(FRA)`,
        /// `Frankfurt (FRA)`, `CDG 10:30`.
        private func code(before index: Int, in tokens: TextTokens) -> Airport? {
            var at = index - 1
            if tokens.at(at)?.kind == .word, ["am", "pm", "h", "uhr"].contains(tokens[at].folded) { at -= 1 }
            // "CDG 10:30 →", "CDG 10.30 →", "CDG 10h30 →".
            if tokens.at(at)?.kind == .digits, tokens.at(at - 1)?.kind == .colon || tokens.at(at - 1)?.text == ".",
                tokens.at(at - 2)?.kind == .digits
            {
                at -= 3
            } else if let time = tokens.at(at), time.kind == .mixed, Self.clockTime(time, nil, nil) != nil {
                at -= 1
            }
            // "Bengaluru (BLR) T1 →": the terminal the flight leaves from.
            if let terminal = tokens.at(at), terminal.kind == .mixed, terminal.text.count <= 3,
                terminal.text.first == "T", terminal.text.dropFirst().first?.isNumber == true
            {
                at -= 1
            }
            if tokens.at(at)?.kind == .close { at -= 1 }
            guard let token = tokens.at(at) else { return nil }
            return airportCode(token, beside: tokens.at(index))
        }

        /// A token that is an airport code: three capitals, or after a flight word also three small letters
        /// glued to a dash or arrow ("flight sfo-jfk").
        private func airportCode(_ token: TextTokens.Token, beside separator: TextTokens.Token?) -> Airport? {
            guard token.kind == .word, token.text.count == 3 else { return nil }
            if token.isUpper { return classifier.airports.airport(token.text) }
            guard keyword != nil, let separator, separator.kind == .dash || separator.kind == .arrow,
                token.text.allSatisfy(\.isLowercase)
            else { return nil }
            return classifier.airports.airport(token.text.uppercased())
        }

        private func code(after index: Int, in tokens: TextTokens) -> Airport? {
            var at = index + 1
            if tokens.at(at)?.kind == .open { at += 1 }
            if let token = tokens.at(at), let airport = airportCode(token, beside: tokens.at(index)) { return airport }
            // "Frankfurt (FRA) – New York (JFK)": the code follows the city, or an airport's whole name ("to
            // Licenciado Benito Juarez International Airport (MEX)", as British Airways writes it).
            var look = at
            while let token = tokens.at(look), token.kind == .word, look - at < 7 {
                if token.text.count == 3, token.isUpper, let airport = classifier.airports.airport(token.text) {
                    return airport
                }
                look += 1
                if tokens.at(look)?.kind == .open { look += 1 }
            }
            return nil
        }

        /// The city before a route's separator, and the airport when a word after the city names it ("London
        /// Heathrow →").
        private func originCity(before index: Int, in tokens: TextTokens) -> (String, Airport?)? {
            if let name = city(before: index, in: tokens) { return (name, nil) }
            if let word = tokens.at(index - 1), word.kind == .word,
                let airport = classifier.airports.airport(named: String(word.text))
            {
                return (airport.city, airport)
            }
            guard let qualifier = tokens.at(index - 1), qualifier.kind == .word,
                let name = city(before: index - 1, in: tokens),
                let airport = classifier.airports.airport(inCity: name, named: String(qualifier.text))
            else { return nil }
            return (name, airport)
        }

        /// Up to five words before `index` naming a city with an airport, longest first ("Thành phố Hồ Chí Minh").
        private func city(before index: Int, in tokens: TextTokens) -> String? {
            for length in stride(from: 5, through: 1, by: -1) where index - length >= 0 {
                let words = (index - length..<index).map { tokens[$0] }
                guard words.allSatisfy({ $0.kind == .word }) else { continue }
                let name = words.map { String($0.text) }.joined(separator: " ")
                if classifier.airports.isCity(name) { return name }
            }
            return nil
        }

        private func city(after index: Int, in tokens: TextTokens) -> String? {
            for length in stride(from: 5, through: 1, by: -1) where index + length < tokens.count {
                let words = (index + 1...index + length).map { tokens[$0] }
                guard words.allSatisfy({ $0.kind == .word }) else { continue }
                let name = words.map { String($0.text) }.joined(separator: " ")
                if classifier.airports.isCity(name) { return name }
            }
            return nil
        }

        /// The airport code after "to"/"nach"/… in `tokens`: "Flight to AMS", and after a flight word also
        /// "flight to ams".
        private func codeAfter(_ words: Set<String>, in tokens: TextTokens) -> Airport? {
            for index in tokens.tokens.indices where tokens[index].kind == .word && words.contains(tokens[index].folded)
            {
                // "to London STN": a city, then the code of the airport meant, which decides.
                if let next = tokens.at(index + 1), next.kind == .word, !(next.text.count == 3 && next.isUpper),
                    let airport = code(after: index, in: tokens), !FlightClassifier.commonCodes.contains(airport.code)
                {
                    return airport
                }
                guard let next = tokens.at(index + 1), next.kind == .word, next.text.count == 3 else { continue }
                if next.isUpper, !FlightClassifier.commonCodes.contains(String(next.text)) {
                    return classifier.airports.airport(next.text)
                }
                // Small letters only as the summary's last word: "flight to see grandma" is not Gillespie Field.
                let last = tokens.at(index + 2).map { $0.kind != .word && $0.kind != .mixed } ?? true
                let code = next.text.uppercased()
                if keyword != nil, last, next.text.allSatisfy(\.isLowercase),
                    !FlightClassifier.commonCodes.contains(code)
                {
                    return classifier.airports.airport(code)
                }
            }
            return nil
        }

        /// The city after "to"/"nach"/… in `tokens`: "Flight to London (BA 286)" → "London".
        private func cityAfter(_ words: Set<String>, in tokens: TextTokens) -> String? {
            for index in tokens.tokens.indices where tokens[index].kind == .word && words.contains(tokens[index].folded)
            {
                if let name = city(after: index, in: tokens) { return name }
            }
            return nil
        }

        /// An airport named in `tokens` with what confirms it is one: `(SFO)`, or the code after its own city
        /// (`San Francisco SFO`), or a code beside the word "airport".
        private mutating func airportIn(_ tokens: TextTokens, property: String) -> Airport? {
            let airportWord = tokens.tokens.contains {
                $0.kind == .word && FlightClassifier.airportWords.contains($0.folded)
            }
            for index in tokens.tokens.indices {
                let token = tokens[index]
                guard token.kind == .word, token.text.count == 3, token.isUpper,
                    let airport = classifier.airports.airport(token.text)
                else { continue }
                let parenthesized = tokens.at(index - 1)?.kind == .open && tokens.at(index + 1)?.kind == .close
                let cityBefore =
                    city(before: index - (tokens.at(index - 1)?.kind == .open ? 1 : 0), in: tokens)
                    .map {
                        AirportDatabase.fold($0) == AirportDatabase.fold(airport.city)
                            || classifier.airports.airports(inCity: $0).contains(airport)
                    } ?? false
                let common = FlightClassifier.commonCodes.contains(airport.code)
                if cityBefore || (parenthesized && !common) || (airportWord && !common)
                    || (!common && (keyword != nil || number != nil))
                {
                    evidence.append(Evidence(.fact, "airport \(airport.name)", in: property, text: String(token.text)))
                    return airport
                }
            }
            return nil
        }

        private mutating func labelledAirport(_ labels: Set<String>) -> Airport? {
            guard let value = fields.value(labels) else { return nil }
            let tokens = TextTokens(value)
            // "SAN FRANCISCO (SFO)", "NEW YORK (JFK)": the code in brackets, not a city's first word.
            let codes = tokens.tokens.indices.filter {
                tokens[$0].kind == .word && tokens[$0].text.count == 3 && tokens[$0].isUpper
            }
            let ordered =
                codes.filter { tokens.at($0 - 1)?.kind == .open }
                + codes.filter { !FlightClassifier.commonCodes.contains(String(tokens[$0].text)) } + codes
            for index in ordered {
                if let airport = classifier.airports.airport(tokens[index].text) {
                    evidence.append(Evidence(.fact, "labelled airport", in: "DESCRIPTION", text: value))
                    return airport
                }
            }
            // "From: Frankfurt" names a city.
            let words = tokens.tokens.prefix { $0.kind == .word }.prefix(3).map { String($0.text) }
            for length in stride(from: words.count, through: 1, by: -1) {
                if let airport = classifier.airports.airports(inCity: words.prefix(length).joined(separator: " ")).first
                {
                    evidence.append(Evidence(.fact, "labelled city", in: "DESCRIPTION", text: value))
                    return airport
                }
            }
            return nil
        }

        private mutating func findVetoes() {
            for (property, tokens) in [("SUMMARY", summary), ("LOCATION", location)] {
                let words = tokens.tokens.filter { $0.kind == .word || $0.kind == .mixed }
                let folded = words.map(\.folded)
                for (index, word) in folded.enumerated() {
                    // "ICE" is a train in capitals only ("ice cream" is not).
                    if word == "ice" && !words[index].isUpper { continue }
                    if let what = FlightClassifier.groundWords[word]
                        ?? (keyword != nil ? FlightClassifier.lessonWords[word] : nil)
                    {
                        return vetoed(what, property: property, text: String(words[index].text))
                    }
                    if words[index].text.utf8.contains(where: { $0 >= 0x80 }),
                        let (within, what) = FlightClassifier.groundWordsWithin.first(where: {
                            words[index].text.contains($0.0)
                        })
                    {
                        return vetoed(what, property: property, text: within)
                    }
                }
                for (first, second, what) in FlightClassifier.groundPhrases {
                    for index in folded.indices.dropLast() where folded[index] == first && folded[index + 1] == second {
                        return vetoed(what, property: property, text: "\(words[index].text) \(words[index + 1].text)")
                    }
                }
                if property == "SUMMARY" {
                    // "Anna's flight", "Mum’s flight": someone else's, to meet or see off.
                    for (index, word) in folded.enumerated().dropFirst()
                    where word == "s" && index + 1 < folded.count
                        && FlightClassifier.flightWords.contains(folded[index + 1])
                        && !FlightClassifier.ownPossessives.contains(folded[index - 1])
                    {
                        return vetoed(
                            "someone else's flight", property: property, text: "\(words[index - 1].text)'s flight")
                    }
                    // "Ben arrives AF 752 from Paris", "Oma landet LH 400": a person's arrival, to meet.
                    if folded.count > 2, FlightClassifier.arrivalVerbs.contains(folded[1]),
                        words[0].text.first?.isUppercase == true,
                        !words[0].isUpper, !FlightClassifier.flightWords.contains(folded[0]),
                        classifier.airlines.carrier(named: [folded[0]]) == nil
                    {
                        return vetoed(
                            "someone else's flight", property: property, text: "\(words[0].text) \(words[1].text)")
                    }
                    // "Book flights to Lisbon", "Flüge buchen": a verb before the flight word or right after it.
                    for (index, word) in folded.enumerated() where FlightClassifier.planningVerbs.contains(word) {
                        if folded[(index + 1)...].prefix(3).contains(where: FlightClassifier.flightWords.contains)
                            || (index > 0 && FlightClassifier.flightWords.contains(folded[index - 1]))
                        {
                            return vetoed("a task about flights", property: property, text: String(words[index].text))
                        }
                    }
                    if let price = priceText(tokens) { return vetoed("a price", property: property, text: price) }
                }
            }
        }

        private mutating func vetoed(_ what: String, property: String, text: String) {
            veto = what
            vetoText = property == "SUMMARY" ? text : nil
            evidence.append(Evidence(.notFlight, "veto: \(what)", in: property, text: text))
        }

        /// "ab 380 EUR", "€99", "from $420", "-30%".
        private func priceText(_ tokens: TextTokens) -> String? {
            for index in tokens.tokens.indices {
                let token = tokens[index]
                guard FlightClassifier.currencies.contains(token.folded) else { continue }
                if tokens.at(index - 1)?.kind == .digits || tokens.at(index + 1)?.kind == .digits {
                    return String(token.text)
                }
            }
            return nil
        }

        // MARK: Decision

        /// The evidence as the decision's features. `nil` when nothing hints at a flight.
        mutating func features() -> Set<FlightFeature>? {
            guard keyword != nil || number != nil || route != nil else { return nil }
            // "AS 331" is Alaska, not "as", when a route or a flight word says the item is a flight.
            if var found = number, !found.known, route != nil || keyword != nil,
                let carrier = classifier.airlines.carrier(found.designator), !carrier.isRail
            {
                found.known = true
                number = found
                evidence.append(Evidence(.flight, "flight number of \(carrier.name)", in: "SUMMARY", text: found.text))
            }
            var features: Set<FlightFeature> = []
            if keyword != nil { features.insert(.flightWord) }
            if let number {
                features.insert(number.known ? .knownNumber : .unknownNumber)
                // A one-digit number glued to its designator reads as a product ("PS5") more often than a flight;
                // "KL 2027 kick-off" is a year.
                if number.number < 10 && !number.text.contains(" ") { features.insert(.productLikeNumber) }
                if (1990...2099).contains(number.number) && number.text.contains(" ") {
                    features.insert(.yearLikeNumber)
                }
            }
            if route != nil {
                features.insert(.route)
            } else if origin != nil || destination != nil {
                features.insert(.airport)
            } else if destinationCity != nil {
                features.insert(.destinationCity)
            }
            labelledBooking = fields.value(FlightClassifier.bookingLabels).flatMap(Self.bookingCode)
            if labelledBooking != nil {
                features.insert(.bookingReference)
            }
            let words = summary.tokens.filter { $0.kind == .word || $0.kind == .mixed || $0.kind == .digits }
            if words.count > 6 { features.insert(.wordy) }
            if words.count > 10 { features.insert(.veryWordy) }
            if words.contains(where: { FlightClassifier.meetingWords.contains($0.folded) }) {
                features.insert(.workWord)
            }
            if let leg = laterLeg() {
                // The ground words are about the way to the airport, not the trip: they no longer count against it.
                features.insert(.flightAfterGroundLeg)
                evidence.append(Evidence(.flight, "a flight after the way to the airport", in: "SUMMARY", text: leg))
            } else if let veto {
                features.insert(FlightFeature.veto(veto))
            }
            let me = input.me ?? classifier.me
            let attendees = input.component.attendees
            if !me.isEmpty, !attendees.isEmpty, !attendees.contains(where: { me.contains($0.address) }) {
                features.insert(.othersInvited)
                evidence.append(
                    Evidence(
                        .notFlight, "attendees, and you are not one of them", in: "ATTENDEE",
                        text: attendees.prefix(3).map(\.address).joined(separator: ", ")))
            }
            guard let duration = input.duration else {
                // "Departs 13:25" in an all-day item: a flight whose time only its text gives.
                if let (minute, text) = departureInText() ?? legDeparture {
                    allDayDeparture = minute
                    evidence.append(
                        Evidence(.fact, "departure time of an all-day item", in: "DESCRIPTION", text: text))
                } else {
                    features.insert(.allDay)
                    evidence.append(
                        Evidence(.notFlight, "all-day item: no departure time", in: "DTSTART", text: "all day"))
                }
                return features
            }
            // The longest scheduled services with a stop (Sydney–London) take about 24 hours.
            if duration < 15 * 60 || duration > 30 * 3600 {
                features.insert(.impossibleDuration)
                evidence.append(
                    Evidence(.notFlight, "no flight lasts \(Int(duration / 60)) minutes", in: "DTEND", text: "duration")
                )
            }
            if let route {
                let distance = route.origin.distance(to: route.destination)
                let span = "\(Int(distance)) km in \(Int(duration / 60)) min"
                if distance / (duration / 3600) > 1100 {
                    features.insert(.tooFast)
                    evidence.append(
                        Evidence(.notFlight, "no airliner covers that distance in that time", in: "DTEND", text: span))
                } else if duration > 2 * route.origin.typicalFlightSeconds(to: route.destination) + 3600 {
                    features.insert(.tooSlow)
                    evidence.append(Evidence(.notFlight, "far too slow for a flight", in: "DTEND", text: span))
                }
                if distance < 50 {
                    features.insert(.shortHop)
                    evidence.append(Evidence(.notFlight, "airports too close for a flight", in: "SUMMARY", text: span))
                }
            }
            return features
        }

        /// The flight, or `nil` with the reason in `evidence`: the features weighed (each weight shown beside its
        /// evidence), then the sum against zero.
        mutating func result() -> FlightFacts? {
            guard var features = features() else { return nil }
            // No weight can make a flight of what no airliner could fly: a time that cannot cover the distance, or
            // far more than it needs, or none at all (an all-day item has no departure to plan for). Unless the
            // summary names the flight outright: then the times are what is wrong (an export's placeholder times, a
            // cancelled flight's, a travel day entered as all-day), not the flight.
            let implausible = features.intersection(FlightFeature.implausible)
            if !implausible.isEmpty {
                guard let named = namedOutright(features) else {
                    evidence.append(
                        Evidence(
                            .notFlight, "decision: not a flight", in: "DTEND",
                            text: implausible.map(\.rawValue).sorted().joined(separator: ", ")))
                    return nil
                }
                evidence.append(Evidence(.flight, "named outright, whatever its times say", in: "SUMMARY", text: named))
                features.subtract(implausible)
            }
            weighed = features
            let weights = classifier.weights
            let score = weights.score(features)
            weigh(features, weights)
            let sum = features.sorted { $0.rawValue < $1.rawValue }.map {
                String(format: "%@ %+.2f", $0.rawValue, weights.weight($0))
            }
            let verdict = Evidence(
                score > 0 ? .flight : .notFlight, "decision: \(score > 0 ? "a flight" : "not a flight")", in: "weights",
                text: String(format: "bias %+.2f, ", weights.bias) + sum.joined(separator: ", "))
            evidence.append(verdict.weighing(score))
            if let close = closeness(score, features, weights) { evidence.append(close) }
            guard score > 0 else { return nil }
            confidence = 1 / (1 + exp(-score))
            let inSummary = keyword != nil
            let placed = origin != nil || destination != nil
            var flight = FlightFacts(tier: route != nil || (placed && number != nil) ? 1 : inSummary ? 2 : 3)
            if let number, number.known || inSummary {
                flight.designator = number.designator
                flight.number = number.number
                flight.airline = classifier.airlines.carrier(number.designator)?.name
            }
            if let airline = fields.value(FlightClassifier.airlineLabels), flight.airline == nil {
                flight.airline = airline
            }
            flight.origin = route?.origin ?? origin
            flight.destination = route?.destination ?? destination
            if flight.destination == nil, let city = destinationCity {
                let candidates = classifier.airports.airports(
                    inCity: city, from: flight.origin, duration: input.duration ?? 0)
                flight.destination = candidates.first { $0.code != flight.origin?.code }
                if let airport = flight.destination {
                    evidence.append(
                        Evidence(
                            .fact, "destination city resolved to \(airport.code) (\(airport.name))",
                            in: "SUMMARY", text: city))
                }
            }
            flight.departureMinute = allDayDeparture
            extractDetails(into: &flight)
            return flight
        }

        /// "a close decision": a sum within `Evidence.closeMargin` of zero (a confidence between 0.18 and 0.82),
        /// with the piece of evidence that tipped it, the heaviest on the winning side.
        private func closeness(_ score: Double, _ features: Set<FlightFeature>, _ weights: FlightWeights) -> Evidence? {
            guard abs(score) < Evidence.closeMargin else { return nil }
            let tipping = features.filter { (weights.weight($0) > 0) == (score > 0) && weights.weight($0) != 0 }
                .max { (abs(weights.weight($0)), $1.rawValue) < (abs(weights.weight($1)), $0.rawValue) }
            let text =
                String(format: "%+.2f from zero, tipped by ", score)
                + (tipping.map { String(format: "%@ %+.2f", $0.rawValue, weights.weight($0)) }
                    ?? String(format: "the bias %+.2f", weights.bias))
            return Evidence(score > 0 ? .flight : .notFlight, Evidence.closeDecision, in: "weights", text: text)
        }

        /// A flight word, a known airline's number and where it flies (a route, or for an all-day item one end),
        /// with nothing against it: "Canceled: Flight LH 123 from FRA to EWR", "✈️ Lisbon – TP 1351 (LHR→LIS)".
        private func namedOutright(_ features: Set<FlightFeature>) -> String? {
            // (A travel day whose description holds the flight's number and route names it as well.)
            if legsInDescription, input.duration == nil, let number, let route, veto == nil {
                return "\(number.text) \(route.origin.code) → \(route.destination.code)"
            }
            guard let keyword, let number, number.known,
                route != nil || (origin != nil && destination != nil)
                    || (input.duration == nil && (origin != nil || destination != nil || destinationCity != nil)),
                !features.contains(where: { $0.rawValue.hasPrefix("veto-") }),
                features.isDisjoint(with: [.workWord, .othersInvited, .productLikeNumber, .yearLikeNumber])
            else { return nil }
            let ends = route.map { "\($0.origin.code) → \($0.destination.code)" } ?? ""
            return [keyword, number.text, ends].filter { !$0.isEmpty }.joined(separator: " ")
        }

        /// "Departs 13:25", "Abflug 7.05", "Departure: 21h40": a departure word, then a time, in the summary or the
        /// description's lines.
        private mutating func departureInText() -> (minute: Int, text: String)? {
            for tokens in [summary] + descriptionLines.map(\.tokens) {
                for index in tokens.tokens.indices
                where FlightClassifier.departureTimeWords.contains(tokens[index].folded) {
                    for at in index + 1...index + 3 {
                        guard let hour = tokens.at(at),
                            let time = Self.clockTime(hour, tokens.at(at + 1), tokens.at(at + 2))
                        else { continue }
                        return (time, "\(tokens[index].text) \(time / 60):\(String(format: "%02d", time % 60))")
                    }
                }
            }
            return nil
        }

        /// Whether `text` has two words of three capitals and a digit, as a line with a flight's number and route
        /// does: most descriptions have not, and are never cut into lines and tokens. Read on bytes.
        static func mayHoldRoute(_ text: String) -> Bool {
            var capitals = 0
            var codes = 0
            var digit = false
            var previousLetter = false
            for byte in text.utf8 {
                let capital = byte >= 65 && byte <= 90
                let letter = capital || (byte >= 97 && byte <= 122)
                if byte >= 48 && byte <= 57 { digit = true }
                if capital && (capitals > 0 || !previousLetter) {
                    capitals += 1
                } else {
                    if capitals == 3 && !letter { codes += 1 }
                    capitals = 0
                }
                if codes >= 2 && digit { return true }
                previousLetter = letter
            }
            return (codes + (capitals == 3 ? 1 : 0)) >= 2 && digit
        }

        /// A reservation system's time, before the airport's code on a Sabre line: `1130A`, `715P`, `1200N`.
        static func isGDSTime(_ token: TextTokens.Token) -> Bool {
            guard token.kind == .mixed, let last = token.text.last, "APNM".contains(last) else { return false }
            let digits = token.text.dropLast()
            return (3...4).contains(digits.count) && digits.allSatisfy(\.isNumber)
        }

        /// `13:25`, `7.05` (three tokens) or `21h40` (one): minutes after midnight.
        static func clockTime(_ first: TextTokens.Token, _ second: TextTokens.Token?, _ third: TextTokens.Token?)
            -> Int?
        {
            let hourText: Substring
            let minuteText: Substring
            if first.kind == .mixed,
                let h = first.text.firstIndex(where: { $0 == "h" || $0 == "H" || $0 == "時" || $0 == "时" || $0 == "시" })
            {
                // "21h40", "9時30分", "9시 30분" (the minutes' counter word dropped).
                let minutes = first.text[first.text.index(after: h)...]
                (hourText, minuteText) = (first.text[..<h], minutes.prefix { $0.isASCII && $0.isNumber })
                guard minutes.dropFirst(minuteText.count).allSatisfy({ $0 == "分" || $0 == "분" }) else { return nil }
            } else if first.kind == .digits, let second, second.text == ":" || second.text == ".",
                let third, third.kind == .digits, !second.spaceBefore, !third.spaceBefore
            {
                (hourText, minuteText) = (first.text, third.text)
            } else {
                return nil
            }
            guard (1...2).contains(hourText.count), minuteText.count == 2, let hour = Int(hourText),
                let minute = Int(minuteText), hour < 24, minute < 60
            else { return nil }
            return hour * 60 + minute
        }

        /// "Rail&Fly ICE to FRA, then LH 400 FRA-JFK": the veto's words come first, then a break (a comma, "then",
        /// "+"), then the flight number: the train is the way to the flight, not the trip.
        private func laterLeg() -> String? {
            // A way to travel (not "cargo", also ground): a train, a bus, a ferry, a taxi, a car.
            let ways: Set<String> = ["bus", "ferry", "taxi", "car"]
            guard let vetoText, let number, let veto, ways.contains(veto) || veto.hasPrefix("train") else { return nil }
            let text = input.summary
            guard let ground = text.range(of: vetoText), let flight = text.range(of: number.text),
                ground.upperBound <= flight.lowerBound
            else { return nil }
            let between = text[ground.upperBound..<flight.lowerBound].lowercased()
            let breaks = [",", ";", "+", " then ", " dann ", " puis ", " luego ", " poi ", " daarna ", " sedan "]
            guard breaks.contains(where: between.contains) else { return nil }
            return String(text[ground.lowerBound..<flight.upperBound])
        }

        /// Writes each feature's weight beside the evidence that raised it.
        private mutating func weigh(_ features: Set<FlightFeature>, _ weights: FlightWeights) {
            for feature in features {
                let raisedBy: (Evidence) -> Bool =
                    switch feature {
                    case .flightWord: { $0.rule == "flight word" }
                    case .knownNumber: { $0.rule.hasPrefix("flight number") }
                    case .flightAfterGroundLeg: { $0.rule.hasPrefix("a flight after") }
                    case .route: { $0.rule.hasPrefix("route") }
                    case .ground, .errand, .leisureFlying, .notTravel, .price, .task, .someoneElses, .claim,
                        .simulator, .virtualFlight:
                        { $0.rule.hasPrefix("veto") }
                    case .othersInvited: { $0.property == "ATTENDEE" }
                    case .allDay: { $0.property == "DTSTART" }
                    case .impossibleDuration: { $0.rule.hasPrefix("no flight lasts") }
                    case .tooFast: { $0.rule.hasPrefix("no airliner") }
                    case .tooSlow: { $0.rule.hasPrefix("far too slow") }
                    case .shortHop: { $0.rule.hasPrefix("airports too close") }
                    default: { _ in false }
                    }
                if let index = evidence.firstIndex(where: raisedBy) {
                    evidence[index] = evidence[index].weighing(weights.weight(feature))
                }
            }
        }

        private mutating func extractDetails(into flight: inout FlightFacts) {
            flight.bookingReference =
                labelledBooking
                ?? bookingWithNamedLabel() ?? bookingAfterWords()
            flight.terminal =
                fields.value(FlightClassifier.terminalLabels).flatMap(Self.shortCode)
                ?? afterWord(["terminal"], maxLength: 3) ?? shortTerminal()
            flight.gate =
                fields.value(FlightClassifier.gateLabels).flatMap(Self.shortCode)
                ?? afterWord(["gate", "flugsteig"], maxLength: 4)
            flight.seat =
                fields.value(FlightClassifier.seatLabels).flatMap(Self.seatCode)
                ?? afterWord(["seat", "sitzplatz", "sitz"], maxLength: 4).flatMap(Self.seatCode)
        }

        /// The digits of "5012편", "41便": a number and a counter word of Japanese, Korean or Chinese.
        static func countedNumber(_ token: TextTokens.Token) -> Substring? {
            guard token.kind == .mixed,
                let counter = FlightClassifier.numberCounters.first(where: { token.text.hasSuffix($0) })
            else { return nil }
            let digits = token.text.dropLast(counter.count)
            return !digits.isEmpty && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber) ? digits : nil
        }

        /// "ミュンヘン行きフライト", "이스탄불행 항공편", "飞往北京的航班": the city a flight is bound for, in text
        /// written without spaces.
        private func boundFor(in tokens: TextTokens) -> String? {
            for token in tokens.tokens where token.kind == .word || token.kind == .mixed {
                let text = String(token.text)
                for marker in FlightClassifier.boundForAfter {
                    if let range = text.range(of: marker), classifier.airports.isCity(String(text[..<range.lowerBound]))
                    {
                        return String(text[..<range.lowerBound])
                    }
                }
                for marker in FlightClassifier.boundForBefore {
                    guard let range = text.range(of: marker) else { continue }
                    let city = String(text[range.upperBound...].prefix { $0 != "的" && $0 != "の" })
                    if classifier.airports.isCity(city) { return city }
                }
            }
            return nil
        }

        /// "Frankfurt Airport T1", "LX 75 T5 ZRH-EDI": a terminal written as T and its number, in the location or
        /// the summary.
        private func shortTerminal() -> String? {
            for tokens in [location, summary] {
                for token in tokens.tokens where token.kind == .mixed && token.text.first == "T" {
                    let rest = token.text.dropFirst()
                    if (1...2).contains(rest.count), rest.first?.isNumber == true,
                        rest.allSatisfy({ $0.isNumber || $0.isUppercase })
                    {
                        return String(rest)
                    }
                }
            }
            return nil
        }

        /// A booking code under a label that names its issuer first: "Finnair booking reference: PX4K2M".
        private func bookingWithNamedLabel() -> String? {
            let labels = [
                "booking reference", "booking ref", "booking code", "confirmation code", "record locator",
                "confirmation",
                "reservation number", "reservation code",
            ]
            for field in fields.fields where labels.contains(where: { field.key.hasSuffix(" " + $0) }) {
                if let code = Self.bookingCode(field.value) { return code }
            }
            return nil
        }

        /// A booking code after its words without a colon: "Confirmation 4PQDVS", "PNR USVYRL".
        private func bookingAfterWords() -> String? {
            for text in [input.summary, input.description] where !text.isEmpty {
                let tokens = TextTokens(text)
                let folded = tokens.tokens.map(\.folded)
                for (words, strong) in FlightClassifier.bookingWords {
                    for start in folded.indices where folded[start...].starts(with: words) {
                        guard let next = tokens.at(start + words.count), next.kind != .colon,
                            let code = Self.bookingCode(String(next.text)), strong || code.contains(where: \.isNumber)
                        else { continue }
                        return code
                    }
                }
            }
            return nil
        }

        /// The short code after a word in the summary, location or description: "Terminal 2E", "Gate B12".
        private func afterWord(_ words: Set<String>, maxLength: Int) -> String? {
            for text in [input.summary, input.location, input.description] where !text.isEmpty {
                let tokens = TextTokens(text)
                for index in tokens.tokens.indices where words.contains(tokens[index].folded) {
                    if let next = tokens.at(index + 1), next.kind != .colon,
                        let code = Self.shortCode(String(next.text)),
                        code.count <= maxLength
                    {
                        return code
                    }
                }
            }
            return nil
        }

        /// A labelled value's first word: "5 (arrivals)" → "5".
        static func firstWord(of value: String) -> String {
            value.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ";" || $0 == "(" }).first.map(String.init)
                ?? ""
        }

        /// `1`, `2E`, `B12`, `A`: a terminal or gate.
        static func shortCode(_ value: String) -> String? {
            let first = firstWord(of: value)
            guard !first.isEmpty, first.count <= 4, first.allSatisfy({ $0.isLetter || $0.isNumber }),
                first.contains(where: \.isNumber) || first.count == 1
            else { return nil }
            return first.uppercased()
        }

        /// `14A`.
        static func seatCode(_ value: String) -> String? {
            let first = firstWord(of: value)
            guard (2...4).contains(first.count), first.last?.isLetter == true,
                first.dropLast().allSatisfy(\.isNumber)
            else { return nil }
            return first.uppercased()
        }

        /// `ABC123`: 5 to 8 letters and digits, upper case.
        static func bookingCode(_ value: String) -> String? {
            let first = firstWord(of: value)
            guard (5...8).contains(first.count), first.allSatisfy({ ($0.isLetter && $0.isUppercase) || $0.isNumber })
            else { return nil }
            return first
        }
    }
}
