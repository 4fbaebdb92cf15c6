import Foundation

/// Reformers run off the main actor, and answers reformed in load order.
extension APIManager {
    /// The last successful response shaped by `reformer`, which runs off the main actor; nothing
    /// is sent.
    ///
    /// When another load succeeds while the reformer runs, its response is reformed instead:
    /// the value returned is always of the response the manager holds when it returns, so two
    /// `Task { show(try await manager.reformLastResponse(with:)) }` never end with the older
    /// answer shown.
    ///
    /// - throws: ``RunwayError/noContent`` before any load succeeded;
    ///   ``RunwayError/invalidResponse(reason:)`` when the reformer fails.
    public func reformLastResponse<R: Reformer>(with reformer: R) async throws(RunwayError) -> R.Output {
        while true {
            let (last, generation) = state.withLock { ($0.rawResponse, $0.successes) }
            guard let response = last else { throw .noContent }
            let value = try await Self.reform(response, with: reformer)
            if generation == state.withLock({ $0.successes }) { return value }
        }
    }

    public func reform<R: Reformer>(_ response: RawResponse, with reformer: R) async throws(RunwayError) -> R.Output {
        try await Self.reform(response, with: reformer)
    }

    /// `response`, which load `load` delivered, shaped by `reformer` off the main actor — or
    /// `nil` when, by the time the reform is done, a load started after it has succeeded: its
    /// value is newer, so this one must not be shown over it.
    ///
    /// Reforms run concurrently, so a plain `Task { show(try await manager.reform(…)) }` per
    /// callback can show an older answer after a newer one. With this, whatever order the
    /// reforms finish in, only values no newer load has replaced come back:
    ///
    /// ```swift
    /// func apiManager(_ manager: any APIManaging, didSucceed response: RawResponse, load: LoadID) {
    ///     Task { if let rows = try await manager.reformNewest(response, of: load, with: RowsReformer()) { show(rows) } }
    /// }
    /// ```
    public func reformNewest<R: Reformer>(_ response: RawResponse, of load: LoadID, with reformer: R) async throws(RunwayError)
        -> R.Output?
    {
        let value = try await Self.reform(response, with: reformer)
        if let newest = state.withLock({ $0.newestSucceeded }), newest.rawValue > load.rawValue { return nil }
        return value
    }

    /// Runs `reformer` off the main actor.
    @concurrent
    nonisolated static func reform<R: Reformer>(_ response: RawResponse, with reformer: R) async throws(RunwayError)
        -> R.Output
    {
        try reformNow(response, with: reformer)
    }

    /// Runs `reformer` where the caller is; its own error becomes
    /// ``RunwayError/invalidResponse(reason:)``.
    nonisolated static func reformNow<R: Reformer>(_ response: RawResponse, with reformer: R) throws(RunwayError)
        -> R.Output
    {
        do {
            return try reformer.reform(response)
        } catch let error as RunwayError {
            throw error
        } catch {
            throw .invalidResponse(reason: "\(type(of: reformer)) could not reform the response: \(error)")
        }
    }
}
