import Foundation
public import HTTPTypes

/// One request on the wire and its answer, as a ``LoadRecorder`` keeps it: every attempt and
/// every redirect hop is a record of its own.
public struct ExchangeRecord: Sendable {
    /// The load the exchange belongs to.
    public let loadID: LoadID
    /// The API's name.
    public let apiName: String
    /// The attempt, from 1.
    public let attempt: Int
    /// 0 for the attempt's first request, then 1, 2… for each redirect hop.
    public let hop: Int
    /// When the request was handed to the transport.
    public let startedAt: Date
    /// When the request was handed to the transport, from the recorder's start.
    public let offset: Duration
    /// The request as sent, except that fields carrying who asks read `<redacted>` (as
    /// ``RawResponse/request`` does).
    public let request: HTTPRequest
    /// The request body, when it was held in memory and within the recorder's body limit.
    public let requestBody: Data?
    /// The request body's length; 0 for none, `nil` when unknown.
    public let requestBodySize: Int64?
    /// The response head, as the engine hands it on; `nil` when the exchange failed before one came.
    public let response: HTTPResponse?
    /// The response body (after content decoding), up to the recorder's body limit.
    public let responseBody: Data
    /// The response body's whole length (after content decoding).
    public let responseBodySize: Int
    /// The HTTP version, when the transport reports it.
    public let httpVersion: String?
    /// How long each phase of the exchange took.
    public let timings: PhaseTimings
    /// Why the exchange failed, when it did.
    public let error: RunwayError?
}

/// One load as a ``LoadRecorder`` keeps it: what answered it and how long it took.
public struct LoadRecord: Sendable {
    /// What answered a load.
    public enum Outcome: Sendable, Hashable {
        /// The network answered with this status.
        case network(status: Int)
        /// A cache tier answered; `isStale` for an expired entry delivered while offline.
        case cache(tier: CacheTier, isStale: Bool)
        /// The server confirmed the stored answer of this tier unchanged (`304`): a round trip
        /// without the body.
        case revalidated(tier: CacheTier)
        /// The load joined an identical load already in flight and shares its answer.
        case joined(status: Int?)
        /// The load failed.
        case failed(RunwayError)
    }

    /// The load.
    public let loadID: LoadID
    /// The API's name.
    public let apiName: String
    /// The service the API belongs to.
    public let service: ServiceID
    /// When the engine took the load.
    public let startedAt: Date
    /// When the engine took the load, from the recorder's start.
    public let offset: Duration
    /// From the engine taking the load to its outcome.
    public let duration: Duration
    /// What answered it.
    public let outcome: Outcome
    /// The answer's phases: the cache lookup, the last exchange's, the parse, and the reform
    /// when a manager ran one with the load.
    public internal(set) var timings: PhaseTimings
}
