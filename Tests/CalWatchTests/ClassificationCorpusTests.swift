import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The labelled corpus (`Fixtures/corpus`): flights in the shapes producers write (Google, TripIt, airline and
/// agency exports, hand-typed, several languages), things that only look like flights, and meeting invitations
/// of many services. Each VEVENT carries its expected result in `X-CALWATCH-EXPECT` (and the join link in
/// `X-CALWATCH-EXPECT-JOIN`), which calwatch itself never reads.
///
/// `make corpus` prints the figures; the targets: flight precision ≥ 0.98, recall ≥ 0.97 and fields ≥ 97% right
/// (docs/design.md §4 asked 0.95 for the last two; the correctness issue raised them), meeting join link and service ≥ 97%
/// right.
@Suite(.ownThread) struct ClassificationCorpusTests {
    static let files = ["corpus/flights.ics", "corpus/not-flights.ics", "corpus/meetings.ics"] + heldOut
    /// Written after the rules, each set once the rules had been fixed for the one before, to see how they do on
    /// items they were not shaped on; their first figures are in BENCHMARKS.md. Kept in the corpus since. The
    /// third was written before any rule change of its round (155 items); the fourth and fifth were held back and
    /// measured once.
    static let heldOut = [
        "corpus/held-out.ics", "corpus/held-out-2.ics", "corpus/held-out-3.ics", "corpus/held-out-4.ics",
        "corpus/held-out-5.ics", "corpus/held-out-6.ics", "corpus/held-out-7.ics",
    ]

    /// One labelled item and what calwatch made of it.
    struct Case {
        var uid: String
        var summary: String
        var expected: [String: String]
        var expectedJoin: String?
        var facts: OccurrenceFacts
    }

    /// Labels by UID, read from the files' text.
    static func labels(_ path: String) -> [String: (expect: [String: String], join: String?)] {
        let text = try! String(contentsOfFile: path, encoding: .utf8)
        var labels: [String: (expect: [String: String], join: String?)] = [:]
        var uid = ""
        for line in text.components(separatedBy: "\r\n") {
            if line.hasPrefix("UID:") { uid = String(line.dropFirst(4)) }
            if line.hasPrefix("X-CALWATCH-EXPECT:") {
                var expect: [String: String] = [:]
                for pair in line.dropFirst("X-CALWATCH-EXPECT:".count).split(separator: ";") {
                    let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    expect[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
                }
                labels[uid, default: ([:], nil)].expect = expect
            }
            if line.hasPrefix("X-CALWATCH-EXPECT-JOIN:") {
                labels[uid, default: ([:], nil)].join = String(line.dropFirst("X-CALWATCH-EXPECT-JOIN:".count))
            }
        }
        return labels
    }

    static func cases(_ files: [String] = files) -> [Case] {
        let classifier = Classifier(me: ["me@example.com"])
        var cases: [Case] = []
        for file in files {
            let path = fixture(file)
            let labels = labels(path)
            let result = scan([path], from: "2027-01-01", to: "2028-01-01", zone: "UTC")
            #expect(result.problems.isEmpty, "\(result.problems)")
            for occurrence in result.occurrences {
                let label = labels[occurrence.uid]!
                cases.append(
                    Case(
                        uid: occurrence.uid, summary: occurrence.summary ?? "", expected: label.expect,
                        expectedJoin: label.join, facts: classifier.facts(for: occurrence)))
            }
            #expect(Set(result.occurrences.map(\.uid)) == Set(labels.keys), "every labelled item is read")
        }
        return cases
    }

    /// Precision, recall and field accuracy, with each miss named.
    struct Figures {
        var truePositives = 0, falsePositives = 0, falseNegatives = 0, negatives = 0
        var flightFields = 0, flightFieldsRight = 0
        var meetings = 0, meetingsRight = 0, kindsRight = 0, items = 0
        var meetingFields = 0, meetingFieldsRight = 0
        var misses: [String] = []

        var precision: Double { Double(truePositives) / Double(max(1, truePositives + falsePositives)) }
        var recall: Double { Double(truePositives) / Double(max(1, truePositives + falseNegatives)) }
        var f1: Double { 2 * precision * recall / max(1e-9, precision + recall) }
        var fieldAccuracy: Double { Double(flightFieldsRight) / Double(max(1, flightFields)) }
        var meetingAccuracy: Double { Double(meetingsRight) / Double(max(1, meetings)) }
        var meetingFieldAccuracy: Double { Double(meetingFieldsRight) / Double(max(1, meetingFields)) }

        init(_ cases: [Case]) {
            for item in cases {
                let expected = item.expected
                let kind = item.facts.kind.rawValue
                items += 1
                if kind == expected["kind"] {
                    kindsRight += 1
                } else {
                    misses.append("\(item.uid) \"\(item.summary)\": kind \(kind), expected \(expected["kind"]!)")
                }
                let isFlight = expected["kind"] == "flight"
                switch (isFlight, item.facts.kind == .flight) {
                case (true, true): truePositives += 1
                case (false, true): falsePositives += 1
                case (true, false): falseNegatives += 1
                case (false, false): negatives += 1
                }
                if isFlight, let flight = item.facts.flight {
                    let found: [String: String?] = [
                        "code": flight.code, "origin": flight.origin?.code, "destination": flight.destination?.code,
                        "terminal": flight.terminal, "gate": flight.gate, "seat": flight.seat,
                        "booking": flight.bookingReference,
                    ]
                    for (field, value) in found.sorted(by: { $0.key < $1.key }) {
                        flightFields += 1
                        if value == expected[field] {
                            flightFieldsRight += 1
                        } else {
                            misses.append(
                                "\(item.uid) \"\(item.summary)\": \(field) \(value ?? "nil"), expected \(expected[field] ?? "nil")"
                            )
                        }
                    }
                }
                if expected["kind"] == "meeting" || item.uid.hasPrefix("m") || item.uid.hasPrefix("hm")
                    || item.uid.hasPrefix("sm")
                {
                    // Service and join link must both be right (both absent when none is expected).
                    meetings += 1
                    let meeting = item.facts.meeting
                    if meeting?.service == expected["service"] && meeting?.joinURL == item.expectedJoin {
                        meetingsRight += 1
                    } else {
                        misses.append(
                            "\(item.uid) \"\(item.summary)\": \(meeting?.service ?? "nil") \(meeting?.joinURL ?? "nil"), "
                                + "expected \(expected["service"] ?? "nil") \(item.expectedJoin ?? "nil")")
                    }
                    let found: [String: String?] = [
                        "id": meeting?.meetingID, "passcode": meeting?.passcode, "dialin": meeting?.dialIn,
                    ]
                    for (field, value) in found.sorted(by: { $0.key < $1.key }) where expected[field] != nil {
                        meetingFields += 1
                        if value == expected[field] {
                            meetingFieldsRight += 1
                        } else {
                            misses.append(
                                "\(item.uid) \"\(item.summary)\": \(field) \(value ?? "nil"), expected \(expected[field]!)"
                            )
                        }
                    }
                    if (expected["declined"] == "true") != item.facts.declined {
                        misses.append("\(item.uid) \"\(item.summary)\": declined \(item.facts.declined)")
                    }
                }
            }
        }

        var report: String {
            let format = { (value: Double) in String(format: "%.3f", value) }
            return """
                calwatch classification corpus: \(items) items (\(truePositives + falseNegatives) flights, \
                \(negatives + falsePositives) not flights, \(meetings) meeting invitations)
                | measure | value | target |
                |---|---:|---:|
                | flight precision | \(format(precision)) (\(truePositives)/\(truePositives + falsePositives)) | ≥ 0.98 |
                | flight recall | \(format(recall)) (\(truePositives)/\(truePositives + falseNegatives)) | ≥ 0.97 |
                | flight fields right (code, origin, destination, terminal, gate, seat, booking) | \(format(fieldAccuracy)) (\(flightFieldsRight)/\(flightFields)) | ≥ 0.97 |
                | meeting service and join link right | \(format(meetingAccuracy)) (\(meetingsRight)/\(meetings)) | ≥ 0.97 |
                | meeting id, passcode, dial-in right | \(format(meetingFieldAccuracy)) (\(meetingFieldsRight)/\(meetingFields)) | |
                | kind right | \(kindsRight)/\(items) | |
                \(misses.isEmpty ? "no misses" : "misses:\n  " + misses.joined(separator: "\n  "))
                """
        }
    }

    @Test func theCorpusMeetsTheTargets() {
        let cases = Self.cases()
        let figures = Figures(cases)
        print(figures.report)
        for set in Self.heldOut { print("held out (\(set)) alone:\n" + Figures(Self.cases([set])).report) }
        #expect(cases.count >= 140)
        #expect(figures.truePositives + figures.falseNegatives >= 40, "at least 40 flights")
        #expect(figures.negatives + figures.falsePositives >= 25, "at least 25 tricky non-flights")
        #expect(figures.meetings >= 40)
        #expect(figures.precision >= 0.98, "\(figures.report)")
        #expect(figures.recall >= 0.97, "\(figures.report)")
        #expect(figures.fieldAccuracy >= 0.97, "\(figures.report)")
        #expect(figures.meetingAccuracy >= 0.97, "\(figures.report)")
    }

    @Test func classifiedItemsMatchTheSchema() throws {
        let validator = EventSchemaTests.Validator(root: EventSchemaTests.schema)
        let classifier = Classifier(me: ["me@example.com"])
        for file in Self.files {
            let result = scan([fixture(file)], from: "2027-01-01", to: "2028-01-01", zone: "UTC")
            var lines: [String] = []
            OccurrenceJSON.writeLines(result.occurrences, classifier: classifier) {
                lines += String(decoding: $0, as: UTF8.self).split(separator: "\n").map(String.init)
            }
            for line in lines {
                let errors = validator.validate(
                    try EventSchemaTests.JSON.parse(line), validator.resolve("#/$defs/occurrence"))
                #expect(errors.isEmpty, "\(errors) in \(line)")
            }
        }
    }
}
