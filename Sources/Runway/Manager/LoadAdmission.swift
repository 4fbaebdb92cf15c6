/// Whether a manager's new load flies: the outcome of its validator, its interceptors' veto and
/// the API's request strategy.
enum LoadAdmission {
    /// Recorded in the manager's book; the load is to be sent.
    case flying(LoadFlight)
    /// Served by the load in flight it joined (``RequestStrategy/ignoreNewWhileLoading``).
    case joined
    /// Refused before it was sent: delivered to `entry` with `error`, and never recorded.
    case refused(LoadBook<LoadWaiter, LoadFlight>.Entry, RunwayError)
}
