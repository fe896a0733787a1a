import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The event JSON checked against `schemas/calwatch-event.schema.json`, as a consumer with a validator would.
@Suite(.ownThread) struct EventSchemaTests {
    /// A JSON value that keeps booleans, integers and numbers apart.
    indirect enum JSON: Decodable, Equatable {
        case null
        case bool(Bool)
        case integer(Int64)
        case number(Double)
        case string(String)
        case array([JSON])
        case object([String: JSON])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .integer(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([JSON].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: JSON].self))
            }
        }

        static func parse(_ text: String) throws -> JSON { try JSONDecoder().decode(JSON.self, from: Data(text.utf8)) }

        /// An object's member (`nil` for a missing one, or for anything but an object).
        subscript(key: String) -> JSON? {
            if case .object(let members) = self { return members[key] }
            return nil
        }

        var string: String? {
            if case .string(let text) = self { return text }
            return nil
        }
    }

    /// Validates against the JSON Schema keywords the schema file uses (type, const, enum, pattern, minimum,
    /// maximum, required, properties, additionalProperties, items, $ref, allOf, if/then); returns the violations.
    struct Validator {
        let root: JSON
        /// Other schema files by name, for a `$ref` such as `calwatch-event.schema.json#/$defs/occurrence`.
        var documents: [String: JSON] = [:]

        func validate(_ value: JSON, _ schema: JSON, at path: String = "$") -> [String] {
            guard case .object(let rules) = schema else { return [] }
            if case .string(let reference)? = rules["$ref"] {
                guard !reference.hasPrefix("#"), let hash = reference.firstIndex(of: "#") else {
                    return validate(value, resolve(reference), at: path)
                }
                guard let document = documents[String(reference[..<hash])] else { return ["\(path): no \(reference)"] }
                let other = Validator(root: document, documents: documents)
                return other.validate(value, other.resolve(String(reference[hash...])), at: path)
            }
            var errors: [String] = []
            if let type = rules["type"] {
                let allowed: [String]
                switch type {
                case .string(let one): allowed = [one]
                case .array(let many): allowed = many.compactMap { if case .string(let s) = $0 { s } else { nil } }
                default: allowed = []
                }
                if !allowed.contains(where: { matches(value, type: $0) }) { errors.append("\(path): not \(allowed)") }
            }
            if let constant = rules["const"], constant != value { errors.append("\(path): not \(constant)") }
            if case .array(let options)? = rules["enum"], !options.contains(value) {
                errors.append("\(path): not in enum")
            }
            if case .string(let pattern)? = rules["pattern"], case .string(let text) = value,
                text.range(of: pattern, options: .regularExpression) == nil
            {
                errors.append("\(path): '\(text)' does not match \(pattern)")
            }
            if let number = numeric(value) {
                if let minimum = rules["minimum"].flatMap(numeric), number < minimum {
                    errors.append("\(path): below minimum")
                }
                if let maximum = rules["maximum"].flatMap(numeric), number > maximum {
                    errors.append("\(path): above maximum")
                }
            }
            if case .object(let object) = value {
                if case .array(let required)? = rules["required"] {
                    for case .string(let name) in required where object[name] == nil {
                        errors.append("\(path): missing \(name)")
                    }
                }
                let properties: [String: JSON]
                if case .object(let declared)? = rules["properties"] { properties = declared } else { properties = [:] }
                for (name, member) in object {
                    if let rule = properties[name] {
                        errors += validate(member, rule, at: path + "." + name)
                    } else if rules["additionalProperties"] == .bool(false) {
                        errors.append("\(path): unexpected \(name)")
                    }
                }
            }
            if let item = rules["items"], case .array(let elements) = value {
                for (index, element) in elements.enumerated() {
                    errors += validate(element, item, at: "\(path)[\(index)]")
                }
            }
            if case .array(let all)? = rules["allOf"] {
                for rule in all { errors += validate(value, rule, at: path) }
            }
            if let condition = rules["if"], validate(value, condition, at: path).isEmpty, let then = rules["then"] {
                errors += validate(value, then, at: path)
            }
            return errors
        }

        func resolve(_ reference: String) -> JSON {
            var node = root
            for part in reference.dropFirst(2).split(separator: "/") {
                guard case .object(let object) = node, let next = object[String(part)] else { return .null }
                node = next
            }
            return node
        }

        func matches(_ value: JSON, type: String) -> Bool {
            switch (type, value) {
            case ("null", .null), ("boolean", .bool), ("integer", .integer), ("number", .integer), ("number", .number),
                ("string", .string), ("array", .array), ("object", .object):
                true
            default: false
            }
        }

        func numeric(_ value: JSON) -> Double? {
            switch value {
            case .integer(let number): Double(number)
            case .number(let number): number
            default: nil
            }
        }
    }

    static var schema: JSON { schema(named: "calwatch-event.schema.json") }

    /// A schema file of `schemas/`.
    static func schema(named name: String) -> JSON {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("schemas/" + name)
        return try! JSON.parse(String(contentsOf: url, encoding: .utf8))
    }

    /// Events of every type the planner makes today, written as JSON Lines.
    static func eventLines() -> [String] {
        let alarm = Alarm(action: "DISPLAY", trigger: .relative(ICalDuration(exactSeconds: -3600), toEnd: false))
        let kept = PlannerTests.meeting("kept", "2027-03-01T10:00:00Z", "2027-03-01T10:30:00Z", alarms: [alarm])
        let dropped = PlannerTests.meeting("dropped", "2027-03-01T10:00:00Z", "2027-03-01T11:00:00Z")
        var state = PlannerState()
        var lines: [String] = []
        var sequence: Int64 = 0
        Planner.run(
            from: utc("2027-03-01T08:00:00Z"), to: utc("2027-03-01T12:00:00Z"), state: &state,
            configuration: PlannerConfiguration()
        ) { now in
            now < utc("2027-03-01T10:10:00Z") ? [kept, dropped] : [kept]
        } emit: { event in
            sequence += 1
            let occurrence = [kept, dropped].first { OccurrenceKey($0) == event.key && event.type != .liveActivityEnd }
            lines.append(
                CloudEventJSON.render(
                    event, occurrence: occurrence, sequence: sequence,
                    recordedTime: Timestamp(millisecondsSinceEpoch: event.time.secondsSinceEpoch * 1000 + 42)))
        }
        return lines
    }

    @Test func everyEventMatchesTheSchema() throws {
        let validator = Validator(root: Self.schema)
        let lines = Self.eventLines()
        let types = Set(
            lines.compactMap { line -> String? in
                guard case .object(let object) = try? JSON.parse(line), case .string(let type)? = object["type"] else {
                    return nil
                }
                return type
            })
        #expect(
            types == [
                "calwatch.reminderDue", "calwatch.liveActivityStart", "calwatch.liveActivityUpdate",
                "calwatch.liveActivityEnd",
            ])
        for line in lines {
            let errors = validator.validate(try JSON.parse(line), Self.schema)
            #expect(errors.isEmpty, "\(errors) in \(line)")
        }
    }

    @Test func theSchemaRejectsWhatIsWrong() throws {
        let validator = Validator(root: Self.schema)
        let reminder = Self.eventLines().first { $0.contains("calwatch.reminderDue") }!
        let withoutReminder = reminder.replacingOccurrences(of: "\"reminder\":", with: "\"reminderX\":")
        #expect(validator.validate(try JSON.parse(withoutReminder), Self.schema).contains("$.data: missing reminder"))
        let badTime = reminder.replacingOccurrences(of: "\"specversion\":\"1.0\"", with: "\"specversion\":\"0.3\"")
        #expect(!validator.validate(try JSON.parse(badTime), Self.schema).isEmpty)
    }

    /// A line written by a sink that renders many events (`CloudEventJSON.Lines`, its occurrence fragments cached)
    /// says what the one-off rendering and the binary mode's headers say: `source`, `subject` (a moved instance, a
    /// UID with quotes, a backslash and non-ASCII text) and `sequence`, and a `data.meeting` that is the occurrence's.
    @Test func aLineOfManyAgreesWithTheEventAndItsBinaryMode() throws {
        var component = CalendarComponent(kind: .event, uid: #"team "sync" \ Überblick"#)
        component.summary = "Sync"
        let source = OccurrenceSource(
            calendar: "wörk \"cal\"", component: component, allDay: false, timeZone: nil,
            displayZone: PlannerTests.berlin)
        let moved = Occurrence(
            source: source, recurrenceID: .instant(utc("2027-03-01T09:00:00Z")), start: utc("2027-03-01T10:00:00Z"),
            end: utc("2027-03-01T10:30:00Z"))
        var facts = OccurrenceFacts.event
        facts.kind = .meeting
        facts.meeting = MeetingFacts(service: "zoom", joinURL: "https://example.zoom.us/j/123?pwd=a\"b")
        var state = PlannerState()
        let events = PlannerTests.run(
            from: "2027-03-01T09:20:00Z", to: "2027-03-01T10:05:00Z", state: &state, facts: { _ in facts },
            calendar: { _ in [moved] })
        #expect(events.count >= 4)
        var lines = CloudEventJSON.Lines()
        let recorded = Timestamp(millisecondsSinceEpoch: 1_803_000_000_042)
        for (index, event) in events.enumerated() {
            lines.append(event, occurrence: moved, facts: facts, sequence: Int64(index + 1), recordedTime: recorded)
        }
        let written = String(decoding: lines.writer.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(written.count == events.count)
        for (index, (event, line)) in zip(events, written).enumerated() {
            let alone = CloudEventJSON.render(
                event, occurrence: moved, facts: facts, sequence: Int64(index + 1), recordedTime: recorded)
            #expect(line == alone)
            func fields(_ json: JSON?) -> [String: JSON]? {
                guard case .object(let fields)? = json else { return nil }
                return fields
            }
            let object = try #require(fields(try JSON.parse(line)))
            let data = try #require(fields(object["data"]))
            let occurrence = try #require(fields(data["occurrence"]))
            #expect(object["subject"] == .string(event.subject))
            #expect(object["subject"] == .string(#"team "sync" \ Überblick/2027-03-01T09:00:00Z"#))
            #expect(object["source"] == .string(#"calwatch:wörk "cal""#))
            #expect(object["sequence"] == .string(String(index + 1)))
            #expect(data["meeting"] != nil && data["meeting"] == occurrence["meeting"])
            let headers = CloudEventJSON.binary(
                event, occurrence: moved, facts: facts, sequence: Int64(index + 1), recordedTime: recorded
            ).attributes
            for (name, value) in headers where ["source", "subject", "sequence"].contains(name) {
                #expect(object[name] == .string(value), "\(name)")
            }
        }
    }

    /// A writer of many lines keeps each occurrence's object once rendered: a line about the same item moved, made
    /// longer or classified again shows it as it is now, not as it was first written.
    @Test func aLineOfManyShowsTheOccurrenceAsItIsNow() throws {
        var component = CalendarComponent(kind: .event, uid: "standup")
        component.summary = "Stand-up"
        let source = OccurrenceSource(
            calendar: "work", component: component, allDay: false, timeZone: nil, displayZone: PlannerTests.berlin)
        func occurrence(_ start: String, _ end: String) -> Occurrence {
            Occurrence(
                source: source, recurrenceID: .instant(utc("2027-03-01T09:00:00Z")), start: utc(start), end: utc(end))
        }
        var zoom = OccurrenceFacts.event
        zoom.kind = .meeting
        zoom.meeting = MeetingFacts(service: "zoom", joinURL: "https://example.zoom.us/j/123")
        var meet = zoom
        meet.meeting = MeetingFacts(service: "google-meet", joinURL: "https://meet.google.com/abc-defg-hij")
        let asPlanned = occurrence("2027-03-01T09:00:00Z", "2027-03-01T09:30:00Z")
        let cases = [
            (asPlanned, zoom), (asPlanned, zoom), (occurrence("2027-03-01T09:00:00Z", "2027-03-01T10:00:00Z"), zoom),
            (occurrence("2027-03-01T11:00:00Z", "2027-03-01T11:30:00Z"), zoom), (asPlanned, meet), (asPlanned, zoom),
        ]
        var lines = CloudEventJSON.Lines()
        var alone: [String] = []
        let recorded = Timestamp(millisecondsSinceEpoch: 1_803_000_000_042)
        for (index, (occurrence, facts)) in cases.enumerated() {
            // Its live activity's start, a quarter of an hour before it.
            let activity = occurrence.start.adding(seconds: -900)
            let event = try #require(
                PlannerTests.run(
                    from: activity.description, to: activity.adding(seconds: 60).description, facts: { _ in facts },
                    [occurrence]
                ).first)
            lines.append(event, occurrence: occurrence, facts: facts, sequence: Int64(index), recordedTime: recorded)
            alone.append(
                CloudEventJSON.render(
                    event, occurrence: occurrence, facts: facts, sequence: Int64(index), recordedTime: recorded))
        }
        let written = String(decoding: lines.writer.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(written == alone)
        #expect(written[2].contains(#""end":"2027-03-01T10:00:00Z""#))
        #expect(written[3].contains(#""start":"2027-03-01T11:00:00Z""#))
        #expect(written[4].contains("meet.google.com") && !written[4].contains("zoom.us"))
        #expect(written[5].contains("zoom.us"))
    }

    @Test func scanOutputMatchesTheOccurrenceShape() throws {
        let validator = Validator(root: Self.schema)
        let result = scan(
            [fixture("google-recurring.ics"), fixture("apple-all-day.ics")], from: "2025-03-01", to: "2025-05-01")
        var lines: [String] = []
        OccurrenceJSON.writeLines(result.occurrences) {
            lines += String(decoding: $0, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        #expect(lines.count == result.occurrences.count)
        for line in lines {
            let errors = validator.validate(try JSON.parse(line), validator.resolve("#/$defs/occurrence"))
            #expect(errors.isEmpty, "\(errors) in \(line)")
        }
    }
}
