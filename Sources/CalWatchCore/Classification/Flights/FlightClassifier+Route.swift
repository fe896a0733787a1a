import Foundation

/// The route: airports by code, by name and by city, on either side of a route word or a label.
extension FlightClassifier.Scan {
    mutating func findRoute() {
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
        if (route == nil && (keyword != nil || number != nil)) || (route != nil && number == nil && keyword != nil) {
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
            if let labelled, let located, AirportDatabase.fold(labelled.city) == AirportDatabase.fold(located.city) {
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
    func bracketedAirport(_ tokens: TextTokens) -> Airport? {
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
    mutating func namedAirport(_ tokens: TextTokens) -> Airport? {
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
    mutating func markedAirport(_ markers: Set<String>) -> Airport? {
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
    func route(in tokens: TextTokens, strong: Bool = false) -> (origin: Airport, destination: Airport)? {
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
    func code(before index: Int, in tokens: TextTokens) -> Airport? {
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
    func airportCode(_ token: TextTokens.Token, beside separator: TextTokens.Token?) -> Airport? {
        guard token.kind == .word, token.text.count == 3 else { return nil }
        if token.isUpper { return classifier.airports.airport(token.text) }
        guard keyword != nil, let separator, separator.kind == .dash || separator.kind == .arrow,
            token.text.allSatisfy(\.isLowercase)
        else { return nil }
        return classifier.airports.airport(token.text.uppercased())
    }

    func code(after index: Int, in tokens: TextTokens) -> Airport? {
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
    func originCity(before index: Int, in tokens: TextTokens) -> (String, Airport?)? {
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
    func city(before index: Int, in tokens: TextTokens) -> String? {
        for length in stride(from: 5, through: 1, by: -1) where index - length >= 0 {
            let words = (index - length..<index).map { tokens[$0] }
            guard words.allSatisfy({ $0.kind == .word }) else { continue }
            let name = words.map { String($0.text) }.joined(separator: " ")
            if classifier.airports.isCity(name) { return name }
        }
        return nil
    }

    func city(after index: Int, in tokens: TextTokens) -> String? {
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
    func codeAfter(_ words: Set<String>, in tokens: TextTokens) -> Airport? {
        for index in tokens.tokens.indices where tokens[index].kind == .word && words.contains(tokens[index].folded) {
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
    func cityAfter(_ words: Set<String>, in tokens: TextTokens) -> String? {
        for index in tokens.tokens.indices where tokens[index].kind == .word && words.contains(tokens[index].folded) {
            if let name = city(after: index, in: tokens) { return name }
        }
        return nil
    }

    /// An airport named in `tokens` with what confirms it is one: `(SFO)`, or the code after its own city
    /// (`San Francisco SFO`), or a code beside the word "airport".
    mutating func airportIn(_ tokens: TextTokens, property: String) -> Airport? {
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

    mutating func labelledAirport(_ labels: Set<String>) -> Airport? {
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
            if let airport = classifier.airports.airports(inCity: words.prefix(length).joined(separator: " ")).first {
                evidence.append(Evidence(.fact, "labelled city", in: "DESCRIPTION", text: value))
                return airport
            }
        }
        return nil
    }
}
