import Runway

/// A landing point that writes down what it receives, and lets a chapter wait for it.
@MainActor
final class DemoDelegate: APIManagerDelegate {
    /// Each delivery, in order.
    private(set) var outcomes: [Result<RawResponse, RunwayError>] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    func apiManager(_ manager: any APIManaging, didSucceed response: RawResponse, load: LoadID) {
        record(.success(response))
    }

    func apiManager(_ manager: any APIManaging, didFail error: RunwayError, load: LoadID) {
        record(.failure(error))
    }

    private func record(_ outcome: Result<RawResponse, RunwayError>) {
        outcomes.append(outcome)
        let ready = waiters.filter { $0.count <= outcomes.count }
        waiters.removeAll { $0.count <= outcomes.count }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once `count` deliveries have arrived.
    func waitForDeliveries(_ count: Int) async {
        guard outcomes.count < count else { return }
        await withCheckedContinuation { waiters.append((count, $0)) }
    }
}
