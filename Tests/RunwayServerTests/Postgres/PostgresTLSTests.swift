import Foundation
import PostgresNIO
@testable import Runway
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// The collector's database over TLS, as libpq's `sslmode` says it, against a throwaway cluster
/// that refuses every connection without TLS and presents a certificate made at test time.
@Suite("PostgreSQL over TLS", .timeLimit(.minutes(10)))
struct PostgresTLSTests {
    /// Whether the connection `url` configures is accepted, and encrypted by the server's own
    /// account. A refused connection is retried by the pool until the timeout, so one expected
    /// to be refused gets a short one (being slow cannot make it connect); one expected to
    /// connect gets a long one (a busy machine may be slow to).
    static func connects(_ url: String, expected: Bool = true) async throws -> Bool {
        let configuration = try PostgresCollectorDatabase.configuration(url: url)
        let database: PostgresCollectorDatabase
        do {
            database = try await PostgresCollectorDatabase.connect(
                configuration, logger: PostgresCollectorTests.quiet, timeout: .seconds(expected ? 60 : 5))
        } catch {
            // A connection the server or the certificate check refuses ends in the typed error.
            #expect(error is PostgresCollectorDatabase.Unreachable, "\(error)")
            return false
        }
        defer { Task { await database.close() } }
        let rows = try await database.client.query(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: PostgresCollectorTests.quiet)
        for try await encrypted in rows.decode(Bool.self) { return encrypted }
        return false
    }

    @Test("require, verify-ca and verify-full connect encrypted; disable is refused by the server; another CA is refused, and verify-full refuses a name the certificate lacks; runway serve collects over verify-full")
    func sslModes() async throws {
        let authority = try TestCertificateAuthority()
        // Its one name: localhost — not 127.0.0.1 (SwiftNIO SSL matches an IP address in the
        // certificate against the peer's address whatever the host was called).
        let leaf = try authority.issueLeaf(commonName: "localhost", dnsNames: ["localhost"], ipAddresses: [])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-pgtls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let ca = folder.appendingPathComponent("ca.pem").path
        let otherCA = folder.appendingPathComponent("other-ca.pem").path
        try authority.rootPEM.write(toFile: ca, atomically: true, encoding: .utf8)
        try TestCertificateAuthority().rootPEM.write(toFile: otherCA, atomically: true, encoding: .utf8)
        try await PostgresCluster.with(tls: .init(certificatePEM: leaf.certificatePEM, privateKeyPEM: leaf.privateKeyPEM)) { (cluster: PostgresCluster) async throws in
            let base = "postgres://runway@127.0.0.1:\(cluster.port)/postgres"
            #expect(try await Self.connects(base, expected: false) == false, "sslmode=disable (the default) is refused by the server")
            let byName = "postgres://runway@localhost:\(cluster.port)/postgres"
            #expect(try await Self.connects(base + "?sslmode=require"))
            #expect(try await Self.connects(byName + "?sslmode=verify-full&sslrootcert=\(ca)"))
            #expect(try await Self.connects(base + "?sslmode=verify-full&sslrootcert=\(ca)", expected: false) == false, "127.0.0.1 is not its name")
            #expect(try await Self.connects(base + "?sslmode=verify-ca&sslrootcert=\(ca)"), "verify-ca checks the issuer only")
            #expect(try await Self.connects(byName + "?sslmode=verify-full&sslrootcert=\(otherCA)", expected: false) == false)
            #expect(try await Self.connects(base + "?sslmode=verify-ca&sslrootcert=\(otherCA)", expected: false) == false)
            // runway serve on it, by its name and verify-full: a signed batch is stored over TLS.
            let url = byName + "?sslmode=verify-full&sslrootcert=\(ca)"
            let (process, baseURL, _) = try await startServe(["--postgres", url], niceness: 5) { $0.contains("Signatures verified") }
            defer { process.terminate() }
            let batch = try CollectorScaleOutTests.SignedBatch([CollectorTests.event(id: "over-tls")], for: baseURL)
            let answer = try await batch.send(to: baseURL)
            #expect(answer.status == 200 && answer.json?["new"]?.intValue == 1)
            let database = try await PostgresCollectorDatabase.connect(
                try PostgresCollectorDatabase.configuration(url: url), logger: PostgresCollectorTests.quiet)
            #expect(try await PostgresOperationLogStore(database: database).allEventIDs() == ["over-tls"])
            await database.close()
            #expect(throws: PostgresCollectorDatabase.URLError.self) {
                try PostgresCollectorDatabase.configuration(url: base + "?sslmode=verify-full")
            }
            #expect(throws: PostgresCollectorDatabase.URLError.self) {
                try PostgresCollectorDatabase.configuration(url: base + "?sslmode=allow")
            }
        }
    }
}
