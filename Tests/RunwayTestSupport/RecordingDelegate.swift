import Runway

/// A delegate that records every delivery in order and lets a test await the next ones.
@MainActor
public final class RecordingDelegate: APIManagerDelegate {
    public enum Event {
        case success(RawResponse?)
        case failure(RunwayError)

        public var error: RunwayError? {
            if case .failure(let error) = self { return error }
            return nil
        }

        public var isSuccess: Bool {
            if case .success = self { return true }
            return false
        }
    }

    public init() {}

    public private(set) var events: [Event] = []
    /// The load each event belongs to, in the same order.
    public private(set) var loads: [LoadID] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    public func apiManager(_ manager: any APIManaging, didSucceed response: RawResponse, load: LoadID) {
        loads.append(load)
        record(.success(response))
    }

    public func apiManager(_ manager: any APIManaging, didFail error: RunwayError, load: LoadID) {
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
    public func waitForEvents(_ count: Int) async {
        if events.count >= count { return }
        await withCheckedContinuation { continuation in
            waiters.append((count, continuation))
        }
    }
}

/// An interceptor that writes each hook it sees into a shared journal, tagged.
public struct JournalInterceptor: Interceptor {
    public let tag: String
    public let journal: Journal
    public var veto: String?

    public init(tag: String, journal: Journal, veto: String? = nil) {
        self.tag = tag
        self.journal = journal
        self.veto = veto
    }

    public func shouldCall(_ call: CallInfo) -> CallDecision {
        journal.entries.append("\(tag).shouldCall")
        return veto.map { .veto(reason: $0) } ?? .proceed
    }
    public func afterCall(_ call: CallInfo) { journal.entries.append("\(tag).afterCall") }
    public func didReceiveResponse(_ call: CallInfo, result: Result<RawResponse, RunwayError>) {
        journal.entries.append("\(tag).didReceiveResponse")
    }
    public func beforePerformSuccess(_ call: CallInfo, response: RawResponse) { journal.entries.append("\(tag).beforeSuccess") }
    public func afterPerformSuccess(_ call: CallInfo, response: RawResponse) { journal.entries.append("\(tag).afterSuccess") }
    public func beforePerformFailure(_ call: CallInfo, error: RunwayError) { journal.entries.append("\(tag).beforeFailure") }
    public func afterPerformFailure(_ call: CallInfo, error: RunwayError) { journal.entries.append("\(tag).afterFailure") }
}

/// The shared journal of ``JournalInterceptor``s (and of delegates that write into it).
@MainActor
public final class Journal {
    public init() {}
    public var entries: [String] = []
}
