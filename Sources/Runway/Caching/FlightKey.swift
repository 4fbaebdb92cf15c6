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
        // Every part goes into the digest behind its length, so no choice of values can make
        // two different calls share a key; nothing is formatted through reflection (an enum's
        // or a duration's description costs more than the rest of the key).
        var digest = SHA256()
        func add(_ part: String) {
            var part = part
            part.withUTF8 { bytes in
                withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { digest.update(bufferPointer: $0) }
                digest.update(bufferPointer: UnsafeRawBufferPointer(bytes))
            }
        }
        func add(_ number: Int64) {
            withUnsafeBytes(of: number.littleEndian) { digest.update(bufferPointer: $0) }
        }
        add("runway-flight-2")
        let names = [
            service.id.rawValue, service.environment.rawValue, service.baseURL ?? "", api.name, api.method.rawValue,
            api.path,
        ]
        for part in names { add(part) }
        add(Int64(paramsData.count))
        paramsData.withUnsafeBytes { digest.update(bufferPointer: $0) }
        add(Int64(fields.count))
        for field in fields {
            add(field.name.canonicalName)
            add(field.value)
        }
        add(api.authenticates ? service.credentials.authentication?.epoch.description ?? "" : "")
        for duration in [api.timeout, api.totalTimeout ?? .zero] {
            add(duration.components.seconds)
            add(duration.components.attoseconds)
        }
        add(api.totalTimeout == nil ? 0 : 1)
        add(Int64(api.maximumResponseSize))
        switch api.responseFormat {
        case .json: add(0)
        case .raw: add(1)
        }
        hash = digest.finalize().withUnsafeBytes { RequestSignature.hex($0) }
    }
}
