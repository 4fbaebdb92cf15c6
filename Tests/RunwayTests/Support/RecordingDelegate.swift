import Runway

/// A delegate that records every delivery in order and lets a test await the next ones.
@MainActor
final class RecordingDelegate: APIManagerDelegate {
    enum Event {
        case success(RawResponse?)
        case failure(RunwayError)

        var error: RunwayError? {
            if case .failure(let error) = self { return error }
            return nil
        }

        var isSuccess: Bool {
            if case .success = self { return true }
            return false
        }
    }

    private(set) var events: [Event] = []
    /// The load each event belongs to, in the same order.
    private(set) var loads: [LoadID] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    func apiManager(_ manager: any APIManaging, didSucceed response: RawResponse, load: LoadID) {
        loads.append(load)
        record(.success(response))
    }

    func apiManager(_ manager: any APIManaging, didFail error: RunwayError, load: LoadID) {
        loads.append(load)
        record(.failure(error))
    }

    private func record(_ event: Event) {
        events.append(event)
        let ready = waiters.filter { events.count >= $0.count }
        waiters.removeAll { events.count >= $0.count }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Waits until `count` deliveries have arrived in all.
    func waitForEvents(_ count: Int) async {
        if events.count >= count { return }
        await withCheckedContinuation { continuation in
            waiters.append((count, continuation))
        }
    }
}

/// An interceptor that writes each hook it sees into a shared journal, tagged.
struct JournalInterceptor: Interceptor {
    let tag: String
    let journal: Journal
    var veto: String?

    func shouldCall(_ call: CallInfo) -> CallDecision {
        journal.entries.append("\(tag).shouldCall")
        return veto.map { .veto(reason: $0) } ?? .proceed
    }
    func afterCall(_ call: CallInfo) { journal.entries.append("\(tag).afterCall") }
    func didReceiveResponse(_ call: CallInfo, result: Result<RawResponse, RunwayError>) {
        journal.entries.append("\(tag).didReceiveResponse")
    }
    func beforePerformSuccess(_ call: CallInfo, response: RawResponse) { journal.entries.append("\(tag).beforeSuccess") }
    func afterPerformSuccess(_ call: CallInfo, response: RawResponse) { journal.entries.append("\(tag).afterSuccess") }
    func beforePerformFailure(_ call: CallInfo, error: RunwayError) { journal.entries.append("\(tag).beforeFailure") }
    func afterPerformFailure(_ call: CallInfo, error: RunwayError) { journal.entries.append("\(tag).afterFailure") }
}

/// The shared journal of ``JournalInterceptor``s (and of delegates that write into it).
@MainActor
final class Journal {
    var entries: [String] = []
}
