package import CalWatchCore
import Foundation

/// Asks a flight-status service about one flight on one day, in the service's documented API, and reads its answer
/// into a `FlightStatus`:
///
/// - AeroDataBox (https://doc.aerodatabox.com): `GET /flights/number/{number}/{dateLocal}` with `X-RapidAPI-Key`;
///   an array of flights, each `departure: {airport: {iata}, scheduledTime: {utc}, revisedTime, predictedTime,
///   terminal, gate}` and `status` (`Expected`, `Delayed`, `Boarding`, `Departed`, `Canceled`, `Diverted`, …).
/// - AeroAPI (FlightAware, https://www.flightaware.com/aeroapi/portal/documentation): `GET /flights/{ident}` with
///   `x-apikey` and `start`/`end`; `{flights: [{origin: {code_iata}, scheduled_out, estimated_out, actual_out,
///   gate_origin, terminal_origin, cancelled, diverted, destination}]}`.
/// - aviationstack (https://aviationstack.com/documentation): `GET /v1/flights?access_key=…&flight_iata=…`;
///   `{data: [{flight_date, flight_status, departure: {iata, timezone, scheduled, estimated, actual, gate,
///   terminal}}]}`. Its times carry `+00:00` but are the airport's clock, as its users report; they are read on the
///   clock of the `timezone` it gives.
///
/// The service is a stranger like any server: one deadline, a mebibyte at most, no redirect (the key goes to the
/// configured address only), and an answer of another shape is refused with the reason.
public enum FlightStatusClient {
    /// The most bytes a service's key file may hold.
    static let largestKey = 4096

    /// The key in `settings.keyFile`, trimmed; `nil` with the reason when it cannot be had.
    package static func key(_ settings: FlightStatusSettings) -> Result<String, HTTPClient.Failure> {
        guard let path = settings.keyFile else { return .failure(.init(reason: "flights.status has no keyFile")) }
        guard let handle = FileHandle(forReadingAtPath: path),
            let data = try? handle.read(upToCount: largestKey + 1)
        else { return .failure(.init(reason: "the key file \(path) cannot be read")) }
        try? handle.close()
        let key = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard data.count <= largestKey, !key.isEmpty,
            key.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) })
        else { return .failure(.init(reason: "the key file \(path) does not hold one key on one line")) }
        return .success(key)
    }

    /// The request for `flight`, with `key`.
    static func request(
        for flight: FlightStatusCache.Tracked, settings: FlightStatusSettings, key: String
    ) -> HTTPClient.Request? {
        var base = settings.url
        while base.hasSuffix("/") { base.removeLast() }
        let code = flight.key.code
        switch settings.provider {
        case .aerodatabox:
            guard let url = URL(string: "\(base)/flights/number/\(code)/\(flight.key.date)?dateLocalRole=Departure")
            else { return nil }
            return HTTPClient.Request(
                url: url,
                headers: ["X-RapidAPI-Key": key, "X-RapidAPI-Host": url.host ?? "", "Accept": "application/json"])
        case .aeroapi:
            // The day around the calendar's departure: a flight number flies once a day at most, on most routes.
            let start = flight.scheduled.adding(seconds: -12 * 3600).description
            let end = flight.scheduled.adding(seconds: 12 * 3600).description
            guard let url = URL(string: "\(base)/flights/\(code)?ident_type=designator&start=\(start)&end=\(end)")
            else { return nil }
            return HTTPClient.Request(url: url, headers: ["x-apikey": key, "Accept": "application/json"])
        case .aviationstack:
            var components = URLComponents(string: "\(base)/v1/flights")
            components?.queryItems = [
                URLQueryItem(name: "access_key", value: key), URLQueryItem(name: "flight_iata", value: code),
            ]
            guard let url = components?.url else { return nil }
            return HTTPClient.Request(url: url, headers: ["Accept": "application/json"])
        }
    }

    /// What the service says of `flight` now, or why it says nothing.
    package static func status(
        of flight: FlightStatusCache.Tracked, settings: FlightStatusSettings, at now: Instant,
        deadline: Duration = .seconds(15)
    ) async -> Result<FlightStatus, HTTPClient.Failure> {
        let key: String
        switch Self.key(settings) {
        case .success(let found): key = found
        case .failure(let failure): return .failure(failure)
        }
        guard let request = request(for: flight, settings: settings, key: key) else {
            return .failure(.init(reason: "the flights.status address is not usable"))
        }
        var limits = HTTPClient.Limits()
        limits.deadline = deadline
        limits.largest = 1 << 20
        limits.redirects = nil
        return await HTTPClient.send(request, limits: limits).flatMap { answer in
            read(answer, for: flight, settings: settings, at: now)
        }
    }

    /// The answer read as the provider documents it.
    static func read(
        _ answer: HTTPClient.Answer, for flight: FlightStatusCache.Tracked, settings: FlightStatusSettings,
        at now: Instant
    ) -> Result<FlightStatus, HTTPClient.Failure> {
        if answer.status == 204 || answer.status == 404 {
            return .failure(
                .init(reason: "\(settings.provider.name) knows no \(flight.key.code) on \(flight.key.date)"))
        }
        guard (200..<300).contains(answer.status) else {
            let said = refusal(answer.body).map { ": " + $0 } ?? ""
            let hint = [401, 403].contains(answer.status) ? " (check the key in flights.status.keyFile)" : ""
            return .failure(.init(reason: "HTTP \(answer.status)\(said)\(hint)"))
        }
        let found: FlightStatus?
        switch settings.provider {
        case .aerodatabox: found = aeroDataBox(answer.body, for: flight, at: now)
        case .aeroapi: found = aeroAPI(answer.body, for: flight, at: now)
        case .aviationstack:
            if let said = refusal(answer.body) { return .failure(.init(reason: said)) }
            found = aviationstack(answer.body, for: flight, at: now)
        }
        guard let found else {
            return .failure(
                .init(
                    reason: "\(settings.provider.name)'s answer has no \(flight.key.code) on \(flight.key.date)"
                        + (flight.origin.map { " from \($0)" } ?? "") + " in its documented shape"))
        }
        return .success(found)
    }

    /// What a refusal says (AeroAPI's `{title, reason, detail}`, aviationstack's `{error: {code, message}}`,
    /// RapidAPI's `{message}`), one line of at most 200 printable characters.
    static func refusal(_ body: Data) -> String? {
        guard let object = (try? JSONSerialization.jsonObject(with: body.prefix(64 << 10))) as? [String: Any] else {
            return nil
        }
        let error = object["error"] as? [String: Any]
        let text =
            (error?["message"] as? String).map { message in
                (error?["code"] as? String).map { "\($0): \(message)" } ?? message
            } ?? (object["detail"] as? String) ?? (object["reason"] as? String) ?? (object["message"] as? String)
        return text.map {
            String(
                String.UnicodeScalarView($0.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }).prefix(200))
        }
    }

    // MARK: The providers' shapes

    private static func aeroDataBox(_ body: Data, for flight: FlightStatusCache.Tracked, at now: Instant)
        -> FlightStatus?
    {
        guard let flights = (try? JSONSerialization.jsonObject(with: body)) as? [[String: Any]] else { return nil }
        let legs = flights.prefix(20).compactMap { entry -> FlightStatus? in
            guard let departure = entry["departure"] as? [String: Any] else { return nil }
            let airport = (departure["airport"] as? [String: Any])?["iata"] as? String
            if let origin = flight.origin, let airport, airport != origin { return nil }
            func time(_ field: String) -> Instant? {
                ((departure[field] as? [String: Any])?["utc"] as? String).flatMap(instant(aeroDataBox:))
            }
            let expected: (Instant, String)? =
                time("revisedTime").map { ($0, "revisedTime") }
                ?? time("predictedTime").map { ($0, "predictedTime") }
            let state: FlightStatus.State =
                switch entry["status"] as? String {
                case "Expected", "CheckIn": .scheduled
                case "Delayed": .delayed
                case "Boarding", "GateClosed": .boarding
                case "Departed", "EnRoute", "Approaching": .departed
                case "Arrived": .landed
                case "Canceled": .cancelled
                case "Diverted": .diverted
                // `CanceledUncertain` among them: not enough to take the user's reminders away.
                default: .unknown
                }
            return FlightStatus(
                provider: "AeroDataBox", asked: now, state: state, scheduled: time("scheduledTime"),
                expected: expected?.0, expectedField: expected?.1, gate: text(departure["gate"]),
                terminal: text(departure["terminal"]))
        }
        return nearest(legs, to: flight)
    }

    private static func aeroAPI(_ body: Data, for flight: FlightStatusCache.Tracked, at now: Instant) -> FlightStatus? {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            let flights = object["flights"] as? [[String: Any]]
        else { return nil }
        let legs = flights.prefix(50).compactMap { entry -> FlightStatus? in
            let airport = (entry["origin"] as? [String: Any])?["code_iata"] as? String
            if let origin = flight.origin, let airport, airport != origin { return nil }
            func time(_ field: String) -> Instant? { (entry[field] as? String).flatMap(instant(iso:)) }
            let scheduled = time("scheduled_out")
            let expected: (Instant, String)? =
                time("actual_out").map { ($0, "actual_out") }
                ?? time("estimated_out").map { ($0, "estimated_out") }
            let diverted = entry["diverted"] as? Bool == true
            var state: FlightStatus.State = .scheduled
            if entry["cancelled"] as? Bool == true {
                state = .cancelled
            } else if diverted {
                state = .diverted
            } else if time("actual_on") != nil {
                state = .landed
            } else if time("actual_off") != nil || time("actual_out") != nil {
                state = .departed
            } else if let scheduled, let expected, expected.0.secondsSinceEpoch - scheduled.secondsSinceEpoch >= 900 {
                state = .delayed
            }
            return FlightStatus(
                provider: "AeroAPI", asked: now, state: state, scheduled: scheduled, expected: expected?.0,
                expectedField: expected?.1, gate: text(entry["gate_origin"]), terminal: text(entry["terminal_origin"]),
                divertedTo: diverted ? text((entry["destination"] as? [String: Any])?["code_iata"]) : nil)
        }
        return nearest(legs, to: flight)
    }

    private static func aviationstack(_ body: Data, for flight: FlightStatusCache.Tracked, at now: Instant)
        -> FlightStatus?
    {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            let flights = object["data"] as? [[String: Any]]
        else { return nil }
        let legs = flights.prefix(100).compactMap { entry -> FlightStatus? in
            guard let departure = entry["departure"] as? [String: Any] else { return nil }
            if let date = entry["flight_date"] as? String, date != flight.key.date { return nil }
            let airport = departure["iata"] as? String
            if let origin = flight.origin, let airport, airport != origin { return nil }
            let zone = (departure["timezone"] as? String).flatMap { TimeZoneDatabase.rules(named: $0) }
            func time(_ field: String) -> Instant? {
                (departure[field] as? String).flatMap { instant(aviationstack: $0, zone: zone) }
            }
            let expected: (Instant, String)? =
                time("actual").map { ($0, "actual") }
                ?? time("estimated").map { ($0, "estimated") }
            let state: FlightStatus.State =
                switch entry["flight_status"] as? String {
                case "scheduled": (departure["delay"] as? Int).map { $0 >= 15 } == true ? .delayed : .scheduled
                case "active": .departed
                case "landed": .landed
                case "cancelled": .cancelled
                case "diverted": .diverted
                default: .unknown
                }
            return FlightStatus(
                provider: "aviationstack", asked: now, state: state, scheduled: time("scheduled"),
                expected: expected?.0, expectedField: expected?.1, gate: text(departure["gate"]),
                terminal: text(departure["terminal"]),
                divertedTo: state == .diverted ? text((entry["arrival"] as? [String: Any])?["iata"]) : nil)
        }
        return nearest(legs, to: flight)
    }

    /// Of a flight number's legs, the one scheduled nearest the calendar's departure, within 12 hours.
    private static func nearest(_ legs: [FlightStatus], to flight: FlightStatusCache.Tracked) -> FlightStatus? {
        func distance(_ leg: FlightStatus) -> Int64 {
            leg.scheduled.map { abs($0.secondsSinceEpoch - flight.scheduled.secondsSinceEpoch) } ?? 12 * 3600
        }
        return legs.filter { distance($0) <= 12 * 3600 }.min { distance($0) < distance($1) }
    }

    /// A short printable value (a gate, a terminal); `nil` for anything else.
    private static func text(_ value: Any?) -> String? {
        guard let text = value as? String else { return nil }
        let clean = String(
            String.UnicodeScalarView(
                text.unicodeScalars.filter {
                    $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "-" || $0 == " "
                })
        )
        .trimmingCharacters(in: .whitespaces)
        return clean.isEmpty ? nil : String(clean.prefix(12))
    }

    // MARK: Times

    /// `2026-12-03 19:20Z` (AeroDataBox's `utc`).
    static func instant(aeroDataBox text: String) -> Instant? {
        guard text.hasSuffix("Z") else { return nil }
        return wallClock(String(text.dropLast())).map { ZoneRules.utc.instant(for: $0) }
    }

    /// `2026-12-03T19:20:00Z` (AeroAPI's).
    static func instant(iso text: String) -> Instant? {
        guard text.hasSuffix("Z") else { return nil }
        return wallClock(String(text.dropLast())).map { ZoneRules.utc.instant(for: $0) }
    }

    /// `2026-12-03T19:20:00+00:00` (aviationstack's), the wall clock read on `zone` when it gives one.
    static func instant(aviationstack text: String, zone: ZoneRules?) -> Instant? {
        guard text.count == 25, let wall = wallClock(String(text.prefix(19))) else { return nil }
        if let zone { return zone.instant(for: wall) }
        guard text.hasSuffix("+00:00") else { return nil }
        return ZoneRules.utc.instant(for: wall)
    }

    /// `2026-12-03 19:20`, `2026-12-03T19:20:00`: a date and a time of day, the separator either.
    static func wallClock(_ text: String) -> LocalDateTime? {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count == 16 || scalars.count == 19, scalars[4] == "-", scalars[7] == "-",
            scalars[10] == " " || scalars[10] == "T", scalars[13] == ":", scalars.count == 16 || scalars[16] == ":"
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            Int(String(String.UnicodeScalarView(scalars[range])))
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), (1970...2200).contains(year),
            (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        let second = scalars.count == 19 ? number(17..<19) : 0
        guard let second, (0...59).contains(second) else { return nil }
        return LocalDateTime(year, month, day, hour, minute, second)
    }
}
