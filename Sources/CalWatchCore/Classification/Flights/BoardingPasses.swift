import Foundation

/// The boarding passes in the folders of `passes:` (`calwatch pass add` writes there): each `*.bcbp` file a pass's
/// barcode text. A pass is joined with the calendar's flight of the same number, day of the year on the departure
/// airport's clock, and route, and gives it the seat, class and check-in number. The folders are a stranger's
/// files too: at most `filesPerFolder` passes a folder, `BoardingPass.largest` bytes a file, regular files only; a
/// file that is not a pass is said with its reason and left out.
public struct BoardingPasses: Sendable {
    /// A pass's leg with the file it came from.
    public struct Entry: Sendable, Hashable {
        public var leg: BoardingPass.Leg
        public var passenger: String
        public var file: String
    }

    /// The legs by flight code (`AC834`).
    private var legs: [String: [Entry]] = [:]
    /// Files left out, each with why.
    public private(set) var problems: [String] = []

    public static let filesPerFolder = 1000

    public init() {}

    public init(_ entries: [Entry]) {
        for entry in entries { legs[entry.leg.code, default: []].append(entry) }
    }

    public var isEmpty: Bool { legs.isEmpty }

    /// Every leg, by file and order in its pass.
    public var entries: [Entry] {
        legs.values.flatMap { $0 }.sorted { ($0.file, $0.leg.code) < ($1.file, $1.leg.code) }
    }

    /// The passes in `folders`; a folder that does not exist has none.
    public static func read(folders: [String]) -> BoardingPasses {
        var entries: [Entry] = []
        var problems: [String] = []
        for folder in folders {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            let passes = names.filter { $0.hasSuffix(".bcbp") && !$0.hasPrefix(".") }.sorted()
            if passes.count > filesPerFolder {
                problems.append(
                    "\(folder): \(passes.count) passes, the first \(filesPerFolder) read; remove those of past flights")
            }
            for name in passes.prefix(filesPerFolder) {
                let path = folder + "/" + name
                switch Self.pass(at: path) {
                case .success(let pass):
                    entries += pass.legs.map { Entry(leg: $0, passenger: pass.passenger, file: path) }
                case .failure(let problem): problems.append("\(path): \(problem.reason)")
                }
            }
        }
        var passes = BoardingPasses(entries)
        passes.problems = problems
        return passes
    }

    /// Why a file is not read as a pass.
    public struct FileProblem: Error, Sendable {
        public var reason: String
    }

    /// The pass in the file at `path`: a regular file of at most `BoardingPass.largest` bytes holding a barcode.
    public static func pass(at path: String) -> Result<BoardingPass, FileProblem> {
        var status = stat()
        guard lstat(path, &status) == 0 else { return .failure(.init(reason: "cannot be read")) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .failure(.init(reason: "not a regular file")) }
        guard status.st_size <= BoardingPass.largest else {
            return .failure(.init(reason: "larger than a boarding pass's barcode (\(BoardingPass.largest) bytes)"))
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else { return .failure(.init(reason: "cannot be read as text")) }
        do {
            return .success(try BoardingPass(barcode: text))
        } catch {
            return .failure(.init(reason: "not a boarding pass: \(error)"))
        }
    }

    /// The leg of a pass for `flight` departing at `departure`: the same code, the same day of the year on the
    /// departure airport's clock (`zone`), and no other route. The newest file's when several passes say it.
    public func leg(for flight: FlightFacts, departure: Instant, zone: ZoneRules) -> Entry? {
        guard let code = flight.code, let candidates = legs[code] else { return nil }
        let date = zone.wallClock(at: departure).date
        let dayOfYear = Int(date.daysSinceEpoch - CalendarDate(year: date.year, month: 1, day: 1).daysSinceEpoch) + 1
        return candidates.last { entry in
            entry.leg.dayOfYear == dayOfYear
                && (flight.origin.map { $0.code == entry.leg.origin } ?? true)
                && (flight.destination.map { $0.code == entry.leg.destination } ?? true)
        }
    }
}
