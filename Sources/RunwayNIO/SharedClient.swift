import AsyncHTTPClient
import Dispatch
import NIOConcurrencyHelpers
import NIOCore

/// A transport's shared `HTTPClient` and the loops of its event loop group. The client a
/// transport makes for itself is made on a thread of its own: a launch makes the engine,
/// registers its services and builds its first request while AsyncHTTPClient starts its event
/// loops (about 3 ms of a cold launch, measured in `Benchmarks/README.md`), and the first send
/// waits for what is left of it. Every later send finds it made.
final class SharedClient: Sendable {
    /// The client, and its group's loops (an in-memory exchange picks one).
    struct Made: Sendable {
        let client: HTTPClient
        let loops: [any EventLoop]

        init(_ client: HTTPClient) {
            self.client = client
            loops = Array(client.eventLoopGroup.makeIterator())
        }
    }

    private enum State {
        /// Being made; `abandoned` when the transport went away first (the maker shuts it down).
        case making(waiters: [CheckedContinuation<Made, Never>], abandoned: Bool)
        case made(Made)
    }

    private let state: NIOLockedValueBox<State>

    /// A client the app made: there already.
    init(_ client: HTTPClient) {
        state = NIOLockedValueBox(.made(Made(client)))
    }

    /// A client `make` makes on a thread of its own, at once.
    init(making make: @escaping @Sendable () -> HTTPClient) {
        let state = NIOLockedValueBox(State.making(waiters: [], abandoned: false))
        self.state = state
        // Not a task: making the event loops blocks while their threads start, which would
        // hold one of the few threads Swift's tasks run on.
        DispatchQueue.global(qos: .userInitiated).async {
            let made = Made(make())
            let waiters = state.withLockedValue { state -> [CheckedContinuation<Made, Never>] in
                guard case .making(let waiters, let abandoned) = state else { return [] }
                // Shut down before anyone can see it made (the call only starts the shutdown).
                if abandoned { made.client.shutdown { _ in } }
                state = .made(made)
                return waiters
            }
            for waiter in waiters { waiter.resume(returning: made) }
        }
    }

    /// Sends waiting for the client now: for tests that must know one is in place.
    var waiting: Int {
        state.withLockedValue { state in
            guard case .making(let waiters, _) = state else { return 0 }
            return waiters.count
        }
    }

    /// The client, once it is made.
    func made() async -> Made {
        if case .made(let made) = state.withLockedValue({ $0 }) { return made }
        return await withCheckedContinuation { continuation in
            let made = state.withLockedValue { state -> Made? in
                switch state {
                case .made(let made):
                    return made
                case .making(var waiters, let abandoned):
                    waiters.append(continuation)
                    state = .making(waiters: waiters, abandoned: abandoned)
                    return nil
                }
            }
            if let made { continuation.resume(returning: made) }
        }
    }

    /// The transport went away without shutting its client down: the client when it is made
    /// (the caller shuts it down), otherwise `nil` and the maker shuts it down once made.
    func abandon() -> HTTPClient? {
        state.withLockedValue { state -> HTTPClient? in
            switch state {
            case .made(let made):
                return made.client
            case .making(let waiters, _):
                state = .making(waiters: waiters, abandoned: true)
                return nil
            }
        }
    }
}
