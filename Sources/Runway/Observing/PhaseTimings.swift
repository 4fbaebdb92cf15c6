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

        public static func < (lhs: Phase, rhs: Phase) -> Bool {
            allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
        }

        /// The phases of one exchange on the wire.
        public static let exchange: [Phase] = [.connectionWait, .dns, .connect, .tls, .send, .firstByte, .body]
        /// The phases a reused connection skips.
        public static let connectionSetup: [Phase] = [.dns, .connect, .tls]
    }

    /// The measured phases.
    public private(set) var durations: [Phase: Duration] = [:]
    /// The phases that did not happen.
    public private(set) var skipped: Set<Phase> = []

    /// No phase measured or skipped.
    public init() {}

    /// How long `phase` took; `nil` when it was skipped or not reported.
    public subscript(_ phase: Phase) -> Duration? {
        get { durations[phase] }
        set {
            durations[phase] = newValue.map { max($0, .zero) }
            if newValue != nil { skipped.remove(phase) }
        }
    }

    /// Marks `phase` as one that did not happen.
    public mutating func skip(_ phase: Phase) {
        durations[phase] = nil
        skipped.insert(phase)
    }

    /// Whether `phase` took a measured time, was skipped, or was not reported.
    public func status(of phase: Phase) -> Status {
        if let duration = durations[phase] { return .took(duration) }
        return skipped.contains(phase) ? .skipped : .notReported
    }

    /// What is known of one phase.
    public enum Status: Sendable, Hashable {
        case took(Duration)
        case skipped
        case notReported
    }

    /// The sum of the measured phases.
    public var total: Duration { durations.values.reduce(.zero, +) }

    /// These timings with `other`'s measured and skipped phases laid over them.
    public func merging(_ other: PhaseTimings) -> PhaseTimings {
        var merged = self
        for (phase, duration) in other.durations { merged[phase] = duration }
        for phase in other.skipped { merged.skip(phase) }
        return merged
    }
}

extension Duration {
    /// The duration in milliseconds, as HAR files and waterfalls count.
    package var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }
}
