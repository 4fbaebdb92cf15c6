public import Hummingbird
import Foundation
import HTTPTypes

/// Middleware that restores the scheme and authority a client used, from a trusted proxy's
/// `Forwarded` (RFC 7239) or `X-Forwarded-Proto` / `X-Forwarded-Host` fields, so that
/// ``SignatureVerifier`` checks the signature over what the client signed: behind a
/// TLS-terminating load balancer, `https` and the public host.
///
/// Only a request whose connection comes from one of ``TrustedProxies`` is rewritten, and only
/// by the last element of each field (the one the nearest proxy added). From anyone else the
/// fields are dropped and the request is taken as it arrived, so a client cannot claim a scheme
/// or host it did not use. Put it before the verifier.
public struct ForwardedRequest<Context: RequestContext>: RouterMiddleware {
    private let proxies: TrustedProxies

    /// Believes the proxies at `proxies`.
    public init(trusting proxies: TrustedProxies) {
        self.proxies = proxies
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let names = ForwardingFields.all
        guard names.contains(where: { request.headers[$0] != nil }) else { return try await next(request, context) }
        var head = request.head
        let peer = (context as? any RemoteAddressRequestContext)?.remoteAddress
        if proxies.contains(peer) {
            let (scheme, host) = Self.forwarded(head.headerFields)
            if let scheme { head.scheme = scheme }
            if let host { head.authority = host }
        }
        for name in names { head.headerFields[name] = nil }
        return try await next(Request(head: head, body: request.body), context)
    }

    /// The scheme and host of the last `Forwarded` element, or else of the last values of
    /// `X-Forwarded-Proto` and `X-Forwarded-Host`; a value that is not a plain scheme or host
    /// is ignored.
    static func forwarded(_ fields: HTTPFields) -> (scheme: String?, host: String?) {
        if let name = ForwardingFields.forwarded, let forwarded = fields[values: name].last,
            let element = forwarded.split(separator: ",").last
        {
            var scheme: String?
            var host: String?
            for pair in element.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                var value = parts[1].trimmingCharacters(in: .whitespaces)
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
                switch parts[0].trimmingCharacters(in: .whitespaces).lowercased() {
                case "proto": scheme = value.lowercased()
                case "host": host = value
                default: break
                }
            }
            return (scheme.flatMap(validScheme), host.flatMap(validHost))
        }
        let last = { (name: String) -> String? in
            HTTPField.Name(name).flatMap { fields[values: $0].last }?
                .split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return (last("X-Forwarded-Proto").map { $0.lowercased() }.flatMap(validScheme), last("X-Forwarded-Host").flatMap(validHost))
    }

    private static func validScheme(_ scheme: String) -> String? { ["http", "https"].contains(scheme) ? scheme : nil }

    /// A host, an IPv6 literal in brackets, or either with a port: nothing else.
    private static func validHost(_ host: String) -> String? {
        guard !host.isEmpty, host.utf8.count <= 255 else { return nil }
        let allowed = host.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || [UInt8(ascii: "."), UInt8(ascii: "-"),
                UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "_")].contains(byte)
        }
        return allowed ? host : nil
    }
}

/// The fields a proxy says a client's scheme and host in (a generic type has no stored statics).
private enum ForwardingFields {
    static let forwarded = HTTPField.Name("Forwarded")
    static let all: [HTTPField.Name] = [
        forwarded, HTTPField.Name("X-Forwarded-Proto"), HTTPField.Name("X-Forwarded-Host"),
    ].compactMap { $0 }
}
