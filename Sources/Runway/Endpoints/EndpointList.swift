public import Foundation
public import RunwayStorage

/// A server list for an ``EndpointSelector``: the host's addresses fetched from an API of the
/// app's at most once a day and kept in application support as a versioned file, so that a
/// launch starts from the last list at once and never waits for the network — unless the stored
/// list is older than ``maximumStoredAge`` (an app not opened for weeks): addresses that old may
/// no longer be the service's, so the launch starts from the configured candidates and the next
/// refresh fetches a new list.
///
/// For example:
///
/// ```swift
/// let list = try await EndpointList.open(selector: selector, container: container)  // off the caller's actor
/// try await list.refresh(using: engine, api: ServerListAPI())                          // at most once a day
/// ```
public final class EndpointList: Sendable {
    /// What is stored.
    struct Stored: Codable, Sendable {
        var host: String
        var addresses: [String]
        var fetchedAt: Date
    }

    /// The file's format: version 1.
    public static let format = FileFormat(name: "runway.endpoint-list", version: 1)

    /// The selector the list feeds.
    public let selector: EndpointSelector
    /// How old the list may be before ``refresh(using:api:now:)`` fetches it again. Default a day.
    public let maximumAge: Duration
    /// How old a stored list may be and still be used at launch. Default a week.
    public let maximumStoredAge: Duration
    private let file: VersionedFile
    private let fetchedAt: Locked<Date?>

    /// Opens the stored list of `selector`'s host (if any) and hands its addresses to the
    /// selector, beside the configured ones, unless it is older than `maximumStoredAge`.
    ///
    /// Reading the file is disk work done here, on the caller's thread: from the main actor (an
    /// app's launch code), use ``open(selector:container:maximumAge:maximumStoredAge:now:)``.
    ///
    /// - parameters:
    ///   - selector: The selector whose host the list is for, and which receives its addresses.
    ///   - container: Where the list is stored (its application-support role).
    ///   - maximumAge: How old the list may be before a refresh fetches it again.
    ///   - maximumStoredAge: How old a stored list may be and still be used at launch.
    ///   - now: The time now; replace it in tests.
    /// - throws: `StorageError` when the file's folder cannot be made. A stored list that
    ///   cannot be read (damaged, another host's, a newer format) or is too old is not used: the
    ///   next refresh fetches a new one.
    public init(
        selector: EndpointSelector, container: Container, maximumAge: Duration = .seconds(86_400),
        maximumStoredAge: Duration = .seconds(7 * 86_400), now: Date = Date()
    ) throws(StorageError) {
        self.selector = selector
        self.maximumAge = maximumAge
        self.maximumStoredAge = maximumStoredAge
        file = VersionedFile(
            url: try container.url(for: "runway/endpoints/\(selector.host).list", in: .applicationSupport),
            format: Self.format)
        let stored = try? file.read(Stored.self)
        let limit = Double(maximumStoredAge.components.seconds)
        // A list from the future (a clock set back) is as untrustworthy as an old one.
        let usable = stored.flatMap { stored in
            let age = now.timeIntervalSince(stored.fetchedAt)
            return stored.host == selector.host && age >= 0 && age <= limit ? stored : nil
        }
        fetchedAt = Locked(usable?.fetchedAt)
        if let usable { selector.setCandidates(selector.configuredCandidates + usable.addresses) }
    }

    /// When the stored list was fetched; `nil` before the first fetch.
    public var lastFetched: Date? { fetchedAt.withLock { $0 } }

    /// Fetches the list through `engine` when the stored one is older than ``maximumAge`` (or
    /// there is none), stores it, and hands its addresses to the selector.
    ///
    /// The API answers JSON: an array of addresses, or an object whose `addresses` is one.
    /// Anything that is not a numeric IPv4 or IPv6 address is ignored.
    ///
    /// - returns: Whether a fetch happened.
    /// - throws: The load's ``RunwayError``; ``RunwayError/invalidResponse(reason:)`` for an answer
    ///   with no addresses. The stored list stays in use either way.
    @discardableResult
    public func refresh<Endpoint: API>(using engine: Engine, api: Endpoint, now: Date = Date()) async throws(RunwayError) -> Bool {
        if let last = lastFetched, now.timeIntervalSince(last) < Double(maximumAge.components.seconds) { return false }
        let response = try await engine.perform(api).get()
        let list = response.json?.arrayValue ?? response.json?["addresses"]?.arrayValue ?? []
        let addresses = list.compactMap(\.stringValue).filter(TCPConnectProbe.isNumericAddress)
        guard !addresses.isEmpty else { throw .invalidResponse(reason: "the server list holds no addresses") }
        // Written (and synced) as blocking work: never on a thread of Swift's pool.
        let stored = Stored(host: selector.host, addresses: addresses, fetchedAt: now)
        let logger = engine.logger
        do {
            try await BlockingWork.run { [file] () throws(StorageError) in
                try file.write(stored)
                logger.debug(
                    "runway endpoints: the server list is stored",
                    metadata: ["host": "\(stored.host)", "addresses": "\(stored.addresses.count)"])
            }
        } catch {
            throw .invalidRequest(reason: "the server list could not be stored: \(error)")
        }
        fetchedAt.withLock { $0 = now }
        selector.setCandidates(selector.configuredCandidates + addresses)
        return true
    }
}
