public import Foundation

/// The boarding passes in the folders of `passes:` (`calwatch pass add` writes there): each `*.bcbp` file a pass's
/// barcode text, each `*.pkpass` a wallet pass whose barcode is one (`WalletPass`), with its gate, terminal and
/// boarding time. A pass is joined with the calendar's flight of the same number, day of the year on the departure
/// airport's clock, and route, and gives it the seat, class and check-in number. The folders are a stranger's
/// files too: at most `filesPerFolder` passes a folder, `BoardingPass.largest` bytes a file, regular files only; a
/// file that is not a pass is said with its reason and left out.
public struct BoardingPasses: Sendable {
    /// A pass's leg with the file it came from.
    public struct Entry: Sendable, Hashable {
        public var leg: BoardingPass.Leg
        public var passenger: String
        public var file: String
        /// A wallet pass's signature: present or not; `nil` for a barcode alone.
        public var signed: Bool?
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
            let passes = names.filter { isPass($0) }.sorted()
            if passes.count > filesPerFolder {
                problems.append(
                    "\(folder): \(passes.count) passes, the first \(filesPerFolder) read; remove those of past flights")
            }
            for name in passes.prefix(filesPerFolder) {
                let path = folder + "/" + name
                switch Self.pass(at: path) {
                case .success(let pass):
                    entries += pass.legs.map {
                        Entry(leg: $0, passenger: pass.passenger, file: path, signed: pass.signed)
                    }
                case .failure(let problem): problems.append("\(path): \(problem.reason)")
                }
            }
        }
        var passes = BoardingPasses(entries)
        passes.problems = problems
        return passes
    }

    /// The passes without the wallet passes whose signature is not of their manifest (a pass altered since it was
    /// issued, manifest and all), each said: what `pass add` refuses is not joined when it is put in a folder by
    /// hand either. Apple's vouching is not required here (`pass list` says it).
    public func withoutForgedSignatures() async -> BoardingPasses {
        var kept = self
        for file in Set(entries.filter { $0.signed == true }.map(\.file)).sorted() {
            guard case .success(let data) = Self.file(at: file), let wallet = try? WalletPass(archive: data),
                case .invalid(let reason) = await WalletPassSignature.check(wallet)
            else { continue }
            kept.legs = kept.legs.mapValues { $0.filter { $0.file != file } }.filter { !$0.value.isEmpty }
            kept.problems.append("\(file): altered: its signature is not of this pass: \(reason)")
        }
        return kept
    }

    /// Whether a file's name is a pass's: `.bcbp` or `.pkpass`, not hidden (a file being written).
    public static func isPass(_ name: String) -> Bool {
        !name.hasPrefix(".") && (name.hasSuffix(".bcbp") || name.hasSuffix(".pkpass"))
    }

    /// Why a file is not read as a pass.
    public struct FileProblem: Error, Sendable {
        public var reason: String
    }

    /// The pass in the file at `path`: a regular file holding a barcode (at most `BoardingPass.largest` bytes), or
    /// a wallet pass (at most `WalletPass.largest`) whose barcode is a boarding pass's.
    public static func pass(at path: String) -> Result<BoardingPass, FileProblem> {
        file(at: path).flatMap { pass(in: $0, wallet: path.hasSuffix(".pkpass")) }
    }

    /// The bytes of the pass file at `path`: a regular file (not a link) of at most a pass's size, read no further
    /// than that whatever it became since it was looked at.
    public static func file(at path: String) -> Result<Data, FileProblem> {
        var status = stat()
        guard lstat(path, &status) == 0 else { return .failure(.init(reason: "cannot be read")) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .failure(.init(reason: "not a regular file")) }
        let wallet = path.hasSuffix(".pkpass")
        let largest = wallet ? WalletPass.largest : BoardingPass.largest
        guard status.st_size <= largest else {
            return .failure(
                .init(
                    reason: wallet
                        ? "larger than a wallet pass (\(largest >> 20) MiB)"
                        : "larger than a boarding pass's barcode (\(largest) bytes)"))
        }
        guard let handle = FileHandle(forReadingAtPath: path) else { return .failure(.init(reason: "cannot be read")) }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: largest + 1) ?? Data(), data.count <= largest else {
            return .failure(.init(reason: "cannot be read whole"))
        }
        return .success(data)
    }

    /// The pass in a file's bytes: a barcode's text, or a wallet pass whose barcode is a boarding pass's.
    public static func pass(in data: Data, wallet: Bool) -> Result<BoardingPass, FileProblem> {
        guard wallet else {
            guard let text = String(data: data, encoding: .utf8) else {
                return .failure(.init(reason: "cannot be read as text"))
            }
            do {
                return .success(try BoardingPass(barcode: text))
            } catch {
                return .failure(.init(reason: "not a boarding pass: \(error)"))
            }
        }
        let walletPass: WalletPass
        do {
            walletPass = try WalletPass(archive: data)
        } catch {
            return .failure(.init(reason: "not a wallet pass: \(error)"))
        }
        // The first barcode that is a boarding pass's; the wallet's gate, terminal and boarding time on its legs.
        var refusal: BoardingPass.Problem?
        for text in walletPass.barcodes {
            do {
                var pass = try BoardingPass(barcode: text)
                pass.signed = walletPass.signed
                for index in pass.legs.indices where index == 0 || pass.legs.count == 1 {
                    pass.legs[index].gate = walletPass.gate
                    pass.legs[index].terminal = walletPass.terminal
                    pass.legs[index].boarding = walletPass.boarding
                }
                return .success(pass)
            } catch {
                refusal = error
            }
        }
        return .failure(
            .init(
                reason: refusal.map { "its barcode is not a boarding pass's: \($0)" }
                    ?? "a wallet pass without a barcode (a boarding pass's carries its BCBP)"))
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
