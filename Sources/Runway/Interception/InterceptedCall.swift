/// The manager's rules around a call made on the engine directly (``Engine/perform(_:params:body:loadID:ignoringCache:)``,
/// ``Engine/upload(_:params:body:loadID:)``, ``Engine/download(_:params:to:loadID:)``): the
/// API's params validator, then the service's and the API's interceptors, in the order a
/// manager runs them — so a service's interceptors see every call of its APIs, whatever the
/// entry point.
///
/// There is no delegate on this path: the "perform" hooks run just before and just after the
/// outcome is handed back to the caller. Interceptors run on the main actor; a call whose
/// service and API have none never hops to it.
struct InterceptedCall: Sendable {
    let call: CallInfo
    let interceptors: [any Interceptor]

    /// Validates `params` and asks every interceptor. The error is `nil` when the call may go
    /// ahead (its `afterCall` hooks have run); otherwise the call ends with it, its failure
    /// hooks run.
    static func admit(
        _ api: some API, params: Parameters, loadID: LoadID, engine: Engine
    ) async -> (InterceptedCall, RunwayError?) {
        let admitted = InterceptedCall(api, params: params, loadID: loadID, engine: engine)
        if let refusal = validate(api, params) {
            await admitted.deliver(.failure(refusal))
            return (admitted, refusal)
        }
        guard !admitted.interceptors.isEmpty else { return (admitted, nil) }
        let veto = await MainActor.run { () -> RunwayError? in
            for interceptor in admitted.interceptors {
                if case .veto(let reason) = interceptor.shouldCall(admitted.call) { return .vetoed(reason: reason) }
            }
            for interceptor in admitted.interceptors { interceptor.afterCall(admitted.call) }
            return nil
        }
        if let veto { await admitted.deliver(.failure(veto)) }
        return (admitted, veto)
    }

    /// Whether no interceptor watches calls of `api` (the usual case): such a call needs only
    /// ``validate(_:_:)``, with nothing built and nothing awaited around it.
    static func isUnwatched(_ api: some API, engine: Engine) -> Bool {
        api.interceptors.isEmpty && engine.interceptors(of: api.service).isEmpty
    }

    /// The params validator's refusal of `params`, or `nil` when they may be sent.
    static func validate(_ api: some API, _ params: Parameters) -> RunwayError? {
        do {
            try api.paramsValidator.validate(params)
            return nil
        } catch {
            return .paramsInvalid(reason: error.reason)
        }
    }

    /// Ends a call refused before it could be admitted (params that do not encode): its failure
    /// hooks run, as for a refusal of the params validator.
    static func refuse(_ api: some API, loadID: LoadID, engine: Engine, with error: RunwayError) async {
        await InterceptedCall(api, params: [:], loadID: loadID, engine: engine).deliver(.failure(error))
    }

    /// The call of `api`, with the service's interceptors and then the API's.
    private init(_ api: some API, params: Parameters, loadID: LoadID, engine: Engine) {
        call = CallInfo(loadID: loadID, apiName: api.name, service: api.service, params: params)
        let own = api.interceptors
        let service = engine.interceptors(of: api.service)
        interceptors = own.isEmpty ? service : service + own
    }

    /// Runs the response hooks for the outcome of a call that was sent, then the perform hooks.
    func land(_ result: Result<RawResponse, RunwayError>) async {
        guard !interceptors.isEmpty else { return }
        await MainActor.run {
            for interceptor in interceptors { interceptor.didReceiveResponse(call, result: result) }
        }
        await deliver(result)
    }

    /// The perform hooks: before and after the outcome goes back to the caller.
    private func deliver(_ result: Result<RawResponse, RunwayError>) async {
        guard !interceptors.isEmpty else { return }
        await MainActor.run {
            switch result {
            case .success(let response):
                for interceptor in interceptors { interceptor.beforePerformSuccess(call, response: response) }
                for interceptor in interceptors { interceptor.afterPerformSuccess(call, response: response) }
            case .failure(let error):
                for interceptor in interceptors { interceptor.beforePerformFailure(call, error: error) }
                for interceptor in interceptors { interceptor.afterPerformFailure(call, error: error) }
            }
        }
    }
}
