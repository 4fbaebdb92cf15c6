import Foundation

/// Params given as an `Encodable` value (a struct of the screen's filters).
///
/// These overloads are disfavoured: a dictionary literal (`["city": "sh"]`) is read as
/// ``Parameters`` — what it means — and not as a `[String: String]` to encode, which would cost
/// an encoding, and for a caller off the main actor a visit to it.
extension APIManager {
    /// ``loadData(with:body:ignoringCache:)`` with params given as an `Encodable` value,
    /// encoded with the API's ``API/jsonEncoder`` (see ``Swift/Dictionary/init(encoding:with:)``).
    ///
    /// A value that does not encode to an object is delivered to the delegate as
    /// ``RunwayError/paramsInvalid(reason:)``, like params the validator refuses, and never sent.
    /// The value is encoded in this call, on the main actor, so the load is admitted at once as
    /// `loadData` promises: keep params small, and send a large payload as
    /// `body: .json(value)`, which is encoded off the main actor.
    @_disfavoredOverload
    @discardableResult
    public func loadData(
        with params: some Encodable & Sendable, body: RequestBody? = nil, ignoringCache: Bool = false
    ) -> LoadID? {
        do throws(RunwayError) {
            return loadData(with: try Parameters(encoding: params, with: api.jsonEncoder), body: body, ignoringCache: ignoringCache)
        } catch {
            let entry = refusedEntry(notifiesDelegate: true)
            deliverLater(entry, .failure(error))
            return entry.context.call.loadID
        }
    }

    /// ``load(with:body:ignoringCache:)`` with params given as an `Encodable` value.
    ///
    /// - throws: ``RunwayError/paramsInvalid(reason:)`` when the value does not encode to an
    ///   object; otherwise as ``load(with:body:ignoringCache:)``.
    @_disfavoredOverload
    @discardableResult
    public func load(
        with params: some Encodable & Sendable, body: RequestBody? = nil, ignoringCache: Bool = false
    ) async throws(RunwayError) -> Endpoint.DefaultReformer.Output {
        try await load(with: try await encode(params), body: body, ignoringCache: ignoringCache)
    }

    /// ``load(with:body:ignoringCache:reformedBy:)`` with params given as an `Encodable` value.
    @_disfavoredOverload
    public func load<R: Reformer>(
        with params: some Encodable & Sendable, body: RequestBody? = nil, ignoringCache: Bool = false,
        reformedBy reformer: R
    ) async throws(RunwayError) -> R.Output {
        try await load(with: try await encode(params), body: body, ignoringCache: ignoringCache, reformedBy: reformer)
    }

    /// The params `value` encodes to, encoded off the main actor; a failure is delivered to the
    /// interceptors (as a refused load is) and thrown.
    private func encode(_ value: some Encodable & Sendable) async throws(RunwayError) -> Parameters {
        switch await Self.encoded(value, with: api.jsonEncoder) {
        case .success(let params):
            return params
        case .failure(let error):
            deliver(refusedEntry(notifiesDelegate: false), .failure(error))
            throw error
        }
    }

    @concurrent
    nonisolated private static func encoded(
        _ value: some Encodable & Sendable, with encoder: sending JSONEncoder
    ) async -> Result<Parameters, RunwayError> {
        do throws(RunwayError) { return .success(try Parameters(encoding: value, with: encoder)) } catch {
            return .failure(error)
        }
    }

    /// The entry of a load refused before it had params: its interceptors' failure hooks run,
    /// and it ends the engine's first load as any load does.
    private func refusedEntry(notifiesDelegate: Bool) -> LoadBook<Waiter, Flight>.Entry {
        engine.firstLoad.loadEnded()
        let call = CallInfo(loadID: .next(), apiName: api.name, service: api.service, params: [:])
        return LoadBook.Entry(
            context: Flight(call: call, interceptors: interceptors, onFinish: nil), notifiesDelegate: notifiesDelegate,
            waiters: [])
    }
}
