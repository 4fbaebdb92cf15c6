import AsyncHTTPClient
import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A transport's shared clients and the event loops exchanges are placed on. The clients a
/// transport makes for itself are made on a thread of their own: a launch makes the engine,
/// registers its services and builds its first request while AsyncHTTPClient starts its event
/// loops (about 3 ms of a cold launch, measured in `Benchmarks/README.md`), and the first send
/// waits for what is left of it. Every later send finds them made.
final class SharedClient: Sendable {
    /// The clients, and the loops an exchange is placed on.
    struct Made: Sendable {
        /// One client per loop of ``loops``, each with its connections on that loop (the
        /// transport's own), or one client for every loop (an app's).
        let clients: [HTTPClient]
        /// The loops an exchange is placed on.
        let loops: [any EventLoop]
        /// The group the clients made on demand (pins, chosen addresses) share.
        let group: any EventLoopGroup

        /// `client`, for exchanges on every loop of its group.
        init(_ client: HTTPClient) {
            clients = [client]
            loops = Array(client.eventLoopGroup.makeIterator())
            group = client.eventLoopGroup
        }

        /// A client on each loop of AsyncHTTPClient's singleton group, made from `configuration`,
        /// sharing `connections` per host between them (each loop gets its share; one loop per
        /// connection when there are fewer connections than loops).
        ///
        /// Why not one client for the group: AsyncHTTPClient hands a waiting request to the first
        /// connection that is free, on whichever loop it lives, and its delegate interface then
        /// takes each part of the answer (head, body, end) from that loop to the request's own,
        /// a trip to another thread each, for every load that met a connection on another loop.
        /// A client whose connections all live on one loop never hands an answer across (the
        /// CPU it saves is measured in `Benchmarks/README.md`).
        init(perLoop configuration: HTTPClient.Configuration, connections: Int) {
            let group = MultiThreadedEventLoopGroup.singleton
            let loops = Array(Array(group.makeIterator()).prefix(max(connections, 1)))
            clients = Self.clients(configuration, connections: connections, over: loops)
            self.loops = loops
            self.group = group
        }

        /// Whether each loop has a client of its own (the transport's own), whose connections
        /// live on it.
        var perLoop: Bool { clients.count == loops.count }

        /// The client for an exchange placed on loop `index`.
        func client(on index: Int) -> HTTPClient {
            perLoop ? clients[index] : clients[0]
        }

        /// A client on each of `loops`, made from `configuration`, each keeping its share of
        /// `connections` per host.
        static func clients(
            _ configuration: HTTPClient.Configuration, connections: Int, over loops: [any EventLoop]
        ) -> [HTTPClient] {
            let total = max(connections, 1)
            return loops.indices.map { index in
                var configuration = configuration
                let share = total / loops.count + (index < total % loops.count ? 1 : 0)
                configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(share, 1)
                return HTTPClient(eventLoopGroup: loops[index], configuration: configuration)
            }
        }

        /// Starts shutting every client down, without waiting.
        func shutDownInBackground() {
            for client in clients { client.shutdown { _ in } }
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

    /// Clients `make` makes on a thread of its own, at once.
    init(making make: @escaping @Sendable () -> Made) {
        let state = NIOLockedValueBox(State.making(waiters: [], abandoned: false))
        self.state = state
        // Not a task: making the event loops blocks while their threads start, which would
        // hold one of the few threads Swift's tasks run on. Nor a global queue: on Linux those
        // share the threads of Swift's tasks of their priority, and with those all held a block
        // waited a second for dispatch to add one (measured at the default priority; a serial
        // queue's block ran within 0.2 ms).
        DispatchQueue(label: "runway.making-clients", qos: .userInitiated).async {
            let made = make()
            let waiters = state.withLockedValue { state -> [CheckedContinuation<Made, Never>] in
                guard case .making(let waiters, let abandoned) = state else { return [] }
                // Shut down before anyone can see it made (the call only starts the shutdown).
                if abandoned { made.shutDownInBackground() }
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

    /// The clients, once they are made.
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

    /// The transport went away without shutting its clients down: the clients when they are
    /// made (the caller shuts them down), otherwise `nil` and the maker shuts them down once made.
    func abandon() -> Made? {
        state.withLockedValue { state -> Made? in
            switch state {
            case .made(let made):
                return made
            case .making(let waiters, _):
                state = .making(waiters: waiters, abandoned: true)
                return nil
            }
        }
    }
}
