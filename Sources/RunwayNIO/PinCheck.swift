import NIOCore
import NIOSSL
import Runway

/// Checks a new connection's server key against a host's pins.
struct PinCheck: Sendable {
    struct Failure: Error {
        let host: String
    }

    let pins: PublicKeyPins

    func verify(_ channel: any Channel) -> EventLoopFuture<Void> {
        let pins = self.pins
        return channel.nioSSL_peerCertificate().flatMapThrowing { certificate in
            guard let certificate, let spki = try? certificate.extractPublicKey().toSPKIBytes(), pins.accepts(chain: [spki])
            else {
                channel.close(promise: nil)
                throw Failure(host: pins.host)
            }
        }.flatMapErrorThrowing { error in
            // No TLS handler at all (plain HTTP to a pinned host) fails closed too.
            if error is Failure { throw error }
            channel.close(promise: nil)
            throw Failure(host: pins.host)
        }
    }
}
