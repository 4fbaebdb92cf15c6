import Foundation

/// The files the tests read: botocore's signing script and its committed answers, and the
/// Python readers of HAR files and Prometheus' text format.
public enum Fixtures {
    /// `Tests/RunwayTestSupport/Fixtures`.
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
}
