import Crypto
import Foundation
import HTTPTypes

/// The identity of a load's network call, for loads that no cache answers: identical loads in
/// flight at once share one request (``CallCoalescer``).
///
/// Everything that makes the request is in it — service, environment and its base URL, API
/// name, method, path, every param sorted by name, every header field the service and the API
/// give — the sign-in the credential is taken from, so loads of two users never share a call,
/// and what bounds the load (its timeouts, its largest answer, its format), so no load waits
/// longer or accepts more than its own API says. Only `GET` and `HEAD` without a body, without a transfer's hooks, and for an API that
/// has not turned ``API/sharesIdenticalLoads`` off.
struct FlightKey {
    let hash: String

    init?(api: some API, service: Service, params: Parameters, body: RequestBody?, hooks: TransferHooks) {
        guard api.sharesIdenticalLoads, api.method == .get || api.method == .head, body == nil,
            hooks.sink == nil, hooks.prepare == nil, hooks.uploadProgress == nil, hooks.signIn == nil
        else { return nil }
        var fields = service.commonHeaders
        for field in api.headers { fields[fields: field.name] = [] }
        fields.append(contentsOf: api.headers)
        var all = service.commonParams
        all.merge(params) { _, own in own }
        guard let paramsData = try? JSON.object(all).encoded() else { return nil }
        let signIn = api.authenticates ? service.credentials.authentication?.epoch.description ?? "" : ""
        let parts = [
            "runway-flight-1", service.id.rawValue, service.environment.rawValue, service.baseURL ?? "", api.name,
            api.method.rawValue, api.path, String(decoding: paramsData, as: UTF8.self),
            fields.map { "\($0.name.canonicalName)=\($0.value)" }.joined(separator: "\n"), signIn,
            "\(api.timeout) \(api.totalTimeout.map { "\($0)" } ?? "-") \(api.maximumResponseSize) \(api.responseFormat)",
        ]
        // Lengths first, so no choice of values can make two different calls share a text.
        let canonical = parts.map { "\($0.utf8.count):\($0)" }.joined(separator: "|")
        hash = RequestSignature.hex(SHA256.hash(data: Data(canonical.utf8)))
    }
}
