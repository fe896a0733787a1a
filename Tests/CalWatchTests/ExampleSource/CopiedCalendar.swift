import CalWatchCore
import CalWatchRemote
import Foundation

/// `calendars: - copy: file:///srv/share/team.ics`: a calendar file on a share, copied into calwatch's cache when
/// it changes, so that a share that goes away leaves its last copy read. docs/development.md shows it as the
/// example of a kind of calendar added in one type.
struct CopiedCalendarSettings: SourceDriver {
    static let type = "copy"
    static let title = "a copied file"
    static let keys = ["keep"]
    static let schemes = ["file"]
    static let example = "file:///srv/share/team.ics"

    var address: String
    /// Whether the copy stays when the file is gone.
    var keep = true

    init(address: String) {
        self.address = address
    }

    var identity: String { address }

    init?(address: String, entry: ConfigurationSection) {
        self.init(address: address)
        if let keep = entry["keep"] {
            guard let value = keep.bool() else { return nil }
            self.keep = value
        }
    }

    func open(_ settings: SourceSettings, root: String, fetcher: FeedFetcher) -> (any RemoteCalendar)? {
        guard let path = URL(string: address)?.path, !path.isEmpty else { return nil }
        return CopiedCalendar(
            path: path, folder: root + "/copy/" + SHA256.hex(Array(address.utf8)).prefix(16),
            name: settings.name ?? "copy", keep: keep,
            every: .seconds(settings.every))
    }
}

/// One copied file and its cache folder: `calendar.ics` and `displayname`, read like any vdir collection.
struct CopiedCalendar: RemoteCalendar {
    let path: String
    let folder: String
    let name: String
    let keep: Bool
    let every: Duration

    var shownURL: String { "file://" + path }
    var hasCopy: Bool { FileManager.default.fileExists(atPath: folder + "/calendar.ics") }

    func fetch() async -> FeedFetcher.Outcome {
        let copy = folder + "/calendar.ics"
        guard let data = FileManager.default.contents(atPath: path) else {
            if !keep { try? FileManager.default.removeItem(atPath: copy) }
            return .failed("\(shownURL): cannot be read", retryAfter: nil)
        }
        if FileManager.default.contents(atPath: copy) == data { return .unchanged }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(name.utf8).write(to: URL(fileURLWithPath: folder + "/displayname"), options: .atomic)
            try data.write(to: URL(fileURLWithPath: copy), options: .atomic)
            return .changed(bytes: data.count)
        } catch {
            return .failed("\(folder): cannot be written", retryAfter: nil)
        }
    }
}
