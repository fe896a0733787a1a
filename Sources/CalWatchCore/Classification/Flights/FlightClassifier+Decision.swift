import Foundation

/// Vetoes, the features weighed, the decision and its closeness, and the details a flight carries (terminal, gate, seat, booking).
extension FlightClassifier.Scan {
    mutating func findVetoes() {
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

    mutating func vetoed(_ what: String, property: String, text: String) {
        veto = what
        vetoText = property == "SUMMARY" ? text : nil
        evidence.append(Evidence(.notFlight, "veto: \(what)", in: property, text: text))
    }

    /// "ab 380 EUR", "€99", "from $420", "-30%".
    func priceText(_ tokens: TextTokens) -> String? {
        for index in tokens.tokens.indices {
            let token = tokens[index]
            guard FlightClassifier.currencies.contains(token.folded) else { continue }
            if tokens.at(index - 1)?.kind == .digits || tokens.at(index + 1)?.kind == .digits {
                return String(token.text)
            }
        }
        return nil
    }

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
    func closeness(_ score: Double, _ features: Set<FlightFeature>, _ weights: FlightWeights) -> Evidence? {
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
    func namedOutright(_ features: Set<FlightFeature>) -> String? {
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
    mutating func departureInText() -> (minute: Int, text: String)? {
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
    func laterLeg() -> String? {
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
    mutating func weigh(_ features: Set<FlightFeature>, _ weights: FlightWeights) {
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

    mutating func extractDetails(into flight: inout FlightFacts) {
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
    func boundFor(in tokens: TextTokens) -> String? {
        for token in tokens.tokens where token.kind == .word || token.kind == .mixed {
            let text = String(token.text)
            for marker in FlightClassifier.boundForAfter {
                if let range = text.range(of: marker), classifier.airports.isCity(String(text[..<range.lowerBound])) {
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
    func shortTerminal() -> String? {
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
    func bookingWithNamedLabel() -> String? {
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
    func bookingAfterWords() -> String? {
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
    func afterWord(_ words: Set<String>, maxLength: Int) -> String? {
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
