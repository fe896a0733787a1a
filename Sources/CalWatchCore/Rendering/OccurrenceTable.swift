/// A plain-text table of occurrences for people (`calwatch scan --format table`), in the user's zone.
public enum OccurrenceTable {
    /// The rendered table, one line per occurrence under a header, ending with a count; with a classifier, a
    /// KIND column says which are flights (with their code and route) and meetings (with their service).
    public static func render(_ occurrences: [Occurrence], zone: ZoneRules, classifier: Classifier? = nil) -> String {
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        var rows: [[String]] = [["WHEN (\(zone.identifier))", "", "CALENDAR", "SUMMARY", "KIND", "STATUS"]]
        for occurrence in occurrences {
            let start = zone.wallClock(at: occurrence.start)
            let end = zone.wallClock(at: occurrence.end)
            let day = weekdays[Int(((start.date.daysSinceEpoch % 7) + 7) % 7)] + " " + start.date.description
            let time: String
            if occurrence.allDay {
                let days = Int((occurrence.end.secondsSinceEpoch - occurrence.start.secondsSinceEpoch + 3600) / 86_400)
                time = days > 1 ? "all day (\(days) days)" : "all day"
            } else if occurrence.start == occurrence.end {
                time = clock(start)
            } else if start.date == end.date {
                time = clock(start) + "-" + clock(end)
            } else {
                time = clock(start) + "-" + end.date.description + " " + clock(end)
            }
            let status = OccurrenceJSON.statusText(occurrence.status) ?? ""
            rows.append(
                [
                    day, time, oneLine(occurrence.calendar), oneLine(occurrence.summary ?? "(no title)"),
                    classifier.map { kind($0.classification(of: occurrence)) } ?? "", status,
                ])
        }
        var widths = [Int](repeating: 0, count: 6)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        var text = ""
        for row in rows {
            var line = ""
            for (index, cell) in row.enumerated() {
                line += index == row.count - 1 ? cell : cell.padding(to: widths[index] + 2)
            }
            while line.last == " " { line.removeLast() }
            text += line + "\n"
        }
        text += "\(occurrences.count) occurrence\(occurrences.count == 1 ? "" : "s")\n"
        return text
    }

    /// `flight BA987 BER→LHR`, `meeting zoom`, `meeting`, or nothing for a plain event.
    private static func kind(_ classification: Classification) -> String {
        switch classification.kind {
        case .flight:
            let flight = classification.flight
            let route = flight.map { "\($0.origin?.code ?? "?")→\($0.destination?.code ?? "?")" } ?? ""
            return ["flight", flight?.code ?? "", route].filter { !$0.isEmpty }.joined(separator: " ")
        case .meeting:
            return ["meeting", classification.meeting?.service ?? ""].filter { !$0.isEmpty }.joined(separator: " ")
        case .event: return ""
        }
    }

    private static func clock(_ time: LocalDateTime) -> String {
        var text = ""
        ISO8601Text.appendPadded(time.hour, width: 2, to: &text)
        text += ":"
        ISO8601Text.appendPadded(time.minute, width: 2, to: &text)
        return text
    }

    /// Calendar text is a stranger's: no newlines or control characters reach the terminal, and long titles are cut.
    private static func oneLine(_ text: String) -> String {
        let cleaned = TerminalText.safe(text, keepingLines: false)
        return cleaned.count > 60 ? String(cleaned.prefix(59)) + "…" : cleaned
    }
}

extension String {
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
