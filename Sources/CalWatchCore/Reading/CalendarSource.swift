/// One readable unit of calendar data: a file (or standard input) and the collection it belongs to.
public struct CalendarSource: Hashable, Sendable {
    /// How the bytes are laid out.
    public enum Format: String, Sendable {
        /// iCalendar text (`.ics` file, vdir item, Radicale item, standard input).
        case iCalendar
        /// A WebDAV `multistatus` document with `calendar-data` elements (a CalDAV REPORT export).
        case calDAVMultistatus
        /// A wallet pass (`.pkpass`) of a folder of `passes:`: its flight as an item (`WalletPassCalendar`).
        case walletPass
    }

    /// The file path, or `-` for standard input.
    public var path: String
    public var format: Format
    /// The collection's display name from its metadata (`displayname`, `.Radicale.props`), if any.
    public var collectionName: String?
    /// The collection's colour from its metadata, if any.
    public var collectionColor: String?
    /// The name to use when neither metadata nor `X-WR-CALNAME` gives one: the directory or file name.
    public var fallbackName: String
    /// Whose calendar it is when one watcher holds several people's (a fleet's calendar name); empty otherwise.
    /// The same UID in two scopes is two occurrences, with events of their own.
    public var scope = ""

    /// Creates a source.
    public init(
        path: String, format: Format, collectionName: String? = nil, collectionColor: String? = nil,
        fallbackName: String
    ) {
        self.path = path
        self.format = format
        self.collectionName = collectionName
        self.collectionColor = collectionColor
        self.fallbackName = fallbackName
    }
}

extension String {
    /// `directory/name` in a string of exactly that length. A daemon keeps one path per calendar file, and both
    /// `+` and `NSString.appendingPathComponent` leave room to grow in each (up to four times the path, 38 MB for
    /// 100,000 files).
    public init(path directory: String, _ name: some StringProtocol) {
        let slash = directory.isEmpty || directory.utf8.last == UInt8(ascii: "/") ? 0 : 1
        let count = directory.utf8.count + slash + name.utf8.count
        self.init(unsafeUninitializedCapacity: count) { buffer in
            var end = buffer.initialize(fromContentsOf: directory.utf8)
            if slash == 1 {
                buffer[end] = UInt8(ascii: "/")
                end += 1
            }
            return buffer[end...].initialize(fromContentsOf: name.utf8)
        }
    }
}
