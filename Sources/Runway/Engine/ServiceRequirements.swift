import Foundation
import HTTPTypes

/// What a service asks of the transport that will carry it, checked when it is registered: a
/// service never gets silently less than it says.
enum ServiceRequirements {
    /// Throws when `transport` cannot do what `service` asks.
    static func check(_ service: Service, transport: any Transport) throws(RunwayError) {
        // What contradicts itself first: it is wrong on every transport.
        try checkFieldOwners(service)
        try checkConnection(service)
        let scopes = transport.pinScopes
        for pin in service.connection.pins where !scopes.contains(pin.scope) {
            let can = scopes.isEmpty
                ? "it checks no pins on this platform"
                : "it checks only \(scopes.map(\.description).sorted().joined(separator: " and "))"
            throw .invalidRequest(
                reason: "service \(service.id) pins \(pin.host) on \(pin.scope), which its transport cannot check: \(can)")
        }
        if service.connection.endpoints != nil, !transport.supportsConnectAddress {
            throw .invalidRequest(
                reason: "service \(service.id) has an endpoint selector, but its transport cannot connect to a chosen address (it always resolves the host by DNS)")
        }
    }

    /// Throws when two parts of `service` write the same header field: the signer after the
    /// credential, or either over a common header — the later one would silently win.
    static func checkFieldOwners(_ service: Service) throws(RunwayError) {
        // Nothing writes a field of its own: nothing to compare (and no sets of field names made
        // at a launch's first registration, whose first use costs a runtime lookup on Linux).
        guard service.credentials.signer != nil || service.credentials.authentication != nil else { return }
        let signed = service.credentials.signer?.writtenFields ?? []
        let credential = service.credentials.authentication?.credentialFields ?? []
        func names(_ fields: Set<HTTPField.Name>) -> String {
            fields.map(\.rawName).sorted().joined(separator: ", ")
        }
        if let signer = service.credentials.signer, !signed.isDisjoint(with: credential) {
            throw .invalidRequest(
                reason: "service \(service.id): its signer (\(type(of: signer))) writes \(names(signed.intersection(credential))), where its authentication puts the credential; the signature would overwrite it — send the credential in another field (Authenticator.credentialFields) or sign with a signer that leaves it")
        }
        let common = Set(service.commonHeaders.map(\.name))
        for (owner, fields) in [("signer", signed), ("authentication", credential)] where !common.isDisjoint(with: fields) {
            throw .invalidRequest(
                reason: "service \(service.id): its common headers set \(names(common.intersection(fields))), which its \(owner) writes on every request")
        }
    }

    /// Throws when the service's connection settings contradict its base URLs: a pinned host
    /// reached over plain HTTP (pins are checked on TLS connections, so such a request would go
    /// unpinned), or an endpoint selector for a host no base URL names (it would never be used).
    static func checkConnection(_ service: Service) throws(RunwayError) {
        guard !service.connection.pins.isEmpty || service.connection.endpoints != nil else { return }
        // Each environment's base URL read as requests read it, so the host compared here is
        // the one pins and selectors are matched against at send time.
        let bases = service.baseURLs.keys.sorted { $0.rawValue < $1.rawValue }.compactMap { environment in
            var each = service
            each.environment = environment
            each.connection.allowsInsecureHTTP = true  // only the host matters here
            return (try? RequestBuilder.baseURL(of: each)).map { (environment, $0) }
        }
        let pinned = Set(service.connection.pins.map(\.host))
        for (environment, base) in bases where base.scheme == "http" && pinned.contains(AuthorityHost.of(base.authority)) {
            throw .invalidRequest(
                reason: "service \(service.id) pins \(AuthorityHost.of(base.authority)), but its \(environment.rawValue) base URL reaches it over plain HTTP, where no pin is checked")
        }
        if let selector = service.connection.endpoints, !bases.contains(where: { selector.matches(authority: $0.1.authority) }) {
            throw .invalidRequest(
                reason: "service \(service.id) has an endpoint selector for \(selector.host), which none of its base URLs names: it would never choose an address")
        }
    }
}
