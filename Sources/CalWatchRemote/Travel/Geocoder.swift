public import CalWatchCore
import CalWatchRuntime
import Foundation
public import Logging
public import ServiceLifecycle

/// Asks a geocoder where an address is, through Nominatim's search API (`GET /search?q=…&format=jsonv2&limit=1`,
/// the answer a list whose first entry has `lat` and `lon` as text; an empty list: no such place), with the
/// configured User-Agent, as the public instance's usage policy asks. Bounded like every server: 10 s, a megabyte.
public enum Geocoder {
    /// The point for `query`, `nil` when the geocoder knows no such place, or why it could not be asked.
    static func point(
        for query: String, geocoder: TravelSettings.Geocoder, deadline: Duration = .seconds(10)
    ) async -> Result<GeoPoint?, HTTPClient.Failure> {
        guard let request = request(query, geocoder: geocoder) else {
            return .failure(.init(reason: "the geocoder's address is not usable"))
        }
        var limits = HTTPClient.Limits()
        limits.deadline = deadline
        limits.largest = 1 << 20
        return await HTTPClient.send(request, limits: limits).flatMap(point(in:))
    }

    static func request(_ query: String, geocoder: TravelSettings.Geocoder) -> HTTPClient.Request? {
        var base = geocoder.url
        while base.hasSuffix("/") { base.removeLast() }
        guard var parts = URLComponents(string: base + "/search") else { return nil }
        parts.queryItems = [
            URLQueryItem(name: "q", value: query), URLQueryItem(name: "format", value: "jsonv2"),
            URLQueryItem(name: "limit", value: "1"),
        ]
        return parts.url.map { HTTPClient.Request(url: $0, headers: ["User-Agent": geocoder.userAgent]) }
    }

    static func point(in answer: HTTPClient.Answer) -> Result<GeoPoint?, HTTPClient.Failure> {
        let document = try? JSONSerialization.jsonObject(with: answer.body)
        guard (200..<300).contains(answer.status), let places = document as? [[String: Any]] else {
            let said = ((document as? [String: Any])?["error"] as? [String: Any])?["message"] as? String
            return .failure(.init(reason: "HTTP \(answer.status)" + (said.map { ": " + $0 } ?? "")))
        }
        guard let first = places.first else { return .success(nil) }
        guard let lat = (first["lat"] as? String).flatMap(Double.init),
            let lon = (first["lon"] as? String).flatMap(Double.init),
            let point = GeoPoint(latitude: lat, longitude: lon)
        else { return .failure(.init(reason: "an answer without a usable lat and lon")) }
        return .success(point)
    }

    /// Why the geocoder cannot be asked, or `nil` when it answers a search in its own shape: what `calwatch check`
    /// says of `travel.geocoder`.
    public static func unreachable(_ geocoder: TravelSettings.Geocoder) async -> String? {
        switch await point(for: "Berlin", geocoder: geocoder) {
        case .success: return nil
        case .failure(let failure): return failure.reason
        }
    }

    /// Where the answers are kept: `travel.geocoder.cache`, else `geocoder.json` in calwatch's cache folder.
    public static func cachePath(_ geocoder: TravelSettings.Geocoder) -> String {
        geocoder.cachePath ?? FeedCache.root() + "/geocoder.json"
    }

    /// The answers kept on disk (an empty cache when there are none yet).
    public static func loadCache(_ geocoder: TravelSettings.Geocoder) -> GeocodeCache {
        FileManager.default.contents(atPath: cachePath(geocoder)).map(GeocodeCache.init(data:)) ?? GeocodeCache()
    }

    /// Keeps the answers on disk (private: the addresses are the user's), on a thread of its own.
    actor CacheFile {
        private let executor = BlockingExecutor(name: "calwatch-geocoder")
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        let path: String

        init(_ geocoder: TravelSettings.Geocoder) {
            path = Geocoder.cachePath(geocoder)
        }

        func save(_ cache: GeocodeCache) throws {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            try AtomicFile.replace(path, with: cache.encoded(), mode: 0o600)
        }
    }

    /// Asks the addresses `cache` wants, one a second, at most `budget` of them, and keeps the answers on disk:
    /// what a one-shot command does before planning. Returns why the geocoder gave no answer, as it last said.
    public static func answerWanted(
        in cache: GeocodeCache, geocoder: TravelSettings.Geocoder, budget: Int
    ) async -> String? {
        var failure: String?
        var last: ContinuousClock.Instant?
        for query in cache.takeWanted().prefix(budget) {
            if let last { try? await Task.sleep(until: last + .seconds(1)) }
            let answer = await point(for: query, geocoder: geocoder)
            // Counted from the answer: requests then reach the server a second apart however long each took.
            last = .now
            switch answer {
            case .success(let point): cache.store(point, for: query)
            case .failure(let reason):
                cache.unanswered(query)
                failure = reason.reason
            }
        }
        try? await CacheFile(geocoder).save(cache)
        return failure
    }
}

/// Asks the geocoder the addresses planning found no point for (`GeocodeCache`), one a second at most, keeps the
/// answers on disk and says when they came (`changed`), so the watch plans their occurrences again. It sleeps until
/// planning asks. A geocoder that fails is said once per change of state; its addresses stay unplaced until the
/// next change asks again.
public final class GeocodePoller: Service {
    private let geocoder: TravelSettings.Geocoder
    private let cache: GeocodeCache
    private let logger: Logger
    private let changed: @Sendable () -> Void
    private let file: Geocoder.CacheFile

    public init(
        geocoder: TravelSettings.Geocoder, cache: GeocodeCache, logger: Logger,
        changed: @escaping @Sendable () -> Void
    ) {
        file = Geocoder.CacheFile(geocoder)
        self.geocoder = geocoder
        self.cache = cache
        self.logger = logger
        self.changed = changed
    }

    public func run() async throws {
        let (bells, bell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        cache.onWanted { bell.yield() }
        bell.yield()
        var last: ContinuousClock.Instant?
        var failing: String?
        for await _ in bells.cancelOnGracefulShutdown() {
            var answered = 0
            for query in cache.takeWanted() {
                // The public instance's policy: an absolute maximum of one request a second.
                if let last {
                    guard
                        (try? await cancelWhenGracefulShutdown({ try await Task.sleep(until: last + .seconds(1)) }))
                            != nil
                    else { return }
                }
                let result = await cancelWhenGracefulShutdown {
                    await Geocoder.point(for: query, geocoder: self.geocoder)
                }
                // Counted from the answer: requests then reach the server a second apart however long each took
                // to arrive (a request sent late by a busy machine must not follow the last too closely).
                last = .now
                guard !Task.isShuttingDownGracefully else { return }
                switch result {
                case .success(let point):
                    cache.store(point, for: query)
                    answered += 1
                    if failing != nil {
                        logger.notice("the geocoder answers again", metadata: ["geocoder": "\(geocoder.shownURL)"])
                        failing = nil
                    }
                case .failure(let failure):
                    cache.unanswered(query)
                    if failing != failure.reason {
                        logger.warning(
                            "the geocoder gave no answer: \(failure.reason); addresses stay unplaced until it does",
                            metadata: ["geocoder": "\(geocoder.shownURL)"])
                        failing = failure.reason
                    }
                }
            }
            guard answered > 0 else { continue }
            do {
                try await file.save(cache)
            } catch {
                logger.warning("cannot keep the geocoder's answers in \(file.path): \(error)")
            }
            changed()
        }
    }
}
