public import Foundation
public import RunwayStorage

extension EndpointList {
    /// Opens the stored list as ``init(selector:container:maximumAge:maximumStoredAge:now:)``
    /// does, off the caller's actor: reading the file is disk work, which a launch on the main
    /// actor must not wait for there. It runs on a dispatch queue of its own, never on a thread of
    /// Swift's cooperative pool.
    ///
    /// - throws: `StorageError` when the file's folder cannot be made.
    @concurrent
    public static func open(
        selector: EndpointSelector, container: Container, maximumAge: Duration = .seconds(86_400),
        maximumStoredAge: Duration = .seconds(7 * 86_400), now: Date = Date()
    ) async throws(StorageError) -> EndpointList {
        try await BlockingWork.run { () throws(StorageError) in
            try EndpointList(
                selector: selector, container: container, maximumAge: maximumAge, maximumStoredAge: maximumStoredAge,
                now: now)
        }
    }
}
