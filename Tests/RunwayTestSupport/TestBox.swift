import Foundation

/// A tiny lock-protected box for values written off the main actor in tests.
public final class TestBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    public init(_ value: Value) { stored = value }
    public var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
    public func set(_ value: Value) {
        lock.lock()
        stored = value
        lock.unlock()
    }
    @discardableResult
    public func mutate<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&stored)
    }
}
