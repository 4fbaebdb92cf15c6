import Foundation
import HTTPTypes

/// A request ready for the signer and the transport.
struct PreparedRequest: Sendable {
    var head: HTTPRequest
    var body: TransportBody?
}

/// Builds the `HTTPRequest` of one attempt from service + API + params: the only place that does.
enum RequestBuilder {
    /// Whether an API path may carry `byte` as it is (others are percent-encoded): a table of
    /// the 256 bytes, as a path's every byte is looked up (a `Set` hashed each one).
    private static let pathAllowed: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for byte in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/%".utf8 {
            table[Int(byte)] = true
        }
        return table
    }()

    static func build(api: some API, service: Service, params: Parameters, body: RequestBody? = nil) throws(RunwayError)
        -> PreparedRequest
    {
        try build(api: api, service: service, base: try baseURL(of: service), params: params, body: body)
    }

    /// - parameter body: The load's own body; with it, params go into the query.
    static func build(
        api: some API, service: Service, base: BaseURL, params: Parameters, body explicitBody: RequestBody? = nil
    ) throws(RunwayError) -> PreparedRequest {
        var merged = service.commonParams
        merged.merge(params) { _, own in own }

        let method = api.method
        let inQuery: Bool
        switch api.paramEncoding {
        case _ where explicitBody != nil: inQuery = true
        case .automatic: inQuery = method == .get || method == .head || method == .delete
        case .query: inQuery = true
        case .json, .form: inQuery = false
        }

        var path = base.path + "/" + encodePath(api.path)
        if let dots = PathSegment.dotSegment(in: path[...]) {
            throw .invalidRequest(reason: "the path \(path) has a \"\(dots)\" segment, which servers resolve to another route")
        }
        var body: TransportBody?
        var contentType: String?
        if let explicitBody {
            (body, contentType) = try explicitBody.prepared(for: api)
        }
        if inQuery {
            // No params (most GETs): nothing to sort or encode.
            let query = merged.isEmpty ? "" : try QueryEncoder.encode(merged)
            if !query.isEmpty { path += "?" + query }
        } else if api.paramEncoding == .form {
            body = TransportBody(Data(try QueryEncoder.encode(merged).utf8))
            contentType = "application/x-www-form-urlencoded; charset=utf-8"
        } else {
            do { body = TransportBody(try JSON.object(merged).encoded()) } catch {
                throw .paramsUnencodable(reason: error.reason)
            }
            contentType = "application/json"
        }

        var head = HTTPRequest(method: method, scheme: base.scheme, authority: base.authority, path: path)
        head.headerFields = service.commonHeaders
        let apiHeaders = api.headers
        // Room for the fields added below (the API's, then content type, accept, user agent and
        // codings) at once: appended one by one, the fields grew three times for a plain GET.
        head.headerFields.reserveCapacity(head.headerFields.count + apiHeaders.count + 4)
        if !apiHeaders.isEmpty {
            for field in apiHeaders {
                head.headerFields[fields: field.name] = []
            }
            head.headerFields.append(contentsOf: apiHeaders)
        }
        if let contentType { head.headerFields[.contentType] = contentType }
        // A field found absent is appended: the subscript's setter would look for the fields to
        // replace all over again.
        if api.responseFormat == .json, !head.headerFields.contains(.accept) {
            head.headerFields.append(HTTPField(name: .accept, value: "application/json"))
        }
        if !head.headerFields.contains(.userAgent) { head.headerFields.append(HTTPField(name: .userAgent, value: "Runway/1")) }
        // The codings every transport undoes, offered by the engine (one rule, not one per
        // transport), before the signature so that it covers them.
        if !head.headerFields.contains(.acceptEncoding) {
            head.headerFields.append(HTTPField(name: .acceptEncoding, value: ContentCoding.offered))
        }
        return PreparedRequest(head: head, body: body)
    }

    /// The parts of a base URL, checked: an http or https scheme and a host are required.
    struct BaseURL: Sendable {
        var scheme: String
        var authority: String
        var path: String
    }

    static func baseURL(of service: Service) throws(RunwayError) -> BaseURL {
        guard let text = service.baseURL else {
            throw .invalidRequest(reason: "service \"\(service.id)\" has no base URL for \(service.environment)")
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else {
            throw .invalidRequest(reason: "base URL \"\(text)\" has no http or https scheme")
        }
        guard let host = components.percentEncodedHost, !host.isEmpty else {
            throw .invalidRequest(reason: "base URL \"\(text)\" has no host")
        }
        guard components.percentEncodedQuery == nil, components.percentEncodedFragment == nil,
            components.user == nil
        else {
            throw .invalidRequest(reason: "base URL \"\(text)\" may hold only scheme, host, port and path")
        }
        if scheme == "http", !service.connection.allowsInsecureHTTP, !TransportSecurity.isLoopback(host: host) {
            throw .insecureConnection(host: host)
        }
        let authority = components.port.map { "\(host):\($0)" } ?? host
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        return BaseURL(scheme: scheme, authority: authority, path: path)
    }

    /// The API path without its leading slashes, with bytes no path may hold percent-encoded.
    static func encodePath(_ path: String) -> String {
        let trimmed = path.drop(while: { $0 == "/" })
        // Most paths need nothing encoded: no byte-by-byte rebuilding for them.
        if trimmed.utf8.allSatisfy({ pathAllowed[Int($0)] }) { return String(trimmed) }
        var output = ""
        for byte in trimmed.utf8 {
            if pathAllowed[Int(byte)] {
                output.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                output += String(format: "%%%02X", byte)
            }
        }
        return output
    }
}
