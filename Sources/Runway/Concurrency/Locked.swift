#if canImport(os)
import os
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value behind a lock, shareable across isolation domains.
///
/// `Synchronization.Mutex` needs iOS 18 / macOS 15; Runway supports iOS 17 / macOS 14, so this
/// small wrapper stands in. The value and the platform's lock (`os_unfair_lock`, a pthread mutex
/// elsewhere) share one allocation, where an `NSLock` was an object of its own with its mutex
/// allocated apart: two allocations fewer for every lock a load makes. It stays inside the
/// package (RunwayOpenAPI uses it too): the `@unchecked` is sound because every access goes
/// through `withLock`.
package struct Locked<Value>: @unchecked Sendable {
    private let storage: LockedStorage<Value>

    package init(_ value: Value) {
        storage = LockedStorage.make(value)
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }
}

#if canImport(os)
private typealias PlatformLock = os_unfair_lock
#else
private typealias PlatformLock = pthread_mutex_t
#endif

/// The value in the header, the lock as the one element: its address never moves, as a lock's
/// must not.
private final class LockedStorage<Value>: ManagedBuffer<Value, PlatformLock> {
    static func make(_ value: Value) -> LockedStorage<Value> {
        let storage = unsafeDowncast(create(minimumCapacity: 1) { _ in value }, to: LockedStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { lock in
            #if canImport(os)
            lock.initialize(to: os_unfair_lock())
            #else
            lock.initialize(to: pthread_mutex_t())
            pthread_mutex_init(lock, nil)
            #endif
        }
        return storage
    }

    /// The header (the value) is a stored property, destroyed with the object; the element (the
    /// lock) is not.
    deinit {
        withUnsafeMutablePointerToElements { lock in
            #if !canImport(os)
            pthread_mutex_destroy(lock)
            #endif
            _ = lock.deinitialize(count: 1)
        }
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { value, lock in
            #if canImport(os)
            os_unfair_lock_lock(lock)
            defer { os_unfair_lock_unlock(lock) }
            #else
            pthread_mutex_lock(lock)
            defer { pthread_mutex_unlock(lock) }
            #endif
            return try body(&value.pointee)
        }
    }
}
