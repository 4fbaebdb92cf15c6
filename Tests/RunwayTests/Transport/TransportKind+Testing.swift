import RunwayTestSupport
import Testing

/// Test arguments named as the transport is.
extension TransportKind: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}
