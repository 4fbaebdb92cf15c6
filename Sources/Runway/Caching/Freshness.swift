import Foundation
import HTTPTypes

/// How long a response stays fresh in a tier: the API's lifetime for that tier as a ceiling,
/// the server's word (RFC 9111 §4.2) as a limit.
///
/// The server's lifetime is `max-age`, else `Expires` − `Date` (an `Expires` that is not a date
/// means already expired), less the response's age when it arrived — the larger of its `Age`
/// field and how far `Date` lies behind the arrival. `no-cache` makes it zero: the entry is kept
/// for revalidation only. Without an explicit lifetime, a ``CachePolicy/Freshness/policy``
/// API keeps its own; a ``CachePolicy/Freshness/server`` API uses the heuristic of RFC 9111
/// §4.2.2 — a tenth of the time since `Last-Modified`, at most a week — and zero without
/// `Last-Modified`.
struct Freshness {
    let control: CacheControl
    /// Seconds the response is fresh for after it arrived, by the server's word alone; `nil`
    /// when the server gives no explicit lifetime.
    let serverRemaining: TimeInterval?
    /// The heuristic lifetime, for a ``CachePolicy/Freshness/server`` API.
    let heuristic: TimeInterval

    /// A week: the most a heuristic lifetime grants.
    static let heuristicLimit: TimeInterval = 604_800

    init(headers: HTTPFields, arrivedAt arrival: Date) {
        let control = CacheControl(headers)
        self.control = control
        let date = headers[.date].flatMap(HTTPDate.parse)
        let apparentAge = date.map { max(0, arrival.timeIntervalSince($0)) } ?? 0
        let ageField = headers[.age].flatMap { CacheControl.seconds(Substring($0)) }.map(TimeInterval.init) ?? 0
        let initialAge = max(apparentAge, ageField)
        let explicit: TimeInterval? =
            if control.noCache {
                0
            } else if let maxAge = control.maxAge {
                TimeInterval(maxAge)
            } else if let expires = headers[.expires] {
                HTTPDate.parse(expires).map { $0.timeIntervalSince(date ?? arrival) } ?? 0
            } else {
                nil
            }
        serverRemaining = explicit.map { $0 - initialAge }
        let lastModified = headers[.lastModified].flatMap(HTTPDate.parse)
        heuristic = lastModified.map { min(Self.heuristicLimit, max(0, (date ?? arrival).timeIntervalSince($0) / 10) - initialAge) } ?? 0
    }

    /// Whether the response may be kept at all: not `no-store`, and not `Vary: *` (it can never
    /// be matched to a later request).
    func mayStore(_ headers: HTTPFields) -> Bool {
        !control.noStore && CacheVariant.names(in: headers) != .any
    }

    /// When the response stops being fresh in a tier whose ceiling is `ceiling`.
    func expiry(arrivedAt arrival: Date, ceiling: Duration, mode: CachePolicy.Freshness) -> Date {
        let own: TimeInterval =
            switch mode {
            case .policy: serverRemaining ?? .infinity
            case .server: serverRemaining ?? heuristic
            }
        return arrival.addingTimeInterval(max(0, min(ceiling.seconds, own)))
    }
}
