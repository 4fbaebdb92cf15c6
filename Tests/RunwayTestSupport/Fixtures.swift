import Foundation

/// The files the tests read: botocore's signing script and its committed answers, the Python
/// readers of HAR files and Prometheus' text format, and the script that drives hishel's cache
/// for the differential cache tests.
public enum Fixtures {
    /// `Tests/RunwayTestSupport/Fixtures`.
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
}
