import Foundation
import Testing

@testable import CalWatchCore

/// The fresh corpus (`Fixtures/corpus/fresh`, written by `scripts/write-flight-corpus.py` in the shapes of its
/// `SHAPES.md`): 1,250 items from booking sites, agencies, airlines, travel managers and hands in fifteen
/// languages, over a third of them look-alikes. A fifth (`held-back.ics`) is read by no test of the suite: it is
/// scored once, when the rules are done, by `make corpus-held-back`.
///
/// `make corpus` prints the figures of each shape; its first run, before any rule changed, is in BENCHMARKS.md.
@Suite(.ownThread) struct FreshCorpusTests {
    static let files = ["corpus/fresh/flights.ics", "corpus/fresh/look-alikes.ics", "corpus/fresh/meetings.ics"]

    /// The shape (`X-CALWATCH-SHAPE`) each item was written in, by UID.
    static func shapes(_ files: [String]) -> [String: String] {
        var shapes: [String: String] = [:]
        for file in files {
            let text = try! String(contentsOfFile: fixture(file), encoding: .utf8)
            var uid = ""
            for line in text.components(separatedBy: "\r\n") {
                if line.hasPrefix("UID:") { uid = String(line.dropFirst(4)) }
                if line.hasPrefix("X-CALWATCH-SHAPE:") {
                    shapes[uid] = String(line.dropFirst("X-CALWATCH-SHAPE:".count).prefix { $0 != ";" })
                }
            }
        }
        return shapes
    }

    /// The corpus's figures, then a line per shape: items, and how many were classified and read right.
    static func report(_ files: [String]) -> (figures: ClassificationCorpusTests.Figures, text: String) {
        let cases = ClassificationCorpusTests.cases(files)
        let shapes = shapes(files)
        let figures = ClassificationCorpusTests.Figures(cases)
        // Items written to look like flights, whether their attendees make them meetings or not.
        let lookAlikes = cases.filter { $0.expected["kind"] != "flight" && shapes[$0.uid] != "meeting" }
        let falseFlights = lookAlikes.filter { $0.facts.kind == .flight }.count
        var lines = [
            String(
                format: "flight F1 %.3f; false flights %.1f per 100 look-alikes (%d of %d)", figures.f1,
                100 * Double(falseFlights) / Double(max(1, lookAlikes.count)), falseFlights, lookAlikes.count),
            "| shape | items | kind right | all fields right |", "|---|---:|---:|---:|",
        ]
        let missed = Set(figures.misses.map { String($0.prefix { $0 != " " }) })
        for (shape, items) in Dictionary(grouping: cases, by: { shapes[$0.uid] ?? "?" }).sorted(by: { $0.key < $1.key })
        {
            let kinds = items.filter { $0.facts.kind.rawValue == $0.expected["kind"] }.count
            let whole = items.filter { !missed.contains($0.uid) }.count
            lines.append("| \(shape) | \(items.count) | \(kinds) | \(whole) |")
        }
        return (figures, figures.report + "\n" + lines.joined(separator: "\n"))
    }

    /// The four fifths the weights were fitted on, against the targets: a guard against a change that
    /// breaks what was right, not a measure of unseen calendars (the fifth held back is that).
    @Test func theFreshCorpusMeetsTheTargets() {
        let (figures, text) = Self.report(Self.files)
        print("calwatch fresh corpus:\n" + text)
        #expect(figures.items >= 1_000)
        #expect(figures.negatives + figures.falsePositives >= 400, "look-alikes")
        #expect(figures.f1 >= 0.98, "\(text)")
        #expect(figures.fieldAccuracy >= 0.97, "\(text)")
        #expect(figures.meetingAccuracy >= 0.98, "\(text)")
        let falseFlights = text.firstMatch(of: /false flights ([0-9.]+) per 100/).flatMap { Double($0.1) }
        #expect(falseFlights.map { $0 <= 1 } == true, "\(text)")
    }

    /// Scored once, when the rules are done: `make corpus-held-back`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["CALWATCH_SCORE_HELD_BACK"] == "1"))
    func theHeldBackFifth() {
        print("calwatch fresh corpus, the fifth held back:\n" + Self.report(["corpus/fresh/held-back.ics"]).text)
    }
}

/// The flight decision's features of every labelled item outside the fifth held back, for
/// `scripts/fit-flight-weights.py` (`make fit-flights` sets `CALWATCH_WRITE_FEATURES` to the file to write).
@Suite struct FlightFeatureExport {
    static let files = ClassificationCorpusTests.files + FreshCorpusTests.files + OutsideCorpusTests.files

    @Test(.enabled(if: ProcessInfo.processInfo.environment["CALWATCH_WRITE_FEATURES"] != nil))
    func writeFeatures() throws {
        let path = ProcessInfo.processInfo.environment["CALWATCH_WRITE_FEATURES"]!
        var lines: [String] = []
        for file in Self.files {
            let labels = ClassificationCorpusTests.labels(fixture(file))
            let shapes = Self.shapes(fixture(file))
            let result = scan([fixture(file)], from: "2027-01-01", to: "2028-01-01", zone: "UTC")
            for occurrence in result.occurrences {
                let expected = labels[occurrence.uid]!.expect
                let duration =
                    occurrence.allDay
                    ? nil : Double(occurrence.end.secondsSinceEpoch - occurrence.start.secondsSinceEpoch)
                let candidate = Self.candidate(
                    ClassifierInput(component: occurrence.source.component, duration: duration))
                var line: [String: Any] = ["uid": occurrence.uid, "file": file, "flight": expected["kind"] == "flight"]
                // The producer and language, for folds that leave a whole one out.
                let shape = shapes[occurrence.uid]
                line["shape"] = shape?.producer ?? file
                line["lang"] = shape?.language ?? "-"
                if let candidate {
                    let flight = candidate.flight
                    let found: [String: String?] = [
                        "code": flight.code, "origin": flight.origin?.code, "destination": flight.destination?.code,
                        "terminal": flight.terminal, "gate": flight.gate, "seat": flight.seat,
                        "booking": flight.bookingReference,
                    ]
                    line["features"] = candidate.features.map(\.rawValue).sorted()
                    line["fieldsRight"] = found.filter { $0.value == expected[$0.key] }.count
                    line["fields"] = found.count
                }
                let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
                lines.append(String(decoding: data, as: UTF8.self))
            }
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(lines.count >= 1_500)
    }
}

extension FlightFeatureExport {
    /// Each item's `X-CALWATCH-SHAPE:producer;lang=xx`, by UID.
    static func shapes(_ path: String) -> [String: (producer: String, language: String?)] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        var shapes: [String: (producer: String, language: String?)] = [:]
        var uid = ""
        for line in text.components(separatedBy: "\r\n") {
            if line.hasPrefix("UID:") { uid = String(line.dropFirst(4)) }
            guard line.hasPrefix("X-CALWATCH-SHAPE:") else { continue }
            let parts = line.dropFirst("X-CALWATCH-SHAPE:".count).split(separator: ";")
            let language = parts.dropFirst().first { $0.hasPrefix("lang=") }.map { String($0.dropFirst(5)) }
            shapes[uid] = (parts.first.map(String.init) ?? "-", language)
        }
        return shapes
    }

    /// An item's features and the facts read were it a flight (`nil`: nothing hints at one), whatever the weights
    /// would decide: what `scripts/fit-flight-weights.py` fits them on.
    static func candidate(_ input: ClassifierInput) -> (features: Set<FlightFeature>, flight: FlightFacts)? {
        let always = FlightClassifier(me: ["me@example.com"], weights: FlightWeights(bias: 1, weights: [:]))
        var scan = FlightClassifier.Scan(input: input, classifier: always)
        scan.run()
        guard let flight = scan.result(), let features = scan.weighed else { return nil }
        return (features, flight)
    }
}
