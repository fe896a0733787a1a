import Foundation

/// Calendar text rendered for every status bar, and the output checked byte by byte, as the bars read it.
public enum FuzzedStatusBar {
    static let now = Instant(secondsSinceEpoch: 1_803_888_000)  // 2027-03-01T08:00:00Z

    /// Splits the input at its first two NUL bytes into summary, location and calendar name, shows an occurrence
    /// with them both soon and live, and traps when a format's output could drive its bar.
    public static func check(_ bytes: [UInt8]) {
        let parts = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        var component = CalendarComponent(kind: .event, uid: "fuzz")
        component.summary = parts.first
        component.location = parts.count > 1 ? parts[1] : nil
        let source = OccurrenceSource(
            calendar: parts.count > 2 ? parts[2] : "fuzz", component: component, allDay: false, timeZone: nil,
            displayZone: .utc)
        let occurrence = Occurrence(
            source: source, recurrenceID: nil, start: now.adding(seconds: 600), end: now.adding(seconds: 3600))
        for at in [now, now.adding(seconds: 900)] {
            let status = NextUp(
                [occurrence], facts: { _ in OccurrenceFacts() }, options: NextUp.Options(), now: at, zone: .utc)
            for width in [nil, 20] {
                let style = NextUpFormat.Style(maxWidth: width, pango: true)
                polybar(NextUpFormat.polybar.render(status, style: style))
                let waybar = Array(NextUpFormat.waybar.render(status, style: style).utf8)
                require(!waybar.contains(10), "a newline in waybar's line")
                for field in ["text", "tooltip"] { pango(jsonString(waybar, field)) }
                let i3blocks = NextUpFormat.i3blocks.render(status, style: style).split(
                    separator: "\n", omittingEmptySubsequences: false)
                require(i3blocks.count == 3, "i3blocks has three lines")
                for line in i3blocks.prefix(2) { pango(Array(line.utf8)) }
            }
        }
    }

    static func require(_ condition: Bool, _ what: String) {
        if !condition { fatalError("status-bar text survived: \(what)") }
    }

    /// Every `%` is followed by a zero-width space, except in calwatch's own colour tags around the line.
    static func polybar(_ line: String) {
        var bytes = Array(line.utf8)
        if bytes.starts(with: Array("%{F#".utf8)) {
            bytes.removeFirst(11)  // %{F#rrggbb}
            require(bytes.suffix(5).elementsEqual("%{F-}".utf8), "an unclosed colour")
            bytes.removeLast(5)
        }
        require(!bytes.contains(10), "a newline in polybar's line")
        let space = Array("\u{200B}".utf8)
        for index in bytes.indices where bytes[index] == UInt8(ascii: "%") {
            require(bytes[(index + 1)...].starts(with: space), "a % not followed by a zero-width space")
        }
    }

    /// No `<` or `>`, and every `&` starts one of the three entities calwatch writes.
    static func pango(_ bytes: [UInt8]) {
        require(!bytes.contains(UInt8(ascii: "<")) && !bytes.contains(UInt8(ascii: ">")), "a < or > for Pango")
        for index in bytes.indices where bytes[index] == UInt8(ascii: "&") {
            let rest = bytes[(index + 1)...]
            require(
                ["amp;", "lt;", "gt;"].contains { rest.starts(with: Array($0.utf8)) }, "a bare & for Pango")
        }
    }

    /// A string field of the one-line JSON object, unescaped.
    static func jsonString(_ json: [UInt8], _ field: String) -> [UInt8] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any],
            let text = object[field] as? String
        else {
            require(false, "waybar's JSON has no \(field)")
            return []
        }
        return Array(text.utf8)
    }
}
