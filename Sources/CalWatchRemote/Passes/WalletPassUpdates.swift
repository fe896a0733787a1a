public import CalWatchCore
import CalWatchRuntime
import Foundation
public import Logging
public import ServiceLifecycle

/// Asks each wallet pass of `passes:` that names a web service for its latest version (PassKit's web service:
/// `GET {webServiceURL}/v1/passes/{type}/{serial}`, `Authorization: ApplePass {token}`, `If-Modified-Since`), so
/// that a gate or time the airline moves reaches calwatch without any other subscription: hourly from a day before
/// the pass's boarding time (or `relevantDate`), every 10 minutes in the last 3 hours, until then. A new version
/// is checked as any pass is (`WalletPass`) and renamed over the file, which the watch then reads; a 304 changes
/// nothing. The token goes to that address only: no redirect is followed. A service that fails is said once per
/// change of state, without the token. File work runs on a thread of its own.
public actor WalletPassUpdates: Service {
    private let executor = BlockingExecutor(name: "calwatch-passes")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let folders: [String]
    private let logger: Logger
    private let now: @Sendable () -> Instant
    /// When each pass file was last asked, and the `Last-Modified` its service gave.
    private var asked: [String: (at: Instant, lastModified: String?)] = [:]
    /// What each file's service last failed with, said once.
    private var failing: [String: String] = [:]
    /// Each file's pass, by modification time: read again only when the file changed.
    private var read: [String: (modified: Date, pass: WalletPass?)] = [:]

    public init(folders: [String], logger: Logger, now: @escaping @Sendable () -> Instant = RoutePoller.wallClock) {
        self.folders = folders
        self.logger = logger
        self.now = now
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully {
            await askDue()
            guard (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: .seconds(60)) })) != nil else {
                return
            }
        }
    }

    /// Asks every pass that is due; returns the files replaced by a newer version.
    @discardableResult public func askDue() async -> [String] {
        let instant = now()
        var replaced: [String] = []
        for path in passFiles() {
            guard let pass = pass(at: path), let service = pass.webService,
                let boarding = pass.boarding ?? pass.relevantDate,
                let interval = FlightStatusCache.interval(departure: boarding, now: instant)
            else { continue }
            let last = asked[path]
            if let last, instant.secondsSinceEpoch - last.at.secondsSinceEpoch < interval { continue }
            if await ask(service, for: path, since: last?.lastModified, at: instant) { replaced.append(path) }
        }
        return replaced
    }

    /// The wallet passes in the folders, at most `BoardingPasses.filesPerFolder` a folder.
    private func passFiles() -> [String] {
        folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                .filter { !$0.hasPrefix(".") && $0.hasSuffix(".pkpass") }.sorted()
                .prefix(BoardingPasses.filesPerFolder).map { folder + "/" + $0 }
        }
    }

    /// The pass in `path`, read again only when the file changed; `nil` for one that is not a wallet pass.
    private func pass(at path: String) -> WalletPass? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            attributes[.type] as? FileAttributeType == .typeRegular,
            let modified = attributes[.modificationDate] as? Date
        else { return nil }
        if let known = read[path], known.modified == modified { return known.pass }
        let pass = try? WalletPass(archive: BoardingPasses.file(at: path).get())
        read[path] = (modified, pass)
        return pass
    }

    /// One ask; returns whether the file was replaced.
    private func ask(_ service: WalletPass.WebService, for path: String, since: String?, at instant: Instant) async
        -> Bool
    {
        var request = HTTPClient.Request(url: service.latest)
        request.headers["Authorization"] = "ApplePass " + service.token
        request.headers["If-Modified-Since"] = since ?? Self.httpDate(modifiedAt: path)
        var limits = HTTPClient.Limits()
        limits.deadline = .seconds(30)
        limits.largest = WalletPass.largest
        // The token is for this address alone.
        limits.redirects = nil
        let result = await HTTPClient.send(request, limits: limits)
        asked[path] = (instant, asked[path]?.lastModified)
        let shown = "\(service.latest.scheme ?? "https")://\(service.latest.host ?? "")"
        let problem: String?
        var replaced = false
        switch result {
        case .failure(let failure): problem = failure.reason
        case .success(let answer) where answer.status == 304: problem = nil
        case .success(let answer) where answer.status == 200:
            // A new version is taken only as any pass is: whole, as its manifest says, with a boarding pass's barcode.
            if answer.truncated {
                problem = "a pass larger than \(WalletPass.largest >> 20) MiB"
            } else if let refused = Self.refusal(answer.body) {
                problem = "its new version is not taken: \(refused)"
            } else {
                do {
                    try AtomicFile.replace(path, with: answer.body, mode: 0o600, partial: Self.partial(path))
                    // Sent back as it came, when it is a date's length of printable text.
                    let lastModified = answer.headers["last-modified"].flatMap {
                        $0.utf8.count <= 64 && $0.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) ? $0 : nil
                    }
                    asked[path] = (instant, lastModified)
                    replaced = true
                    problem = nil
                    logger.notice("a wallet pass was updated by its issuer", metadata: ["pass": "\(path)"])
                } catch {
                    problem = "cannot write \(path): \(error)"
                }
            }
        case .success(let answer): problem = "HTTP \(answer.status)"
        }
        if let problem, failing[path] != problem {
            logger.warning(
                "a wallet pass's web service gave no update: \(problem); the pass stays as it is",
                metadata: ["pass": "\(path)", "service": "\(shown)"])
            failing[path] = problem
        } else if problem == nil, failing.removeValue(forKey: path) != nil {
            logger.notice("a wallet pass's web service answers again", metadata: ["pass": "\(path)"])
        }
        return replaced
    }

    /// Why a new version is not a pass calwatch takes; `nil` when it is.
    private static func refusal(_ body: Data) -> String? {
        do {
            let pass = try WalletPass(archive: body)
            guard pass.barcodes.contains(where: { (try? BoardingPass(barcode: $0)) != nil }) else {
                return "no boarding pass's barcode"
            }
            return nil
        } catch {
            return error.description
        }
    }

    /// The written file's name before its rename: hidden, so the watch reads only the whole pass.
    private static func partial(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".partial"
    }

    /// The file's modification time as an HTTP date (`Sun, 22 Nov 2027 17:45:00 GMT`).
    private static func httpDate(modifiedAt path: String) -> String? {
        guard let date = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        else { return nil }
        return HTTPDate.text(date)
    }
}
