import Foundation
import Testing

@testable import CalWatchCore

/// The items written outside the project (`corpus/outside`, see its SOURCE.md): flights, their facts and meetings
/// scored as the outside scorer scores them (a flight's code, origin and destination, each unless not determinable
/// or marked `stretch`; a meeting's service and join link), and held to the targets.
@Suite(.ownThread) struct OutsideCorpusTests {
    static let files = ["corpus/outside/set-a.ics", "corpus/outside/set-b.ics"]

    @Test func theOutsideSetsMeetTheTargets() {
        let classifier = Classifier(me: ["me@example.com"])
        var truePositives = 0
        var falsePositives = 0
        var falseNegatives = 0
        var negatives = 0
        var facts = 0
        var factsRight = 0
        var meetings = 0
        var meetingsRight = 0
        var misses: [String] = []
        for file in Self.files {
            let labels = ClassificationCorpusTests.labels(fixture(file))
            let result = scan([fixture(file)], from: "2027-01-01", to: "2028-06-01", zone: "UTC")
            #expect(Set(result.occurrences.map(\.uid)) == Set(labels.keys), "every labelled item is read")
            var seen: Set<String> = []
            for occurrence in result.occurrences where seen.insert(occurrence.uid).inserted {
                let (expected, join) = labels[occurrence.uid]!
                let found = classifier.facts(for: occurrence)
                let stretch = Set((expected["stretch"] ?? "").split(separator: ",").map(String.init))
                if expected["kind"] == "flight" {
                    if found.kind == .flight { truePositives += 1 } else { falseNegatives += 1 }
                    let read: [String: String?] = [
                        "code": found.flight?.code, "origin": found.flight?.origin?.code,
                        "destination": found.flight?.destination?.code,
                    ]
                    for (field, value) in read.sorted(by: { $0.key < $1.key })
                    where expected[field] != nil && !stretch.contains(field) {
                        facts += 1
                        if value == expected[field] {
                            factsRight += 1
                        } else {
                            misses.append("\(occurrence.uid): \(field) \(value ?? "nil"), expected \(expected[field]!)")
                        }
                    }
                } else if found.kind == .flight {
                    falsePositives += 1
                    misses.append("\(occurrence.uid): a false flight")
                } else {
                    negatives += 1
                }
                if expected["counted"] == "meeting" || expected["kind"] == "meeting" {
                    meetings += 1
                    let service = found.meeting?.service
                    let right =
                        found.kind.rawValue == expected["kind"]
                        && (join == nil || found.meeting?.joinURL == join)
                        && (expected["service"] == nil || service == expected["service"]
                            || Set([service, expected["service"]]) == ["zoom", "zoomgov"])
                    if right {
                        meetingsRight += 1
                    } else {
                        misses.append("\(occurrence.uid): meeting \(service ?? "nil")")
                    }
                }
            }
        }
        let precision = Double(truePositives) / Double(max(1, truePositives + falsePositives))
        let recall = Double(truePositives) / Double(max(1, truePositives + falseNegatives))
        let f1 = 2 * precision * recall / max(1e-9, precision + recall)
        let factAccuracy = Double(factsRight) / Double(max(1, facts))
        let meetingAccuracy = Double(meetingsRight) / Double(max(1, meetings))
        #expect(truePositives + falseNegatives >= 100 && negatives >= 100 && meetings >= 80)
        #expect(f1 >= 0.99, "F1 \(f1): \(misses)")
        #expect(factAccuracy >= 0.98, "facts \(factAccuracy): \(misses)")
        #expect(meetingAccuracy >= 0.99, "meetings \(meetingAccuracy): \(misses)")
        #expect(Double(falsePositives) / Double(max(1, negatives + falsePositives)) <= 0.01, "\(misses)")
    }
}
