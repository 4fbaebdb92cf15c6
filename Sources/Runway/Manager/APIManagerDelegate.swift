/// The landing point of a manager's loads: one success and one failure callback.
///
/// Held weakly, so a view controller can go away while its requests fly; the manager it owned
/// goes with it and cancels them. Both callbacks run on the main actor, exactly once per load
/// started with ``APIManager/loadData(with:)``.
///
/// For example:
///
/// ```swift
/// func apiManagerDidSucceed(_ manager: any APIManaging) {
///     Task { listView.configure(try await manager.fetchData(with: listReformer)) }
/// }
///
/// func apiManagerDidFail(_ manager: any APIManaging, error: RunwayError) {
///     guard !error.isCancellation else { return }
///     showBanner(error.localizedMessage())
/// }
/// ```
@MainActor
public protocol APIManagerDelegate: AnyObject {
    /// A load of `manager` succeeded; its raw response is in ``APIManaging/rawResponse``.
    func apiManagerDidSucceed(_ manager: any APIManaging)
    /// A load of `manager` failed with `error`.
    func apiManagerDidFail(_ manager: any APIManaging, error: RunwayError)
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
    /// The raw JSON of the last successful response: the data without a reformer.
    func fetchData() -> JSON?
    /// The last successful response shaped by `reformer`, which runs off the main actor.
    func fetchData<R: Reformer>(with reformer: R) async throws(RunwayError) -> R.Output
    /// Cancels every in-flight load; each is delivered as ``RunwayError/cancelled``.
    func cancelAllRequests()
}
