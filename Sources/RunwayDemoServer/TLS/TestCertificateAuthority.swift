import Crypto
import Foundation
public import NIOSSL
import SwiftASN1
import X509

/// A certificate authority made in memory, for serving real TLS on 127.0.0.1 in tests and
/// demos: no certificate files, nothing trusted system-wide.
///
/// For example:
///
/// ```swift
/// let authority = try TestCertificateAuthority()
/// let server = try await DemoServer.start(tls: try authority.serverIdentity())
/// var tls = TLSConfiguration.makeClientConfiguration()
/// tls.trustRoots = .certificates([try authority.rootCertificate()])
/// ```
public struct TestCertificateAuthority: Sendable {
    /// The authority's own certificate, in PEM.
    public let rootPEM: String
    private let rootCertificate_: Certificate
    private let rootKey: P256.Signing.PrivateKey
    private let name: DistinguishedName

    /// Creates an authority with a fresh P-256 key.
    ///
    /// - throws: When the certificate cannot be built or signed.
    public init(commonName: String = "Runway Test CA") throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(commonName) }
        let certificate = try Self.certificate(
            for: key, subject: name, issuer: name, signedBy: key,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            })
        self.rootCertificate_ = certificate
        self.rootKey = key
        self.name = name
        self.rootPEM = try certificate.serializeAsPEM().pemString
    }

    /// The authority's certificate for a client's trust roots.
    public func rootCertificate() throws -> NIOSSLCertificate {
        try NIOSSLCertificate(bytes: Array(rootPEM.utf8), format: .pem)
    }

    /// A leaf certificate and key for `ipAddresses` (127.0.0.1 by default) and `dnsNames`
    /// (`localhost` by default), signed by this authority, with the public-key pin of the leaf
    /// (base64 SHA-256 of its SubjectPublicKeyInfo).
    public func issueLeaf(
        commonName: String = "127.0.0.1", dnsNames: [String] = ["localhost"], ipAddresses: [[UInt8]] = [[127, 0, 0, 1]]
    ) throws -> (
        certificatePEM: String, privateKeyPEM: String, spkiPin: String
    ) {
        let key = P256.Signing.PrivateKey()
        let leaf = try Self.certificate(
            for: key, subject: try DistinguishedName { CommonName(commonName) }, issuer: name, signedBy: rootKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(
                    dnsNames.map { GeneralName.dnsName($0) }
                        + ipAddresses.map { GeneralName.ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) })
            })
        let pem = try leaf.serializeAsPEM().pemString
        // The pin hashes the whole SubjectPublicKeyInfo DER (algorithm and key), as a client sees it.
        let spki = try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem).extractPublicKey().toSPKIBytes()
        let pin = Data(SHA256.hash(data: Data(spki))).base64EncodedString()
        return (pem, key.pemRepresentation, pin)
    }

    /// A P-256 certificate valid from an hour ago for a day.
    private static func certificate(
        for key: P256.Signing.PrivateKey, subject: DistinguishedName, issuer: DistinguishedName,
        signedBy issuerKey: P256.Signing.PrivateKey, extensions: Certificate.Extensions
    ) throws -> Certificate {
        let now = Date()
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400, issuer: issuer, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(issuerKey))
    }

    /// A server TLS configuration presenting a fresh leaf of this authority for `127.0.0.1` and
    /// `dnsNames`, offering HTTP/2 and HTTP/1.1 by ALPN.
    public func serverIdentity(dnsNames: [String] = ["localhost"]) throws -> TLSConfiguration {
        try pinnedServerIdentity(dnsNames: dnsNames).tls
    }

    /// ``serverIdentity(dnsNames:)`` with the leaf's public-key pin, for pinning tests.
    public func pinnedServerIdentity(dnsNames: [String] = ["localhost"]) throws -> (tls: TLSConfiguration, spkiPin: String) {
        let leaf = try issueLeaf(dnsNames: dnsNames)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(leaf.certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leaf.privateKeyPEM.utf8), format: .pem))
        )
        configuration.applicationProtocols = ["h2", "http/1.1"]
        return (configuration, leaf.spkiPin)
    }
}
