import Foundation
import HTTPTypes

/// What a service asks of the transport that will carry it, checked when it is registered: a
/// service never gets silently less than it says.
enum ServiceRequirements {
    /// Throws when `transport` cannot do what `service` asks.
    static func check(_ service: Service, transport: any Transport) throws(RunwayError) {
        let scopes = transport.pinScopes
        for pin in service.pins where !scopes.contains(pin.scope) {
            let can = scopes.isEmpty
                ? "it checks no pins on this platform"
                : "it checks only \(scopes.map(\.description).sorted().joined(separator: " and "))"
            throw .invalidRequest(
                reason: "service \(service.id) pins \(pin.host) on \(pin.scope), which its transport cannot check: \(can)")
        }
        try checkFieldOwners(service)
        if service.endpoints != nil, !transport.supportsConnectAddress {
            throw .invalidRequest(
                reason: "service \(service.id) has an endpoint selector, but its transport cannot connect to a chosen address (it always resolves the host by DNS)")
        }
    }

    /// Throws when two parts of `service` write the same header field: the signer after the
    /// credential, or either over a common header — the later one would silently win.
    static func checkFieldOwners(_ service: Service) throws(RunwayError) {
        let signed = service.signer?.writtenFields ?? []
        let credential = service.authentication?.credentialFields ?? []
        func names(_ fields: Set<HTTPField.Name>) -> String {
            fields.map(\.rawName).sorted().joined(separator: ", ")
        }
        if let signer = service.signer, !signed.isDisjoint(with: credential) {
            throw .invalidRequest(
                reason: "service \(service.id): its signer (\(type(of: signer))) writes \(names(signed.intersection(credential))), where its authentication puts the credential; the signature would overwrite it — send the credential in another field (Authenticator.credentialFields) or sign with a signer that leaves it")
        }
        let common = Set(service.commonHeaders.map(\.name))
        for (owner, fields) in [("signer", signed), ("authentication", credential)] where !common.isDisjoint(with: fields) {
            throw .invalidRequest(
                reason: "service \(service.id): its common headers set \(names(common.intersection(fields))), which its \(owner) writes on every request")
        }
    }
}
