import Runway
import RunwayTestSupport

extension DemoChapter {
    /// A params validator and an interceptor stop a load before anything leaves the device;
    /// the interceptors' hooks run in the order of a call's steps around a load that goes ahead.
    static let validation = DemoChapter("validation", "Validators and interceptors (seed 003: 參數驗證、AOP)") { context, log in
        let hooks = HookRecorder()
        var api = AdHocAPI("SearchAPI", path: "/echo/search")
        api.paramsValidator = RequiredParams.required("city")
        api.interceptors = [SignedInOnly(), hooks]
        let manager = APIManager(api, engine: context.engine)
        let before = context.wire.count(api.name)

        let invalid = await manager.outcome(with: ["q": "loft"])
        log.say("load without the required city → \(Self.describe(invalid))")
        let vetoed = await manager.outcome(with: ["city": "sh", "guest": true])
        log.say("load as a guest → the interceptor vetoes it: \(Self.describe(vetoed))")
        let sentBefore = context.wire.count(api.name) - before
        log.say("requests sent so far: \(sentBefore) — neither left the device")

        hooks.calls.removeAll()
        let valid = try await manager.load(with: ["city": "sh", "q": "loft"])
        log.say("a valid load → \(valid.status.code); hooks in order: \(hooks.calls.joined(separator: " → "))")
        log.figure("sentForInvalid", .int(sentBefore))
        log.figure("sentForValid", .int(context.wire.count(api.name) - before - sentBefore))
        log.figure("hooks", .array(hooks.calls.map { .string($0) }))
        try log.require(invalid.isFailure(\.paramsInvalid) && vetoed.isFailure(\.vetoed), "the invalid and vetoed loads should have failed as such")
        try log.require(sentBefore == 0, "\(sentBefore) requests left the device for loads that should never be sent")
        try log.require(
            hooks.calls == ["shouldCall", "afterCall", "didReceiveResponse", "beforePerformSuccess", "afterPerformSuccess"],
            "the hooks ran as \(hooks.calls)")
    }
}

/// Vetoes loads made as a guest: the "should call" hook.
struct SignedInOnly: Interceptor {
    func shouldCall(_ call: CallInfo) -> CallDecision {
        call.params["guest"]?.boolValue == true ? .veto(reason: "sign in first") : .proceed
    }
}

/// Writes down each hook as it runs.
@MainActor
final class HookRecorder: Interceptor {
    var calls: [String] = []
    func shouldCall(_ call: CallInfo) -> CallDecision {
        calls.append("shouldCall")
        return .proceed
    }
    func afterCall(_ call: CallInfo) { calls.append("afterCall") }
    func didReceiveResponse(_ call: CallInfo, result: Result<RawResponse, RunwayError>) { calls.append("didReceiveResponse") }
    func beforePerformSuccess(_ call: CallInfo, response: RawResponse) { calls.append("beforePerformSuccess") }
    func afterPerformSuccess(_ call: CallInfo, response: RawResponse) { calls.append("afterPerformSuccess") }
}
