import Foundation

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
        if service.endpoints != nil, !transport.supportsConnectAddress {
            throw .invalidRequest(
                reason: "service \(service.id) has an endpoint selector, but its transport cannot connect to a chosen address (it always resolves the host by DNS)")
        }
    }
}
