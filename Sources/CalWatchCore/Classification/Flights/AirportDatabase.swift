import Foundation

/// An airport of the database: what a flight's origin and destination resolve to.
public struct Airport: Sendable, Hashable {
    /// The IATA code, `LHR`.
    public var code: String
    public var name: String
    public var city: String
    /// ISO 3166 country code, `GB`.
    public var country: String
    public var latitude: Double
    public var longitude: Double
    /// The IANA zone, `Europe/London`.
    public var zone: String

    /// Great-circle distance in kilometres.
    public func distance(to other: Airport) -> Double {
        GeoPoint.kilometres(latitude, longitude, other.latitude, other.longitude)
    }

    /// Roughly how long a scheduled flight over this distance is blocked for: cruise at 800 km/h plus half an
    /// hour on the ground. Used to tell a London in England from one in Ontario by the event's length.
    func typicalFlightSeconds(to other: Airport) -> Double { distance(to: other) / 800 * 3600 + 1800 }
}

/// Every airport with an IATA code (7,884, from the airportsdata package, MIT licence), found by code or by city.
/// Read from the data files `ReferenceData` checks (`airports.txt`, `metro-areas.txt`).
public final class AirportDatabase: Sendable {
    public static let shared = AirportDatabase()

    /// Where the tables come from, as `calwatch --version` and `calwatch check` name it.
    public static var dataSource: String { ReferenceData.summary(of: "airports") }

    private let byCode: [String: Airport]
    /// Folded city name (`new york`, `munchen`) to the codes of its airports, metropolitan-area airports included.
    private let byCity: [String: [String]]
    /// City names as other languages and scripts write them (`münchen`, `ミュンヘン`, `Мюнхен`), folded, to the
    /// airport table's (`munich`): the data files `city-names.txt` (by hand) and `place-names.txt` (GeoNames).
    private let cityAliases: [String: String]
    /// Codes listed in IATA's metropolitan areas (LON, NYC, PAR…): the airports people mean by the city.
    private let metropolitan: Set<String>

    /// The airport travellers mean when they name a city with several (or a city named like a smaller one
    /// elsewhere): the main international airport. Chosen by hand; used only to break a tie.
    static let primary: [String: String] = [
        "london": "LHR", "new york": "JFK", "paris": "CDG", "tokyo": "HND", "milan": "MXP", "rome": "FCO",
        "moscow": "SVO", "chicago": "ORD", "washington": "IAD", "sao paulo": "GRU", "stockholm": "ARN",
        "berlin": "BER", "osaka": "KIX", "seoul": "ICN", "shanghai": "PVG", "beijing": "PEK", "bangkok": "BKK",
        "buenos aires": "EZE", "istanbul": "IST", "houston": "IAH", "dallas": "DFW", "toronto": "YYZ",
        "montreal": "YUL", "rio de janeiro": "GIG", "jakarta": "CGK", "dubai": "DXB", "tehran": "IKA",
        "taipei": "TPE", "manila": "MNL", "kuala lumpur": "KUL", "johannesburg": "JNB", "brussels": "BRU",
        "oslo": "OSL", "frankfurt": "FRA", "frankfurt am main": "FRA", "munich": "MUC", "hamburg": "HAM",
        "barcelona": "BCN", "madrid": "MAD", "lisbon": "LIS", "amsterdam": "AMS", "vienna": "VIE",
        "zurich": "ZRH", "geneva": "GVA", "dublin": "DUB", "copenhagen": "CPH", "helsinki": "HEL",
        "warsaw": "WAW", "prague": "PRG", "budapest": "BUD", "athens": "ATH", "los angeles": "LAX",
        "san francisco": "SFO", "seattle": "SEA", "boston": "BOS", "miami": "MIA", "atlanta": "ATL",
        "denver": "DEN", "panama city": "PTY", "salt lake city": "SLC", "nashville": "BNA", "charlotte": "CLT",
        "austin": "AUS",
        "new orleans": "MSY", "baltimore": "BWI", "pittsburgh": "PIT", "cleveland": "CLE", "cincinnati": "CVG",
        "kansas city": "MCI", "st louis": "STL", "san antonio": "SAT", "sacramento": "SMF", "oakland": "OAK",
        "san jose": "SJC", "birmingham": "BHX", "perth": "PER", "vancouver": "YVR", "mexico city": "MEX",
        "bogota": "BOG", "lima": "LIM",
        "santiago": "SCL", "sydney": "SYD", "melbourne": "MEL", "auckland": "AKL", "singapore": "SIN",
        "hong kong": "HKG", "delhi": "DEL", "new delhi": "DEL", "mumbai": "BOM", "bangalore": "BLR",
        "bengaluru": "BLR", "doha": "DOH", "abu dhabi": "AUH", "cairo": "CAI", "nairobi": "NBO",
        "cape town": "CPT", "tel aviv": "TLV", "belfast": "BFS", "glasgow": "GLA", "manchester": "MAN",
        "edinburgh": "EDI", "nice": "NCE", "lyon": "LYS", "stuttgart": "STR", "cologne": "CGN",
        "dusseldorf": "DUS", "orlando": "MCO", "las vegas": "LAS", "phoenix": "PHX", "detroit": "DTW",
        "minneapolis": "MSP", "philadelphia": "PHL", "portland": "PDX", "san diego": "SAN", "honolulu": "HNL",
        "reykjavik": "KEF", "venice": "VCE", "naples": "NAP", "palma": "PMI", "malaga": "AGP", "porto": "OPO",
        "krakow": "KRK", "riga": "RIX", "tallinn": "TLL", "vilnius": "VNO", "kyiv": "KBP", "bucharest": "OTP",
        "sofia": "SOF", "belgrade": "BEG", "zagreb": "ZAG", "tenerife": "TFS", "gran canaria": "LPA",
    ]

    init() {
        var byCode: [String: Airport] = [:]
        var byCity: [String: [String]] = [:]
        byCode.reserveCapacity(8192)
        for line in (ReferenceData.text("airports") ?? "").split(separator: "\n") {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false)
            guard fields.count == 7, let latitude = Double(fields[4]), let longitude = Double(fields[5]) else {
                continue
            }
            let airport = Airport(
                code: String(fields[0]), name: String(fields[1]), city: String(fields[2]), country: String(fields[3]),
                latitude: latitude, longitude: longitude, zone: String(fields[6]))
            byCode[airport.code] = airport
            byCity[Self.fold(airport.city), default: []].append(airport.code)
            // "Toulouse/Blagnac", "Agen/La Garenne": the city, then the district the airport is in.
            if let slash = airport.city.firstIndex(of: "/") {
                byCity[Self.fold(String(airport.city[..<slash])), default: []].append(airport.code)
            }
        }
        var metropolitan: Set<String> = []
        for line in (ReferenceData.text("metro-areas") ?? "").split(separator: "\n") {
            let fields = line.split(separator: "|")
            guard fields.count == 3 else { continue }
            let city = Self.fold(String(fields[1]))
            let code = String(fields[2])
            metropolitan.insert(code)
            if !(byCity[city]?.contains(code) ?? false) { byCity[city, default: []].append(code) }
        }
        var cityAliases: [String: String] = [:]
        // The names written by hand first: where the gazetteer's differ, they win. The gazetteer's are written
        // folded already: folding its 15,000 names here took a third of a second at every start.
        for (table, folded) in [("city-names", false), ("place-names", true)] {
            for line in (ReferenceData.text(table) ?? "").split(separator: "\n") where !line.hasPrefix("#") {
                let fields = line.split(separator: "|")
                guard fields.count == 2 else { continue }
                let name = folded ? String(fields[0]) : Self.fold(String(fields[0]))
                if cityAliases[name] == nil {
                    cityAliases[name] = folded ? String(fields[1]) : Self.fold(String(fields[1]))
                }
            }
        }
        self.byCode = byCode
        self.byCity = byCity
        self.metropolitan = metropolitan
        self.cityAliases = cityAliases
    }

    /// The airport with this IATA code.
    public func airport(_ code: some StringProtocol) -> Airport? { byCode[String(code)] }

    /// How many airports the database holds (`calwatch --version`).
    public var count: Int { byCode.count }

    /// Lower case without accents or extra spaces, as city names are compared: `München` → `munchen`.
    static func fold(_ text: String) -> String {
        // Most text is ASCII: lower-casing its bytes is a hundred times cheaper than Foundation's folding.
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            var bytes = Array(text.utf8)
            for index in bytes.indices where bytes[index] >= 65 && bytes[index] <= 90 { bytes[index] += 32 }
            let lowered = String(decoding: bytes, as: UTF8.self)
            let space = UInt8(ascii: " ")
            let untidy =
                bytes.first == space || bytes.last == space
                || zip(bytes, bytes.dropFirst()).contains { $0 == space && $1 == space }
            return untidy ? lowered.split(separator: " ").joined(separator: " ") : lowered
        }
        return text.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).lowercased()
            .split(whereSeparator: { $0 == " " || $0 == "\u{a0}" }).joined(separator: " ")
    }

    /// The airport of `city` whose name contains `qualifier`: "London Luton" → LTN, "Paris Orly" → ORY.
    func airport(inCity city: String, named qualifier: String) -> Airport? {
        let word = Self.fold(qualifier)
        guard word.count >= 3 else { return nil }
        let candidates = airports(inCity: city)
        if let code = Self.airportNames[word], let airport = candidates.first(where: { $0.code == code }) {
            return airport
        }
        return candidates.first { Self.fold($0.name).split(separator: " ").contains { $0.hasPrefix(word) } }
    }

    /// An airport known by its own name alone, as people write it in a route ("Budapest - Luton", "→ Gatwick").
    func airport(named word: String) -> Airport? {
        let word = Self.fold(word)
        guard !Self.cityBoundNames.contains(word) else { return nil }
        return Self.airportNames[word].flatMap { byCode[$0] }
    }

    /// What travellers call airports, where the database's name does not say it or the city is left out ("Tokyo
    /// Haneda" is Tokyo International; "Budapest - Luton").
    static let airportNames: [String: String] = [
        "heathrow": "LHR", "gatwick": "LGW", "stansted": "STN", "luton": "LTN", "orly": "ORY", "schiphol": "AMS",
        "fiumicino": "FCO", "ciampino": "CIA", "malpensa": "MXP", "linate": "LIN", "haneda": "HND", "narita": "NRT",
        "dulles": "IAD", "laguardia": "LGA", "ohare": "ORD", "o'hare": "ORD", "gardermoen": "OSL", "arlanda": "ARN",
        "kastrup": "CPH", "barajas": "MAD", "pudong": "PVG", "incheon": "ICN", "changi": "SIN", "keflavik": "KEF",
        "logan": "BOS", "itami": "ITM", "kansai": "KIX", "hongqiao": "SHA", "daxing": "PKX", "capital": "PEK",
        "tegel": "TXL", "brandenburg": "BER", "reagan": "DCA", "national": "DCA", "kennedy": "JFK", "jfk": "JFK",
        "pearson": "YYZ", "trudeau": "YUL", "sabiha": "SAW", "ataturk": "IST", "galeao": "GIG", "guarulhos": "GRU",
        "prat": "BCN", "schwechat": "VIE", "zaventem": "BRU", "vantaa": "HEL",
    ]

    /// Names that stand for their airport only after its city ("Washington National"), never alone.
    static let cityBoundNames: Set<String> = ["capital", "national", "prat", "brandenburg", "kennedy", "jfk"]

    /// Whether `name` names a city with an airport.
    func isCity(_ name: String) -> Bool {
        var key = Self.fold(name)
        if let alias = cityAliases[key] { key = alias }
        return byCity[key] != nil || Self.primary[key] != nil
    }

    /// The airports of a city named `name` (any language the aliases know), best first for a flight from
    /// `origin` that takes `duration` seconds; without those, the city's main airport first.
    func airports(inCity name: String, from origin: Airport? = nil, duration: Double? = nil) -> [Airport] {
        var key = Self.fold(name)
        if let alias = cityAliases[key] { key = alias }
        // A city the database names otherwise ("Frankfurt am Main", "Bangalore") is known by its main airport.
        // The main airport is a candidate even where the database files it under a suburb (YVR is in Richmond,
        // and Vancouver's own entry is its seaplane harbour).
        var codes = byCity[key] ?? []
        if let main = Self.primary[key], !codes.contains(main) { codes.append(main) }
        guard !codes.isEmpty else { return [] }
        let candidates = codes.compactMap { byCode[$0] }
        func prior(_ airport: Airport) -> Int {
            if Self.primary[key] == airport.code { return 0 }
            if metropolitan.contains(airport.code) { return 1 }
            let name = airport.name.lowercased()
            if name.contains("international") || name.contains(" intl") { return 2 }
            if name.contains("heliport") || name.contains("air base") || name.contains("raf ")
                || name.contains("seaplane") || name.contains("air force")
            {
                return 4
            }
            return 3
        }
        guard let origin, let duration, duration > 0 else {
            return candidates.sorted { (prior($0), $0.code) < (prior($1), $1.code) }
        }
        // How far the event's length is from a typical flight to each; within a quarter of the length (at least
        // 20 minutes) of the best, the airport people mean wins (London Heathrow over Stansted).
        // An event longer than the flight is common (a block with time to spare), a shorter one rare: a surplus
        // counts half as much as a shortfall.
        func miss(_ airport: Airport) -> Double {
            let typical = origin.typicalFlightSeconds(to: airport)
            return typical > duration ? typical - duration : (duration - typical) / 2
        }
        let best = candidates.map(miss).min() ?? 0
        // A length no candidate comes near (a two-hour placeholder for Sydney–Paris) says nothing: the main airport.
        if best > duration { return candidates.sorted { (prior($0), $0.code) < (prior($1), $1.code) } }
        let tolerance = max(1200, duration / 4)
        return candidates.sorted { a, b in
            let (nearA, nearB) = (miss(a) <= best + tolerance, miss(b) <= best + tolerance)
            if nearA != nearB { return nearA }
            if nearA { return (prior(a), a.code) < (prior(b), b.code) }
            return miss(a) < miss(b)
        }
    }
}

/// Airlines by two-character IATA designator (hand-compiled table, CC0), read from the data file `airlines.txt`
/// that `ReferenceData` checks.
public final class AirlineTable: Sendable {
    public static let shared = AirlineTable()

    /// Where the table comes from, as `calwatch --version` and `calwatch check` name it.
    public static var dataSource: String { ReferenceData.summary(of: "airlines") }

    /// A carrier that sells seats under a designator.
    public struct Carrier: Sendable, Hashable {
        public var designator: String
        public var name: String
        /// A railway (Amtrak 2V, DB 2A): its numbers are trains.
        public var isRail: Bool
    }

    private let carriers: [String: Carrier]
    /// ICAO designators to IATA ones (`DLH` → `LH`).
    private let byICAO: [String: String]
    /// Airline names as people write them before a number ("Delta 1234", "Southwest Airlines 88"), folded word
    /// by word, to the designator.
    private let names: [[String]: String]

    /// Carriers named by a first word too common to stand alone ("United 925"), read only where the text already
    /// says flight (a route or a flight word): `ambiguousFirstWords` keeps "United 2024" a year otherwise.
    static let firstWordCarriers: [String: String] = [
        "united": "UA", "american": "AA", "british": "BA", "turkish": "TK", "singapore": "SQ", "korean": "KE",
        "virgin": "VS", "air canada": "AC", "japan": "JL", "cathay": "CX", "spirit": "NK", "frontier": "F9",
        "porter": "PD", "flair": "F8", "breeze": "MX",
    ]

    /// The carrier a common first word names, for text that already says flight.
    func carrier(firstWord word: String) -> Carrier? { Self.firstWordCarriers[word].flatMap { carriers[$0] } }

    /// Short names people write for an airline that its full name does not start with ("ANA 573", "JAL 5").
    static let aliases: [String: String] = [
        "ana": "NH", "jal": "JL", "tap": "TP", "ita": "AZ", "klm": "KL", "sas": "SK", "swiss": "LX",
        "easyjet": "U2", "wizz": "W6", "qantas": "QF", "emirates": "EK", "etihad": "EY", "iberia": "IB",
    ]

    /// First words of airline names too common to stand for the airline on their own ("United 2024").
    static let ambiguousFirstWords: Set<String> = [
        "air", "china", "royal", "hong", "all", "sun", "spring", "jet", "united", "american", "british", "gulf",
        "oman", "virgin", "czech", "malaysia", "middle", "south", "caribbean", "world2fly", "azores", "bulgaria",
        "olympic", "kenya", "kuwait", "saudia", "shanghai", "shenzhen", "sichuan", "hainan", "xiamen", "japan",
        "korean", "singapore", "philippine", "thai", "vietnam", "turkish", "pakistan", "biman", "fiji",
        "peach", "breeze", "flair", "porter", "wings", "spirit", "frontier", "discover", "horizon", "republic",
        "envoy", "alliance", "atlantic", "precision", "lucky", "indonesia", "philippines", "danish", "thai",
        "tigerair", "batik", "beijing", "cathay",
    ]

    init() {
        var carriers: [String: Carrier] = [:]
        var byICAO: [String: String] = [:]
        var names: [[String]: String] = [:]
        for (alias, designator) in Self.aliases { names[[alias]] = designator }
        for line in (ReferenceData.text("airlines") ?? "").split(separator: "\n") {
            let fields = line.trimmingCharacters(in: .whitespaces).split(separator: "|")
            guard fields.count >= 2 else { continue }
            let carrier = Carrier(
                designator: String(fields[0]), name: String(fields[1]), isRail: fields.count > 2 && fields[2] == "rail")
            carriers[carrier.designator] = carrier
            if fields.count > 2, fields[2].count == 3, fields[2].allSatisfy(\.isUppercase) {
                byICAO[String(fields[2])] = carrier.designator
            }
            let words = AirportDatabase.fold(carrier.name).split(whereSeparator: { !$0.isLetter && !$0.isNumber })
                .map(String.init)
            // The whole name, and a distinctive first word alone ("Delta"); never a common word ("Spirit 2024"),
            // and a first word that starts several names ("Lufthansa CityLine") stands for its own airline only.
            if words.count > 1 || !Self.ambiguousFirstWords.contains(words[0]) { names[words] = carrier.designator }
            if words.count > 1, words[0].count >= 5, !Self.ambiguousFirstWords.contains(words[0]),
                names[[words[0]]] == nil
            {
                names[[words[0]]] = carrier.designator
            }
        }
        self.carriers = carriers
        self.byICAO = byICAO
        self.names = names
    }

    public func carrier(_ designator: some StringProtocol) -> Carrier? { carriers[String(designator)] }

    /// The carrier of an ICAO designator ("EZY" is easyJet, U2), as airline apps and flight trackers write them.
    func carrier(icao designator: some StringProtocol) -> Carrier? {
        byICAO[String(designator)].flatMap { carriers[$0] }
    }

    /// How many designators the table holds (`calwatch --version`).
    public var count: Int { carriers.count }

    /// The carrier named by `words` exactly (folded): ["delta", "air", "lines"], ["southwest"].
    func carrier(named words: [String]) -> Carrier? { names[words].flatMap { carriers[$0] } }
}
