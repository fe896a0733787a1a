import CoreMetrics
import Foundation
public import Prometheus
public import ServiceLifecycle

/// calwatch's metrics in Prometheus' text format, written to a file for node_exporter's textfile collector
/// (`metrics: { textfile: … }`): the whole file replaced at once (written beside it, then renamed), so the collector
/// never reads half of it. `bootstrap` makes swift-metrics record into it, once per process.
public final class PrometheusTextfile: Sendable {
    public let path: String
    public let registry: PrometheusCollectorRegistry

    /// The file at `path` of what is recorded in `registry`.
    public init(path: String, registry: PrometheusCollectorRegistry) {
        self.path = path
        self.registry = registry
    }

    /// The file at `path` of a registry of its own.
    public convenience init(path: String) { self.init(path: path, registry: PrometheusCollectorRegistry()) }

    /// Makes swift-metrics record into this file's registry, every metric with its help text. Once per process.
    public func bootstrap() { Self.bootstrap(registry) }

    /// Makes swift-metrics record into `registry` (which the local server's `/metrics` shows, and a file writes).
    public static func bootstrap(_ registry: PrometheusCollectorRegistry) {
        MetricsSystem.bootstrap(HelpfulFactory(registry: registry))
    }

    /// The registry swift-metrics records into for a daemon, bootstrapped when first asked for. swift-metrics is
    /// one per process and bootstrapped once, so every daemon built in a process (one; several in a test) shares
    /// it.
    public static let daemonRegistry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        bootstrap(registry)
        return registry
    }()

    /// Writes what was recorded so far (mode 0644, its folder made when missing).
    public func write() throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        // node_exporter reads only files ending in .prom, so the one being written does not count.
        let partial = path + ".\(getpid()).partial"
        var text: [UInt8] = []
        registry.emit(into: &text)
        try AtomicFile.replace(path, with: Data(text), mode: 0o644, partial: partial)
    }

    /// Writes the file every `every` on `clock` while the daemon runs, and once more when it stops.
    public struct Service<WaitClock: Clock>: ServiceLifecycle.Service where WaitClock.Duration == Duration {
        let file: PrometheusTextfile
        let every: Duration
        let clock: WaitClock
        let failed: @Sendable (any Error) -> Void

        public init(
            _ file: PrometheusTextfile, every: Duration, clock: WaitClock,
            failed: @escaping @Sendable (any Error) -> Void
        ) {
            self.file = file
            self.every = every
            self.clock = clock
            self.failed = failed
        }

        public func run() async throws {
            var reported = false
            func write() {
                do {
                    try file.write()
                    reported = false
                } catch {
                    // Told once until a write works again.
                    if !reported { failed(error) }
                    reported = true
                }
            }
            write()
            while (try? await cancelWhenGracefulShutdown({ try await clock.sleep(for: every) })) != nil {
                write()
            }
            write()
        }
    }
}

/// swift-metrics' handlers made by the Prometheus registry, each metric with its help text from `CalwatchMetrics`
/// (promtool asks for one). Timers are histograms in seconds, recorders gauges.
private struct HelpfulFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry

    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: CalwatchMetrics.help[label] ?? label)
    }

    /// Hook runs from a few milliseconds to the longest timeout.
    private static let durationBuckets: [Duration] = [
        .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(300),
    ]

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(descriptor: descriptor(label), labels: dimensions, buckets: Self.durationBuckets)
    }

    func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyRecorder(_ handler: any RecorderHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? DurationHistogram { registry.unregisterDurationHistogram(histogram) }
    }
}
