import Foundation

/// How long each phase of a load, or of one exchange on the wire, took — and which phases did
/// not happen at all.
///
/// A phase is in one of three states: it took a measured time (``subscript(_:)`` is non-`nil`),
/// it was skipped (``skipped``: a reused connection has no connect or TLS phase, a cache hit
/// has no exchange), or nobody could tell (neither: a transport that cannot see inside its
/// connection pool reports no connect time; see ``Phase`` for which transport reports what).
///
/// The engine measures from outside the transport what every transport shares — time to the
/// first byte and the body — and the parse, the cache lookup and, through a manager, the
/// reform. Connection phases come from the transport where it can report them.
public struct PhaseTimings: Sendable, Hashable {
    /// One phase of a load, in the order they happen.
    public enum Phase: String, Sendable, CaseIterable, Codable, Comparable {
        /// Asking the response cache before the network.
        case cacheLookup
        /// Waiting for a connection from the pool (URLSession on Apple platforms reports it;
        /// AsyncHTTPClient and URLSession on Linux fold it into ``firstByte``).
        case connectionWait
        /// Resolving the host name (URLSession on Apple platforms).
        case dns
        /// Opening the TCP connection (URLSession on Apple platforms).
        case connect
        /// The TLS handshake (URLSession on Apple platforms).
        case tls
        /// Writing the request (URLSession on Apple platforms).
        case send
        /// From the request handed on (or, where the transport reports the phases before, from
        /// the request written) to the response head: the server's think time plus one round
        /// trip — and, where the transport cannot tell them apart, the phases before.
        case firstByte
        /// From the response head to the body's last byte.
        case body
        /// Parsing the body as JSON.
        case parse
        /// The reformer, when a manager ran it with the load.
        case reform

        public static func < (lhs: Phase, rhs: Phase) -> Bool { lhs.bit < rhs.bit }

        /// The phases of one exchange on the wire.
        public static let exchange: [Phase] = [.connectionWait, .dns, .connect, .tls, .send, .firstByte, .body]
        /// The phases a reused connection skips.
        public static let connectionSetup: [Phase] = [.dns, .connect, .tls]
    }

    /// Each phase's nanoseconds, by ``Phase`` order; which are measured and which skipped in
    /// two bit sets. Inline: timing a load allocates nothing.
    private var nanoseconds = Nanoseconds()
    private var measuredBits: UInt16 = 0
    private var skippedBits: UInt16 = 0

    /// No phase measured or skipped.
    public init() {}

    /// The measured phases.
    public var durations: [Phase: Duration] {
        var durations: [Phase: Duration] = [:]
        for phase in Phase.allCases where measuredBits & phase.bit != 0 { durations[phase] = .nanoseconds(nanoseconds[phase]) }
        return durations
    }

    /// The phases that did not happen.
    public var skipped: Set<Phase> { Set(Phase.allCases.filter { skippedBits & $0.bit != 0 }) }

    /// How long `phase` took; `nil` when it was skipped or not reported.
    public subscript(_ phase: Phase) -> Duration? {
        get { measuredBits & phase.bit == 0 ? nil : .nanoseconds(nanoseconds[phase]) }
        set {
            guard let newValue else {
                measuredBits &= ~phase.bit
                return
            }
            let (seconds, attoseconds) = max(newValue, .zero).components
            let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            nanoseconds[phase] = overflow ? .max : product &+ attoseconds / 1_000_000_000
            measuredBits |= phase.bit
            skippedBits &= ~phase.bit
        }
    }

    /// Marks `phase` as one that did not happen.
    public mutating func skip(_ phase: Phase) {
        measuredBits &= ~phase.bit
        skippedBits |= phase.bit
    }

    /// Whether `phase` took a measured time, was skipped, or was not reported.
    public func status(of phase: Phase) -> Status {
        if let duration = self[phase] { return .took(duration) }
        return skippedBits & phase.bit != 0 ? .skipped : .notReported
    }

    /// What is known of one phase.
    public enum Status: Sendable, Hashable {
        case took(Duration)
        case skipped
        case notReported
    }

    /// The sum of the measured phases.
    public var total: Duration { Phase.allCases.reduce(.zero) { $0 + (self[$1] ?? .zero) } }

    /// These timings with `other`'s measured and skipped phases laid over them.
    public func merging(_ other: PhaseTimings) -> PhaseTimings {
        var merged = self
        for phase in Phase.allCases {
            if let duration = other[phase] { merged[phase] = duration } else if other.skippedBits & phase.bit != 0 { merged.skip(phase) }
        }
        return merged
    }

    public static func == (lhs: PhaseTimings, rhs: PhaseTimings) -> Bool {
        lhs.measuredBits == rhs.measuredBits && lhs.skippedBits == rhs.skippedBits
            && Phase.allCases.allSatisfy { lhs.measuredBits & $0.bit == 0 || lhs.nanoseconds[$0] == rhs.nanoseconds[$0] }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(measuredBits)
        hasher.combine(skippedBits)
        for phase in Phase.allCases where measuredBits & phase.bit != 0 { hasher.combine(nanoseconds[phase]) }
    }

    /// One `Int64` per phase, stored inline.
    private struct Nanoseconds: Sendable {
        private var cacheLookup: Int64 = 0, connectionWait: Int64 = 0, dns: Int64 = 0, connect: Int64 = 0, tls: Int64 = 0
        private var send: Int64 = 0, firstByte: Int64 = 0, body: Int64 = 0, parse: Int64 = 0, reform: Int64 = 0

        subscript(_ phase: Phase) -> Int64 {
            get {
                switch phase {
                case .cacheLookup: cacheLookup
                case .connectionWait: connectionWait
                case .dns: dns
                case .connect: connect
                case .tls: tls
                case .send: send
                case .firstByte: firstByte
                case .body: body
                case .parse: parse
                case .reform: reform
                }
            }
            set {
                switch phase {
                case .cacheLookup: cacheLookup = newValue
                case .connectionWait: connectionWait = newValue
                case .dns: dns = newValue
                case .connect: connect = newValue
                case .tls: tls = newValue
                case .send: send = newValue
                case .firstByte: firstByte = newValue
                case .body: body = newValue
                case .parse: parse = newValue
                case .reform: reform = newValue
                }
            }
        }
    }
}

extension PhaseTimings.Phase {
    /// The phase's bit in a set of phases.
    fileprivate var bit: UInt16 {
        switch self {
        case .cacheLookup: 1 << 0
        case .connectionWait: 1 << 1
        case .dns: 1 << 2
        case .connect: 1 << 3
        case .tls: 1 << 4
        case .send: 1 << 5
        case .firstByte: 1 << 6
        case .body: 1 << 7
        case .parse: 1 << 8
        case .reform: 1 << 9
        }
    }
}

extension Duration {
    /// The duration in milliseconds, as HAR files and waterfalls count.
    package var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }
}
