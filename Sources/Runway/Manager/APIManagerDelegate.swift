/// The landing point of a manager's loads: one success and one failure callback.
///
/// Held weakly, so a view controller can go away while its requests fly; the manager it owned
/// goes with it and cancels them. The callbacks run on the main actor, exactly once per load
/// started with ``APIManager/loadData(with:body:ignoringCache:)-(Parameters?,_,_)``.
///
/// Implement either form. The full form carries the load's identifier (what `loadData`
/// returned) and its own response, which matters when loads run concurrently: by the time a
/// reformer runs, ``APIManaging/rawResponse`` may already hold a later load's answer. The short
/// form (``apiManagerDidSucceed(_:)``, ``apiManagerDidFail(_:error:)``) is what the full form
/// calls by default.
///
/// For example:
///
/// ```swift
/// func apiManager(_ manager: any APIManaging, didSucceed response: RawResponse, load: LoadID) {
///     // nil when a newer load succeeded meanwhile: never an older answer over a newer one.
///     Task {
///         if let rows = try await manager.reformNewest(response, of: load, with: listReformer) {
///             listView.configure(rows)
///         }
///     }
/// }
///
/// func apiManager(_ manager: any APIManaging, didFail error: RunwayError, load: LoadID) {
///     guard !error.isCancellation else { return }
///     showBanner(error.localizedMessage())
/// }
/// ```
@MainActor
public protocol APIManagerDelegate: AnyObject {
    /// Load `load` of `manager` succeeded with `response`.
    func apiManager(_ manager: any APIManaging, didSucceed response: RawResponse, load: LoadID)
    /// Load `load` of `manager` failed with `error`.
    func apiManager(_ manager: any APIManaging, didFail error: RunwayError, load: LoadID)
    /// A load of `manager` succeeded; its raw response is in ``APIManaging/rawResponse``.
    func apiManagerDidSucceed(_ manager: any APIManaging)
    /// A load of `manager` failed with `error`.
    func apiManagerDidFail(_ manager: any APIManaging, error: RunwayError)
}

extension APIManagerDelegate {
    public func apiManager(_ manager: any APIManaging, didSucceed response: RawResponse, load: LoadID) {
        apiManagerDidSucceed(manager)
    }

    public func apiManager(_ manager: any APIManaging, didFail error: RunwayError, load: LoadID) {
        apiManagerDidFail(manager, error: error)
    }

    public func apiManagerDidSucceed(_ manager: any APIManaging) {}

    public func apiManagerDidFail(_ manager: any APIManaging, error: RunwayError) {}
}

/// Supplies params when a load is started without any.
///
/// Useful where the params live with the owner (a search form, the current filters): the
/// manager asks for them at the moment of each load.
@MainActor
public protocol APIManagerParamSource: AnyObject {
    /// The params for the next load of `manager`.
    func params(for manager: any APIManaging) -> Parameters
}

/// What a delegate sees of any manager, whatever its API.
///
/// A delegate that owns several managers compares identity (`manager === listManager`) to tell
/// them apart, or reads ``apiName``.
@MainActor
public protocol APIManaging: AnyObject {
    /// The name of the manager's API.
    var apiName: String { get }
    /// The last successful response, kept until the next success.
    var rawResponse: RawResponse? { get }
    /// The error of the last failed load, cleared by the next success.
    var lastError: RunwayError? { get }
    /// Whether a load is in flight.
    var isLoading: Bool { get }
    /// The last successful response shaped by `reformer`, which runs off the main actor;
    /// nothing is sent.
    func reformLastResponse<R: Reformer>(with reformer: R) async throws(RunwayError) -> R.Output
    /// `response` (one a delegate callback carried) shaped by `reformer`, off the main actor.
    func reform<R: Reformer>(_ response: RawResponse, with reformer: R) async throws(RunwayError) -> R.Output
    /// `response` of load `load` shaped by `reformer` off the main actor, or `nil` when a load
    /// started after it has succeeded by the time the reform is done.
    func reformNewest<R: Reformer>(_ response: RawResponse, of load: LoadID, with reformer: R) async throws(RunwayError)
        -> R.Output?
    /// Cancels one in-flight load, delivered as ``RunwayError/cancelled`` once; `false` when it
    /// had already ended.
    @discardableResult
    func cancel(_ id: LoadID) -> Bool
    /// Cancels every in-flight load; each is delivered as ``RunwayError/cancelled``.
    func cancelAllRequests()
}
