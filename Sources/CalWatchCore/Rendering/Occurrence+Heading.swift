extension Occurrence {
    /// The first line `explain` and `why` print for an occurrence: `"Standup"  [Work, line 12, UID abc]`. Calendar
    /// text on one line: a newline in a summary cannot forge a line of the report.
    public var heading: String {
        let line = source.component.line.map { ", line \($0)" } ?? ""
        return TerminalText.safe(
            "\(summary.map { "\"\($0)\"" } ?? "(no summary)")  [\(calendar)\(line), UID \(uid)]", keepingLines: false)
    }
}
