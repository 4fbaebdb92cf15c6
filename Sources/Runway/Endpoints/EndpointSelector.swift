import Foundation
import HTTPTypes

/// The fastest address of a service's host, measured from where the device is now, so that slow
/// or hijacked DNS never sits in front of a request (connect by IP, to the fastest).
///
/// Give it the host name and its candidate addresses (IPv4 and IPv6; more can come from a
/// server list, see ``EndpointList``) and put it on the ``Service``. Each round measures every
/// candidate — a few attempts each, with a short timeout, at most
/// ``Probing/maximumConcurrentProbes`` at a time (each TCP probe holds a thread while it
/// waits) — and ranks the healthy ones. At most ``Probing/maximumCandidates`` are kept,
/// the configured ones first, however long a server list is. Until the first round ends,
/// requests use DNS as usual: a probe never delays a request. The engine holds the first round
/// until its first load has ended, so that the probes never compete with a launch's first load.
///
/// The engine connects to ``address`` through a transport that can choose a connection's
/// address (``Transport/supportsConnectAddress``: the AsyncHTTPClient transport can; URLSession
/// cannot, and ``Engine/register(_:)`` refuses a service with a selector on it), and changes
/// nothing else: the `Host` field, TLS SNI and the certificate check stay
/// on the host name, so a wrong address fails its TLS handshake rather than being trusted. A
/// connection refused or unreachable at the chosen address marks it unhealthy and the next
/// fastest takes over; with none left, requests fall back to DNS until the next round.
///
/// For example:
///
/// ```swift
/// let selector = EndpointSelector(host: "api.example.com", port: 443, candidates: ["203.0.113.7", "2001:db8::7"])
/// try engine.register(
///     Service(id: .listings, baseURLs: [.release: "https://api.example.com"], connection: .init(endpoints: selector)))
/// ```
public final class EndpointSelector: Sendable {
    /// How a candidate is measured.
    public enum Probe: Sendable, Hashable {
        /// The time of a TCP handshake: what connecting will cost. The default.
        case tcpConnect
        /// The time of a `GET` of `path` answered without a server error, sent to the address
        /// through the engine's transport: for servers behind layer-7 balancers, where the
        /// balancer answers every handshake at once.
        case http(path: String)
    }

    /// How candidates are measured and how often.
    public struct Probing: Sendable {
        /// How candidates are measured. Default ``Probe/tcpConnect``.
        public var probe: Probe = .tcpConnect
        /// Attempts per candidate and round; a candidate is healthy when more than half succeed,
        /// and ranked by the median. Default 3.
        public var attempts: Int = 3
        /// The longest an attempt may take. Default 1 s.
        public var timeout: Duration = .seconds(1)
        /// How often the engine measures again on its own. Default 10 minutes.
        public var interval: Duration = .seconds(600)
        /// Whether registering the service starts the rounds (``start(using:changes:)``). Turn
        /// it off to call ``probe(using:)`` on a schedule of your own. Default `true`.
        public var probesAutomatically = true
        /// The most candidates measured; further addresses (from a long server list) are
        /// ignored, the configured ones kept first. Default 16.
        public var maximumCandidates: Int = 16
        /// The most probes in flight at once, over all candidates: a TCP probe waits on a
        /// thread of its own, so this bounds the threads a round holds. Default 4.
        public var maximumConcurrentProbes: Int = 4
        /// How long the network must hold still after a change before a round measures it: a
        /// flapping link or a handover brings a burst of changes, and one round after the last
        /// is worth more than one per change. Default 2 s.
        public var settleTime: Duration = .seconds(2)
        /// How long the first round the engine starts waits for the engine's first load to end,
        /// when none has ended sooner. The round follows that load rather than running beside
        /// it: a launch's first load has the CPU and the connection to itself, and requests use
        /// DNS until a round ends either way. Default 2 s.
        public var firstRoundWait: Duration = .seconds(2)
        /// The clock HTTP probes are timed on and rounds are scheduled on (the interval, the
        /// settle time, the first round's wait). Default the continuous clock; a test gives one
        /// it advances itself, so a ranking or a schedule cannot depend on how busy the machine is.
        public var clock: any Clock<Duration> = ContinuousClock()

        /// The defaults.
        public init() {}
    }

    /// What a round found for one candidate.
    public struct Measurement: Sendable, Hashable {
        /// The candidate.
        public var address: String
        /// The median time of its successful attempts; `nil` when it is not healthy.
        public var time: Duration?
    }

    private struct State {
        var candidates: [String]
        var ranking: [String] = []
        var unhealthy: Set<String> = []
        var rounds = 0
        var running: Task<Void, Never>?
        /// Candidates being measured now, and the most at once so far.
        var measuring = 0
        var peakMeasuring = 0
        var roundWaiters: [(after: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    /// The host name whose addresses are chosen between.
    public let host: String
    /// The port probes connect to (the service's port).
    public let port: Int
    /// The scheme of HTTP probes: `https` (the default) or `http`.
    public let scheme: String
    /// How candidates are measured and how often.
    public let probing: Probing
    /// The candidates given at creation, which a server list adds to.
    public let configuredCandidates: [String]
    private let state: Locked<State>

    /// Creates a selector for `host`.
    ///
    /// - parameters:
    ///   - host: The host name as requests name it.
    ///   - port: The port the service listens on (443 for HTTPS).
    ///   - candidates: Numeric IPv4 or IPv6 addresses of the host; anything else is ignored.
    ///   - scheme: The scheme of HTTP probes.
    ///   - probing: How candidates are measured and how often.
    public init(
        host: String, port: Int, candidates: [String], scheme: String = "https", probing: Probing = Probing()
    ) {
        self.host = host.lowercased()
        self.port = port
        self.scheme = scheme
        self.probing = probing
        configuredCandidates = Self.validated(candidates, limit: probing.maximumCandidates)
        state = Locked(State(candidates: configuredCandidates))
    }

    /// The address to connect to now: the fastest healthy candidate of the last round not
    /// marked unhealthy since; `nil` (use DNS) before the first round and when none is left.
    public var address: String? {
        state.withLock { state in state.ranking.first { !state.unhealthy.contains($0) } }
    }

    /// The candidates now measured.
    public var candidates: [String] { state.withLock { $0.candidates } }

    /// Rounds completed.
    public var rounds: Int { state.withLock { $0.rounds } }

    /// Returns once more than `count` rounds have completed: a round the app did not start
    /// itself (on a network change, on the timer) can be awaited.
    public func waitForRound(after count: Int) async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                guard state.rounds <= count else { return true }
                state.roundWaiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Replaces the candidates (from a fresh server list); the next round measures them. At
    /// most ``Probing/maximumCandidates`` are kept, in the order given.
    public func setCandidates(_ addresses: [String]) {
        let valid = Self.validated(addresses, limit: probing.maximumCandidates)
        state.withLock { state in
            state.candidates = valid
            state.ranking.removeAll { !valid.contains($0) }
        }
    }

    /// Marks `address` unhealthy until the next round: the next fastest takes over. The engine
    /// reports every address that could not be reached, failed TLS or its pins, lost the
    /// connection or did not answer in time.
    public func reportFailure(of address: String) {
        state.withLock { _ = $0.unhealthy.insert(address) }
    }

    /// Sets the ranking as a round would have, without measuring: for tests of what the engine
    /// does with a ranking, which must not depend on which socket the scheduler served first.
    func rank(_ addresses: [String]) {
        state.withLock { state in
            state.ranking = addresses.filter(state.candidates.contains)
            state.unhealthy = []
        }
    }

    /// Measures every candidate, ``Probing/maximumConcurrentProbes`` at a time, and
    /// ranks the healthy ones by their median.
    ///
    /// - parameter transport: Sends the probes of ``Probe/http(path:)``; unused for TCP.
    @discardableResult
    public func probe(using transport: (any Transport)? = nil) async -> [Measurement] {
        let candidates = state.withLock { $0.candidates }
        let measurements = await withTaskGroup(of: Measurement.self) { group in
            var waiting = candidates.makeIterator()
            var measured: [Measurement] = []
            // A sliding window: a new candidate starts as each one ends.
            for _ in 0..<max(probing.maximumConcurrentProbes, 1) {
                guard let address = waiting.next() else { break }
                group.addTask { [self] in Measurement(address: address, time: await measure(address, transport: transport)) }
            }
            for await measurement in group {
                measured.append(measurement)
                if let address = waiting.next() {
                    group.addTask { [self] in Measurement(address: address, time: await measure(address, transport: transport)) }
                }
            }
            return measured
        }
        let ranking = measurements.compactMap { measurement in measurement.time.map { (measurement.address, $0) } }
            .sorted { $0.1 < $1.1 }.map(\.0)
        let finished = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.ranking = ranking
            state.unhealthy = []
            state.rounds += 1
            let rounds = state.rounds
            defer { state.roundWaiters.removeAll { $0.after < rounds } }
            return state.roundWaiters.filter { $0.after < rounds }.map(\.continuation)
        }
        for waiter in finished { waiter.resume() }
        return measurements.sorted { ($0.time ?? .seconds(86_400)) < ($1.time ?? .seconds(86_400)) }
    }

    /// Probes now, then every ``Probing/interval`` and after each network change
    /// (`changes` yields) once no further change has come for ``Probing/settleTime``,
    /// until ``stop()``. A second call while running does nothing.
    public func start(using transport: (any Transport)? = nil, changes: AsyncStream<Void>? = nil) {
        start(using: transport, changes: changes, after: nil)
    }

    /// ``start(using:changes:)`` with the first round held until `gate` returns: what
    /// ``Engine/register(_:)`` starts, its gate the engine's first load ending (or
    /// ``Probing/firstRoundWait`` passing).
    func start(using transport: (any Transport)?, changes: AsyncStream<Void>?, after gate: (@Sendable () async -> Void)?) {
        state.withLock { state in
            guard state.running == nil else { return }
            state.running = Task.detached { [self] in
                let bell = Doorbell()
                let listener = changes.map { changes in
                    Task {
                        for await _ in changes { bell.ring() }
                    }
                }
                defer { listener?.cancel() }
                await gate?()
                while !Task.isCancelled {
                    await probe(using: transport)
                    var changed = await bell.wait(timeout: probing.interval, clock: probing.clock)
                    // Still changing: wait until the path holds still.
                    while changed, !Task.isCancelled {
                        changed = await bell.wait(timeout: probing.settleTime, clock: probing.clock)
                    }
                }
            }
        }
    }

    /// Whether rounds started by ``start(using:changes:)`` are running.
    public var isRunning: Bool { state.withLock { $0.running != nil } }

    /// Stops the rounds ``start(using:changes:)`` began. The engine calls it when the service is
    /// registered again with another selector.
    public func stop() {
        let running = state.withLock { state -> Task<Void, Never>? in
            defer { state.running = nil }
            return state.running
        }
        running?.cancel()
    }

    /// The most candidates measured at once so far: what ``Probing/maximumConcurrentProbes``
    /// bounds (a TCP probe's attempts run one after another, each on one thread).
    var peakConcurrentProbes: Int { state.withLock { $0.peakMeasuring } }

    private func measure(_ address: String, transport: (any Transport)?) async -> Duration? {
        state.withLock { state in
            state.measuring += 1
            state.peakMeasuring = max(state.peakMeasuring, state.measuring)
        }
        defer { state.withLock { $0.measuring -= 1 } }
        var times: [Duration] = []
        let attempts = max(probing.attempts, 1)
        for _ in 0..<attempts {
            if let time = await attempt(address, transport: transport) { times.append(time) }
        }
        guard times.count * 2 > attempts else { return nil }
        return times.sorted()[times.count / 2]
    }

    private func attempt(_ address: String, transport: (any Transport)?) async -> Duration? {
        switch probing.probe {
        case .tcpConnect:
            return await TCPConnectProbe.connectTime(to: address, port: port, timeout: probing.timeout)
        case .http(let path):
            guard let transport, transport.supportsConnectAddress else { return nil }
            var request = TransportRequest(
                head: HTTPRequest(
                    method: .get, scheme: scheme, authority: "\(host):\(port)", path: path),
                body: nil, timeout: probing.timeout, apiName: "EndpointProbe")
            request.connectAddress = address
            var status = 0
            do {
                let elapsed = try await probing.clock.measure {
                    status = try await transport.send(request).head.status.code
                }
                return status < 500 ? elapsed : nil
            } catch {
                return nil
            }
        }
    }

    /// Whether a request to `authority` (`host[:port]`) goes to this selector's host.
    func matches(authority: String?) -> Bool {
        guard let authority else { return false }
        return AuthorityHost.of(authority) == host
    }

    private static func validated(_ addresses: [String], limit: Int) -> [String] {
        var seen: Set<String> = []
        var valid: [String] = []
        for address in addresses where valid.count < limit {
            if TCPConnectProbe.isNumericAddress(address), seen.insert(address).inserted { valid.append(address) }
        }
        return valid
    }
}
