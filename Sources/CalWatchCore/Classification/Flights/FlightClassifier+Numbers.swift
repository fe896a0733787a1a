import Foundation

/// The first signals: the flight word, the flight number (in the summary, a label, an itinerary in the description) and the legs a description lists.
extension FlightClassifier.Scan {
    mutating func findKeyword() {
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

    mutating func findNumber() {
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
    mutating func findLegsInDescription() {
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
    mutating func itineraryNumber() -> FlightNumber? {
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
    mutating func namedNumber(in tokens: TextTokens, property: String = "SUMMARY") -> FlightNumber? {
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
    mutating func flightNumber(in tokens: TextTokens, property: String, labelled: Bool = false)
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
}
