import Foundation

/// A value behind a lock, shareable across isolation domains.
///
/// `Synchronization.Mutex` needs iOS 18 / macOS 15; Runway supports iOS 17 / macOS 14, so this
/// small wrapper over `NSLock` stands in. It stays internal: the `@unchecked` is sound because
/// every access goes through `withLock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
