import Foundation

/// Where calwatch's metrics go (`metrics:`).
public struct MetricsSettings: Sendable, Hashable {
    /// A file in Prometheus' text format for node_exporter's textfile collector; `nil`: no metrics.
    public var textfile: String?
    /// Seconds between rewrites of the file while `watch` runs (`replay` writes it at its end).
    public var every: Int64 = 15

    public init() {}
}
