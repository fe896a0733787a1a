/// One item of a calendar kept in several files.
///
/// A vdir holds one item per file and one file per UID; two files with the same UID in one collection are copies
/// (a sync that failed half-way, an editor's backup saved as `.ics`). Every copy used to be shown and reminded.
/// The newest copy is kept (higher SEQUENCE, then later LAST-MODIFIED, then the first path by name), and each
/// other file gets a warning naming the one kept. The same UID in two different calendars is left alone here:
/// those are one invitation in two places, shown in both and reminded once (`OccurrenceKey`).
enum DuplicateItems {
    /// Drops the occurrences of every copy but the newest; `files` gives the file each block came from.
    static func resolve(_ blocks: inout [OccurrenceBlock], files: [String]) -> [CalendarProblem] {
        struct Item: Hashable {
            var calendar: String
            var uid: String
        }
        // The items in more than one file: the only ones whose copies are compared (a table of every item's
        // components would be the largest thing a scan of one big file holds).
        var firstFile: [Item: String] = [:]
        var repeated = Set<Item>()
        for (block, file) in zip(blocks, files) {
            // Every source of a block is of one item.
            guard let occurrence = block.first else { continue }
            let item = Item(calendar: occurrence.calendar, uid: occurrence.uid)
            if let first = firstFile[item] {
                if first != file { repeated.insert(item) }
            } else {
                firstFile[item] = file
            }
        }
        firstFile = [:]
        guard !repeated.isEmpty else { return [] }
        // The newest master or single component of each file, per item.
        var copies: [Item: [String: CalendarComponent]] = [:]
        for (block, file) in zip(blocks, files) {
            guard let first = block.first, repeated.contains(Item(calendar: first.calendar, uid: first.uid)) else {
                continue
            }
            let item = Item(calendar: first.calendar, uid: first.uid)
            var previous: ObjectIdentifier?
            for occurrence in block where ObjectIdentifier(occurrence.source) != previous {
                previous = ObjectIdentifier(occurrence.source)
                let component = occurrence.source.component
                if let held = copies[item]?[file], !OccurrenceExpander.isNewer(component, than: held) { continue }
                copies[item, default: [:]][file] = component
            }
        }
        var problems: [CalendarProblem] = []
        var leftOut: [Item: Set<String>] = [:]
        for (item, byFile) in copies where byFile.count > 1 {
            // Newest first: a total order, so the copy kept does not depend on the order files were read in.
            let ordered = byFile.sorted { a, b in
                if a.value.sequence != b.value.sequence { return a.value.sequence > b.value.sequence }
                let left = a.value.lastModified?.wallClock
                let right = b.value.lastModified?.wallClock
                if left != right, let left, let right { return left > right }
                if (left == nil) != (right == nil) { return left != nil }
                return a.key < b.key
            }
            let (kept, keptComponent) = ordered[0]
            leftOut[item] = Set(ordered.dropFirst().map(\.key))
            for (file, component) in ordered.dropFirst() {
                var message =
                    "this item is also in \(kept) of calendar '\(item.calendar)', which is newer or first by name; "
                    + "this copy is left out. A calendar holds each UID once: remove the copy."
                // What the copy left out deleted and the one kept does not: those instances come back.
                let lost = component.exceptionDates.filter { !keptComponent.exceptionDates.contains($0) }
                if !lost.isEmpty {
                    message +=
                        " Its EXDATEs " + lost.prefix(10).map(\.description).joined(separator: ", ")
                        + (lost.count > 10 ? " (and \(lost.count - 10) more)" : "")
                        + " are not in the copy kept, so those instances are shown: move them there first."
                }
                problems.append(
                    CalendarProblem(
                        severity: .warning, path: file, line: component.line, uid: item.uid, message: message))
            }
        }
        guard !leftOut.isEmpty else { return [] }
        for index in blocks.indices {
            guard let first = blocks[index].first,
                leftOut[Item(calendar: first.calendar, uid: first.uid)]?.contains(files[index]) == true
            else { continue }
            blocks[index] = OccurrenceBlock([])
        }
        return problems.sorted { ($0.path, $0.line ?? 0) < ($1.path, $1.line ?? 0) }
    }
}
