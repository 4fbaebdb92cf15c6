import Foundation
import HTTPTypes

/// The identity of a load's network call, for loads that no cache answers: identical loads in
/// flight at once share one request (``CallCoalescer``).
///
/// Everything that makes the request is in it — service, environment and its base URL, API
/// name, method, path, every param sorted by name, every header field the service and the API
/// give — the sign-in the credential is taken from, so loads of two users never share a call,
/// and what bounds the load (its timeouts, its largest answer, its format), so no load waits
/// longer or accepts more than its own API says. Only `GET` and `HEAD` without a body, without a
/// transfer's hooks, and for an API that has not turned ``API/sharesIdenticalLoads`` off. The
/// engine makes one only when another load of the same API type is in flight beside the load
/// (``identity(api:registered:params:body:hooks:)``).
struct FlightKey {
    /// Every text part behind its length in UTF-8 bytes (`11:listings-v2|`), every number in
    /// its place, so no choice of values can make two different calls share a text. Kept as
    /// text, not hashed: the key lives only while its call is in flight (in memory, never
    /// logged), and the coalescer's dictionary hashes it anyway; made with a SHA-256 and its
    /// hex, it was the engine's costliest step on a load after the parser (`perf`). Its
    /// `runway-flight-3|` start tells it apart from a cache key's hex digest and from the
    /// generated client's `operation …` keys.
    let text: String

    /// The key of a load of `api`, or `nil` for one that shares with no other (see
    /// ``shares(_:body:hooks:)``, and params that cannot be written as JSON).
    init?(api: some API, service: Service, params: Parameters, body: RequestBody?, hooks: TransferHooks) {
        guard Self.shares(api, body: body, hooks: hooks) else { return nil }
        self.init(api: api, service: service, params: params, signIn: Self.signIn(of: api, service: service))
    }

    /// The identity of a load's call in the engine's coalescer, its key made only when another
    /// load of the same API type is in flight beside it; `nil` for a load that shares with none.
    /// The sign-in is read now, as the load starts: the key made later still names the user the
    /// load is for.
    static func identity(
        api: some API, registered: RegisteredService, params: Parameters, body: RequestBody?, hooks: TransferHooks
    ) -> CallCoalescer.Identity? {
        guard shares(api, body: body, hooks: hooks) else { return nil }
        let signIn = signIn(of: api, service: registered.service)
        return CallCoalescer.Identity(kind: ObjectIdentifier(APISnapshot.identity(of: api))) {
            FlightKey(api: api, service: registered.service, params: params, signIn: signIn)?.text
        }
    }

    /// Whether a load may share its call: a `GET` or `HEAD` without a body, without a transfer's
    /// hooks, of an API that has not turned ``API/sharesIdenticalLoads`` off.
    static func shares(_ api: some API, body: RequestBody?, hooks: TransferHooks) -> Bool {
        api.sharesIdenticalLoads && (api.method == .get || api.method == .head) && body == nil && hooks.sink == nil
            && hooks.prepare == nil && hooks.uploadProgress == nil && hooks.signIn == nil
    }

    /// The sign-in a load of `api` takes its credential from, if it takes one.
    private static func signIn(of api: some API, service: Service) -> SignInEpoch? {
        api.authenticates ? service.credentials.authentication?.epoch : nil
    }

    /// The key of a load of `api` made for `signIn`; `nil` when its params cannot be written as JSON.
    private init?(api: some API, service: Service, params: Parameters, signIn: SignInEpoch?) {
        let apiHeaders = api.headers
        var fields = service.commonHeaders
        if !apiHeaders.isEmpty {
            for field in apiHeaders { fields[fields: field.name] = [] }
            fields.append(contentsOf: apiHeaders)
        }
        var paramsData: Data?
        if !params.isEmpty || !service.commonParams.isEmpty {
            var all = service.commonParams
            all.merge(params) { _, own in own }
            guard let data = try? JSON.object(all).encoded() else { return nil }
            paramsData = data
        }
        var key = KeyText(reserving: 192 + (paramsData?.count ?? 0))
        key.add(service.id.rawValue)
        key.add(service.environment.rawValue)
        key.add(service.baseURL ?? "")
        key.add(api.name)
        key.add(api.method.rawValue)
        key.add(api.path)
        if let paramsData { key.add(paramsData) } else { key.add("{}") }
        key.add(Int64(fields.count))
        for field in fields {
            key.add(field.name.canonicalName)
            key.add(field.value)
        }
        key.add(signIn?.description ?? "")
        let totalTimeout = api.totalTimeout
        key.add(api.timeout)
        key.add(totalTimeout ?? .zero)
        key.add(totalTimeout == nil ? 0 : 1)
        key.add(Int64(api.maximumResponseSize))
        switch api.responseFormat {
        case .json: key.add(0)
        case .raw: key.add(1)
        }
        text = key.finished()
    }
}

/// A flight key's text as it is written: bytes appended to one buffer, made a string once
/// (appending to a `String` part by part took a third of the key's time), by methods that
/// are not generic (the key's own initialiser is, over the API, and functions nested in it
/// looked up generic metadata on every call). Nothing is formatted through reflection either
/// (an enum's or a duration's description).
private struct KeyText {
    private var bytes: [UInt8] = []

    init(reserving capacity: Int) {
        bytes.reserveCapacity(capacity)
        bytes.append(contentsOf: "runway-flight-3|".utf8)
    }

    /// A text part: its length in UTF-8 bytes, `:`, the bytes, `|`.
    mutating func add(_ part: String) {
        var part = part
        part.withUTF8 { add(UnsafeRawBufferPointer($0)) }
    }

    /// A part of bytes (the params' JSON), written as a text part is.
    mutating func add(_ part: Data) {
        part.withUnsafeBytes { add($0) }
    }

    /// A number in decimal, then `|`: numbers stand at fixed places, so they need no length.
    mutating func add(_ number: Int64) {
        appendDecimal(number)
        bytes.append(UInt8(ascii: "|"))
    }

    /// A duration: its seconds and attoseconds, as two numbers.
    mutating func add(_ duration: Duration) {
        add(duration.components.seconds)
        add(duration.components.attoseconds)
    }

    private mutating func add(_ part: UnsafeRawBufferPointer) {
        appendDecimal(Int64(part.count))
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: part)
        bytes.append(UInt8(ascii: "|"))
    }

    private mutating func appendDecimal(_ number: Int64) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        var rest = number.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10))
            rest /= 10
        } while rest > 0
        // Reversed in place (a slice's `reverse()` copies the buffer and writes it back).
        var (low, high) = (start, bytes.count - 1)
        while low < high {
            bytes.swapAt(low, high)
            low += 1
            high -= 1
        }
    }

    /// The text; every part is valid UTF-8 (strings, and params as JSON), so nothing is repaired.
    func finished() -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
