import NIOCore
import NIOSSL
import X509

/// After the TLS handshake of a connection to an address an endpoint selector chose: the
/// certificate must name the host as a DNS name. NIOSSL also accepts a certificate whose IP
/// address entry matches the address connected to, which would let the owner of any address
/// with such a certificate answer for the host; this check refuses that.
struct HostNameCheck: Sendable {
    struct Failure: Error {
        let host: String
    }

    let host: String

    func verify(_ channel: any Channel) -> EventLoopFuture<Void> {
        let host = self.host
        return channel.nioSSL_peerCertificate().flatMapErrorWithEventLoop { _, eventLoop in
            // Plain HTTP: no handshake, no identity to check.
            eventLoop.makeSucceededFuture(nil)
        }.flatMapThrowing { certificate in
            guard let certificate else { return }
            guard Self.names(host, in: certificate) else {
                channel.close(promise: nil)
                throw Failure(host: host)
            }
        }
    }

    /// Whether a DNS name among `certificate`'s subject alternative names matches `host`, a
    /// leading `*.` matching one label. (The common name is not consulted, as browsers no longer
    /// do.)
    static func names(_ host: String, in certificate: NIOSSLCertificate) -> Bool {
        guard let bytes = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: bytes),
            let alternatives = try? parsed.extensions.subjectAlternativeNames
        else { return false }
        var dnsNames: [String] = []
        for name in alternatives {
            if case .dnsName(let dnsName) = name { dnsNames.append(dnsName) }
        }
        let wanted = host.lowercased()
        return dnsNames.contains { pattern in
            let pattern = pattern.lowercased()
            if pattern.hasPrefix("*.") {
                guard let dot = wanted.firstIndex(of: ".") else { return false }
                return wanted[dot...] == pattern.dropFirst() && wanted[..<dot].count > 0
            }
            return pattern == wanted
        }
    }
}
