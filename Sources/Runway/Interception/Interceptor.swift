/// Hooks around one API's calls (aspect-style: before and after each step), on the main actor.
///
/// Attach interceptors to a ``Service`` (every API of it) or to an ``API``. For every hook the
/// service's interceptors run first, then the API's, each list in declaration order. Every hook
/// has an empty default, so an interceptor implements only what it needs.
///
/// The order of one load:
/// 1. ``shouldCall(_:)`` — after the params validator; the first veto stops the load, which is
///    delivered as ``RunwayError/vetoed(reason:)`` and never sent.
/// 2. ``afterCall(_:)`` — right after the request is handed to the engine.
/// 3. ``didReceiveResponse(_:result:)`` — when the landed outcome reaches the main actor.
/// 4. ``beforePerformSuccess(_:response:)`` / ``beforePerformFailure(_:error:)`` — just before
///    the delegate or the awaiting caller receives it.
/// 5. ``afterPerformSuccess(_:response:)`` / ``afterPerformFailure(_:error:)`` — just after.
///
/// A load that fails before it is sent (invalid params, veto) skips 2 and 3.
@MainActor
public protocol Interceptor: Sendable {
    /// Decides whether the call goes ahead.
    func shouldCall(_ call: CallInfo) -> CallDecision
    /// The request has been handed to the engine.
    func afterCall(_ call: CallInfo)
    /// The engine's outcome arrived, before it is delivered.
    func didReceiveResponse(_ call: CallInfo, result: Result<RawResponse, RunwayError>)
    /// A success is about to be delivered.
    func beforePerformSuccess(_ call: CallInfo, response: RawResponse)
    /// A success has been delivered.
    func afterPerformSuccess(_ call: CallInfo, response: RawResponse)
    /// A failure is about to be delivered.
    func beforePerformFailure(_ call: CallInfo, error: RunwayError)
    /// A failure has been delivered.
    func afterPerformFailure(_ call: CallInfo, error: RunwayError)
}

extension Interceptor {
    public func shouldCall(_ call: CallInfo) -> CallDecision { .proceed }
    public func afterCall(_ call: CallInfo) {}
    public func didReceiveResponse(_ call: CallInfo, result: Result<RawResponse, RunwayError>) {}
    public func beforePerformSuccess(_ call: CallInfo, response: RawResponse) {}
    public func afterPerformSuccess(_ call: CallInfo, response: RawResponse) {}
    public func beforePerformFailure(_ call: CallInfo, error: RunwayError) {}
    public func afterPerformFailure(_ call: CallInfo, error: RunwayError) {}
}

/// What ``Interceptor/shouldCall(_:)`` decides.
public enum CallDecision: Sendable, Hashable {
    /// The call goes ahead.
    case proceed
    /// The call is not made; the load fails with ``RunwayError/vetoed(reason:)``.
    case veto(reason: String)
}

/// What an interceptor learns about the call it is looking at.
public struct CallInfo: Sendable {
    /// The load this call belongs to.
    public let loadID: LoadID
    /// The API's ``API/name``.
    public let apiName: String
    /// The API's service.
    public let service: ServiceID
    /// The params of the load (before the service's common params are merged in).
    public let params: Parameters

    /// Creates call information, for testing an interceptor on its own.
    public init(loadID: LoadID, apiName: String, service: ServiceID, params: Parameters) {
        self.loadID = loadID
        self.apiName = apiName
        self.service = service
        self.params = params
    }
}

/// Identifies one load of a manager; unique within the process.
public struct LoadID: Hashable, Sendable, CustomStringConvertible {
    /// The number, increasing with each load.
    public let rawValue: UInt64

    /// Creates an identifier from its number (tests and stub transports; loads get theirs from
    /// the manager).
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    private static let counter = Locked<UInt64>(0)

    static func next() -> LoadID {
        LoadID(rawValue: counter.withLock { value in
            value += 1
            return value
        })
    }

    public var description: String { "#\(rawValue)" }
}
