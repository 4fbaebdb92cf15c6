import Foundation
import HTTPTypes
import Tracing

extension Engine {
    /// The address an endpoint selector chose for a request to `head`'s host (a service with a
    /// selector is registered only on a transport that can connect to it).
    func connectAddress(for head: HTTPRequest, service: Service) -> String? {
        guard let selector = service.connection.endpoints, selector.matches(authority: head.authority)
        else { return nil }
        return selector.address
    }

    /// Sends one hop, ended by `deadline` — which covers the whole response, head and body — or
    /// by `cancellation`.
    ///
    /// - parameter trace: The request's span: the transport runs with it as the current
    ///   context, so that a transport's own spans (AsyncHTTPClient's) nest under it.
    /// - parameter pathLost: Set when the device's network went away and so ended the exchange:
    ///   the load fails with `noNetwork(.unreachable)`, and part of the request may have left.
    func send(
        _ prepared: PreparedRequest, api: some API, deadline: ContinuousClock.Instant,
        hooks: TransferHooks = TransferHooks(), connectAddress: String? = nil, cancellation: LoadCancellation? = nil,
        trace: LoadTrace? = nil, pathLost: inout Bool
    ) async throws(RunwayError) -> TransportResponse {
        var progress: (@Sendable (Int64) -> Void)?
        if let report = hooks.uploadProgress {
            let total = prepared.body?.length ?? 0
            progress = { sent in report(sent, total) }
        }
        // The body is gathered here, under the API's size limit, unless a download streams it;
        // either way it passes the engine's content-coding step first.
        let collector: BodyCollector?
        let target: any ResponseSink
        if let sink = hooks.sink {
            (collector, target) = (nil, sink)
        } else {
            let gathering = BodyCollector(limit: api.maximumResponseSize, answersHead: prepared.head.method == .head)
            (collector, target) = (gathering, gathering)
        }
        let decoding = DecodingSink(target: target, transportDecodes: transportDecodesContent)
        var outgoing = TransportRequest(
            head: prepared.head, content: prepared.body, timeout: deadline - .now, apiName: api.name,
            uploadProgress: progress, responseSink: decoding)
        outgoing.connectAddress = connectAddress
        outgoing.sinkKeepsInMemory = collector != nil
        outgoing.pins = pins(forAuthority: prepared.head.authority)
        let sentAt = ContinuousClock.now
        let (result, ended) =
            if let trace {
                await ServiceContext.withValue(trace.parent.context) {
                    await sendWithinDeadline(outgoing, deadline: deadline, cancellation: cancellation)
                }
            } else {
                await sendWithinDeadline(outgoing, deadline: deadline, cancellation: cancellation)
            }
        let endedAt = ContinuousClock.now
        pathLost = ended == .networkLost
        do {
            var response = try result.get()
            response.timings = Self.timings(
                reported: response.timings, sentAt: sentAt, headAt: decoding.headArrivedAt ?? endedAt, endedAt: endedAt)
            var kept: Data?
            if decoding.head == nil {
                // A transport that kept the body instead of streaming it: it passes the same
                // step and the same limit now (without a copy when there is nothing to undo).
                try decoding.begin(response.head)
                if let collector, !decoding.isDecoding {
                    kept = try collector.accept(whole: response.body)
                } else {
                    try response.body.withUnsafeBytes { try decoding.write($0) }
                }
            }
            try decoding.finish()
            response.head = decoding.head ?? response.head
            response.body = kept ?? collector?.collected ?? Data()
            return response
        } catch {
            if ended == .networkLost { throw .noNetwork(reason: .unreachable) }
            if ended == .deadline { throw .timeout }
            if error is CancellationError || cancellation.isCancelledOrTask { throw .cancelled }
            throw TransportFault.classify(error, naming: TransportFault.unrecognised)
        }
    }

    /// An exchange's phases: those the transport reported, then the time to the first byte
    /// (less the phases the transport reported before it) and the body, measured here the same
    /// way for every transport.
    static func timings(
        reported: PhaseTimings, sentAt: ContinuousClock.Instant, headAt: ContinuousClock.Instant,
        endedAt: ContinuousClock.Instant
    ) -> PhaseTimings {
        var timings = reported
        let before = [PhaseTimings.Phase.connectionWait, .dns, .connect, .tls, .send].reduce(Duration.zero) { sum, phase in
            sum + (reported[phase] ?? .zero)
        }
        timings[.firstByte] = headAt - sentAt - before
        timings[.body] = endedAt - headAt
        return timings
    }

    /// What ended an exchange before the transport did.
    private enum Ending {
        case deadline
        case networkLost
    }

    /// Sends `request` on the transport, ended through the exchange's own cancellation handle at
    /// `deadline`, when the device's network goes away, when the load's `cancellation` fires, or
    /// when the calling task is cancelled — one mechanism for every transport.
    ///
    /// - returns: The transport's outcome, and what ended the exchange first, if not the transport.
    private func sendWithinDeadline(
        _ request: TransportRequest, deadline: ContinuousClock.Instant, cancellation: LoadCancellation?
    ) async -> (Result<TransportResponse, any Error>, ended: Ending?) {
        let exchange = LoadCancellation()
        var request = request
        request.cancellation = exchange
        request.deadlineWatched = true
        var loss: NetworkMonitor.LossTicket?
        if let network {
            guard let ticket = network.watchLoss({ exchange.cancel() }) else {
                return (.failure(RunwayError.noNetwork(reason: .unreachable)), .networkLost)
            }
            loss = ticket
        }
        let ticket = deadlines.watch(until: deadline) { exchange.cancel() }
        let outer = cancellation?.register { exchange.cancel() }
        defer { if let outer { cancellation?.end(outer) } }
        let transport = self.transport
        let honours = transportHonoursCancellation
        let prepared = request
        let result: Result<TransportResponse, any Error>
        do {
            let response = try await withTaskCancellationHandler {
                // A transport that knows only task cancellation: the exchange runs in a task the
                // handle cancels.
                if honours { return try await transport.send(prepared) }
                return try await exchange.run { try await transport.send(prepared) }
            } onCancel: {
                exchange.cancel()
            }
            result = .success(response)
        } catch {
            result = .failure(error)
        }
        let expired = deadlines.stop(ticket)
        if let loss, let network, network.endWatch(loss) { return (result, .networkLost) }
        return (result, expired ? .deadline : nil)
    }
}
