/// What wakes a caller awaiting a manager's load.
enum LoadArrival: Sendable {
    /// The load was landed and delivered; this is its outcome.
    case delivered(Result<RawResponse, RunwayError>)
    /// The engine finished the load this caller started, and nobody has landed it yet: the
    /// caller lands it itself on resuming. Its resumption on the main actor is the landing, so a
    /// load costs the main actor one job, as a plain `await` on the transport would.
    case land(LoadID, Result<RawResponse, RunwayError>)
}

/// How an `async` load waits for the same delivery a delegate would get.
typealias LoadWaiter = OneShot<LoadArrival>
