import Foundation
public import HTTPTypes

/// A transport that answers from canned responses: for the tests of apps built on Runway.
///
/// Like Moya's sample data, each API can have its canned answer, found by ``API/name``; a
/// handler closure covers anything more dynamic. Every request it receives is recorded, so a test
/// can assert what would have gone on the wire. It is for your tests; Runway's own tests talk
/// HTTP to a real server.
///
/// For example:
///
/// ```swift
/// let stub = StubTransport(sampleData: [
///     "ListingsAPI": .json(["code": 0, "data": ["items": []]]),
///     "DetailAPI": .failure(.noNetwork(reason: .unreachable)),
/// ])
/// let engine = Engine(transport: stub)
/// ```
public final class StubTransport: Transport {
    /// A canned answer.
    public enum Sample: Sendable {
        /// A JSON body with the status (default 200 OK).
        case json(JSON, status: HTTPResponse.Status = .ok)
        /// Raw bytes with the status and header fields.
        case data(Data, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:])
        /// A transport failure.
        case failure(RunwayError)
    }

    private let handler: @Sendable (TransportRequest) async throws -> TransportResponse
    private let recorded = Locked<[TransportRequest]>([])

    /// Every scope: a stub opens no connection whose key could be wrong, so an app's services
    /// register with the pins they ship with, and a test can assert a request's
    /// ``TransportRequest/pins``.
    public var pinScopes: Set<PublicKeyPins.Scope> { Set(PublicKeyPins.Scope.allCases) }

    /// Answers each API from `sampleData` by name; an API without a sample gets 404.
    public convenience init(sampleData: [String: Sample]) {
        self.init { request in
            guard let sample = sampleData[request.apiName] else {
                return TransportResponse(head: HTTPResponse(status: .notFound), body: Data())
            }
            return try sample.response()
        }
    }

    /// Answers every request with `handler`.
    public init(_ handler: @escaping @Sendable (TransportRequest) async throws -> TransportResponse) {
        self.handler = handler
    }

    /// Every request received so far, in order, as it would have gone on the wire (its head,
    /// body, timeout, API name, pins and chosen address; not its sink, cancellation or progress
    /// callback).
    public var requests: [TransportRequest] { recorded.withLock { $0 } }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        // What would have gone on the wire, without the exchange's plumbing: the sink (which
        // holds the answer's body once it arrived), the cancellation handle and the progress
        // callback would keep every answer of a long test alive.
        var sent = request
        sent.responseSink = nil
        sent.cancellation = nil
        sent.uploadProgress = nil
        recorded.withLock { $0.append(sent) }
        try Task.checkCancellation()
        var response = try await handler(request)
        // A download: the canned body goes to the sink, as a real transport streams it.
        if let sink = request.responseSink {
            let (head, body) = (response.head, response.body)
            let deliver: @Sendable () throws -> Void = {
                try sink.begin(head)
                try body.withUnsafeBytes { try sink.write($0) }
            }
            // A sink that may wait for the disk is written off Swift's pool, as the network
            // transports write it.
            if request.sinkKeepsInMemory { try deliver() } else { try await BlockingLane().run(deliver) }
            response.body = Data()
        }
        if let progress = request.uploadProgress, let length = request.content?.length { progress(length) }
        return response
    }
}

extension StubTransport.Sample {
    /// The response this sample stands for.
    ///
    /// - throws: The sample's ``RunwayError`` for ``failure(_:)``, or
    ///   ``RunwayError/paramsUnencodable(reason:)`` for JSON holding a non-finite number.
    public func response() throws(RunwayError) -> TransportResponse {
        switch self {
        case .json(let json, let status):
            let body: Data
            do { body = try json.encoded() } catch { throw .paramsUnencodable(reason: error.reason) }
            var head = HTTPResponse(status: status)
            head.headerFields[.contentType] = "application/json"
            return TransportResponse(head: head, body: body)
        case .data(let data, let status, let headers):
            return TransportResponse(head: HTTPResponse(status: status, headerFields: headers), body: data)
        case .failure(let error):
            throw error
        }
    }
}
