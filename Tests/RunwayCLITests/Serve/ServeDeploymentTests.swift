import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import NIOCore
import NIOSSL
@testable import Runway
import RunwayDemoServer
import RunwayExamples
import RunwayTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `runway serve` as an operator runs it: on the address and port it is given, behind a real
/// TLS-terminating nginx whose forwarding fields it believes only from nginx, drained by SIGTERM
/// with a batch in flight answered, and telling an orchestrator it is alive and ready.
@Suite("runway serve deployed", .timeLimit(.minutes(10)))
struct ServeDeploymentTests {
    /// A signed batch of one new event for `scheme://authority`, as head and body.
    static func signedBatch(scheme: String, authority: String) throws -> (HTTPRequest, Data) {
        let body = try Gzip.compress(
            Data(#"{"events":[{"id":"\#(UUID().uuidString)","name":"tap","time":1700000000000,"payload":{}}]}"#.utf8))
        var head = HTTPRequest(method: .post, scheme: scheme, authority: authority, path: "/oplog/batches")
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentEncoding] = "gzip"
        try HMACSigner(keyID: DemoSigningKey.keyID, secret: DemoSigningKey.secret).sign(
            &head, body: body, context: SigningContext(apiName: "raw", service: "oplog", attempt: 1))
        return (head, body)
    }

    /// Sends a signed batch to `url` with `client`, adding `extra` fields after signing.
    static func post(
        _ url: String, signedFor authority: String, scheme: String, extra: [String: String] = [:], client: HTTPClient = .shared
    ) async throws -> (status: Int, reason: String?) {
        let (head, body) = try signedBatch(scheme: scheme, authority: authority)
        var request = HTTPClientRequest(url: url + "/oplog/batches")
        request.method = .POST
        for field in head.headerFields { request.headers.add(name: field.name.rawName, value: field.value) }
        for (name, value) in extra { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), (try? JSON(parsing: Data(buffer: bytes)))?["reason"]?.stringValue)
    }

    static func get(_ url: String) async throws -> (status: Int, body: JSON?) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), try? JSON(parsing: Data(buffer: bytes)))
    }

    /// The server's `/metrics`, as Prometheus reads it. The bound only ends a failing run: the
    /// server runs at a low priority, and a loaded machine may keep it waiting long.
    static func metricsText(port: Int) async throws -> String {
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(120))
        return String(buffer: try await response.body.collect(upTo: 1 << 20))
    }

    @Test("--host and --port bind where asked: the banner says so, and the address answers")
    func bindsWhereAsked() async throws {
        let port = try LoopbackSocket.freePort()
        let (process, baseURL, _) = try await startServe(["--host", "127.0.0.5", "--port", "\(port)"]) {
            $0.contains("Signatures verified")
        }
        defer { process.terminate() }
        #expect(baseURL == "http://127.0.0.5:\(port)")
        #expect(try await Self.get(baseURL + "/health").status == 200)
        #expect(try await Self.get(baseURL + "/ready").body?["status"]?.stringValue == "ready")
        #expect(Self.connect(port: port) == nil, "nothing listens on 127.0.0.1:\(port)")
    }

    /// nginx (Debian's, a server Runway's authors did not write) terminating TLS on a port of its
    /// own with a certificate made now, and proxying to `upstream` from 127.0.0.2 with the
    /// forwarding fields `headers` adds.
    static func withNginx<T>(
        upstream: String, headers: String, _ body: (_ httpsURL: String, _ client: HTTPClient) async throws -> T
    ) async throws -> T {
        let nginx = try #require(
            ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "nginx is missing: Scripts/test installs Debian's nginx-light")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-nginx-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issueLeaf()
        try leaf.certificatePEM.write(to: folder.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
        try leaf.privateKeyPEM.write(to: folder.appendingPathComponent("key.pem"), atomically: true, encoding: .utf8)
        let port = try LoopbackSocket.freePort()
        let path = folder.path
        let configuration = """
            daemon off; master_process off; worker_processes 1;
            pid \(path)/nginx.pid; error_log \(path)/error.log warn;
            events { worker_connections 64; }
            http {
              access_log off;
              client_body_temp_path \(path)/body; proxy_temp_path \(path)/proxy; fastcgi_temp_path \(path)/fastcgi;
              uwsgi_temp_path \(path)/uwsgi; scgi_temp_path \(path)/scgi;
              server {
                listen 127.0.0.1:\(port) ssl;
                ssl_certificate \(path)/cert.pem; ssl_certificate_key \(path)/key.pem;
                location / {
                  proxy_pass \(upstream);
                  proxy_bind 127.0.0.2;
                  \(headers)
                }
              }
            }
            """
        try configuration.write(to: folder.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        let process = ChildProcess(
            nginx, ["-p", path, "-c", "\(path)/nginx.conf", "-e", "\(path)/error.log"],
            output: .file("\(path)/stdout.log"), error: .output)
        try process.run()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try authority.rootCertificate()])
        var clientConfiguration = HTTPClient.Configuration(tlsConfiguration: tls)
        clientConfiguration.httpVersion = .http1Only
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        return try await withCleanup({
            try? await client.shutdown()
            process.terminate()
            await offThePool { process.waitUntilExit() }
            try? FileManager.default.removeItem(at: folder)
        }) {
            let url = "https://127.0.0.1:\(port)"
            // nginx listens once it answers; until then its port refuses. A busy machine may
            // take long to start it: the wait is bounded by a minute, not by a count of tries.
            var ready = false
            let giveUp = ContinuousClock.now + .seconds(60)
            while !ready, ContinuousClock.now < giveUp {
                ready = (try? await client.execute(HTTPClientRequest(url: url + "/health"), timeout: .seconds(30)))?.status == .ok
                if !ready { try await Task.sleep(for: .milliseconds(50)) }
            }
            try #require(ready, "nginx did not start: \((try? String(contentsOfFile: "\(path)/error.log", encoding: .utf8)) ?? "")")
            return try await body(url, client)
        }
    }

    @Test(
        "Behind nginx terminating TLS: a client signs https and the public host; with --trusted-proxy the signature verifies (Forwarded and X-Forwarded-*), without it every client is refused",
        arguments: [
            #"proxy_set_header Forwarded "for=$remote_addr;proto=$scheme;host=\"$http_host\"";"#,
            "proxy_set_header X-Forwarded-Proto $scheme; proxy_set_header X-Forwarded-Host $http_host;",
        ])
    func behindATLSProxy(headers: String) async throws {
        let port = try LoopbackSocket.freePort()
        let trusting = try await startServe(["--port", "\(port)", "--trusted-proxy", "127.0.0.2/32"]) {
            $0.contains("Forwarded scheme and host believed")
        }
        defer { trusting.0.terminate() }
        try await Self.withNginx(upstream: "http://127.0.0.1:\(port)", headers: headers) { url, client in
            let authority = url.replacingOccurrences(of: "https://", with: "")
            let through = try await Self.post(url, signedFor: authority, scheme: "https", client: client)
            #expect(through.status == 200, "\(through)")
        }
        // The same proxy in front of a collector that trusts no proxy: the signature is over
        // https and nginx's host, the collector sees http and its own — refused.
        let otherPort = try LoopbackSocket.freePort()
        let plain = try await startServe(["--port", "\(otherPort)"]) { $0.contains("Signatures verified") }
        defer { plain.0.terminate() }
        try await Self.withNginx(upstream: "http://127.0.0.1:\(otherPort)", headers: headers) { url, client in
            let authority = url.replacingOccurrences(of: "https://", with: "")
            let through = try await Self.post(url, signedFor: authority, scheme: "https", client: client)
            #expect(through.status == 401 && through.reason == "bad_signature")
        }
    }

    @Test("A client that is not the trusted proxy cannot claim a scheme or host: its forwarding fields are dropped and it is verified as it came")
    func forwardingFieldsFromOthersAreIgnored() async throws {
        let port = try LoopbackSocket.freePort()
        let (process, baseURL, _) = try await startServe(["--port", "\(port)", "--trusted-proxy", "127.0.0.2"]) {
            $0.contains("Forwarded scheme and host believed")
        }
        defer { process.terminate() }
        let authority = "127.0.0.1:\(port)"
        // Signed for what it truly used, with fields claiming otherwise: verified as it came.
        let honest = try await Self.post(
            baseURL, signedFor: authority, scheme: "http",
            extra: ["Forwarded": #"proto=https;host="bank.example""#, "X-Forwarded-Proto": "https", "X-Forwarded-Host": "bank.example"])
        #expect(honest.status == 200)
        // Signed for the claimed origin: refused, the claim not believed from 127.0.0.1.
        let claimed = try await Self.post(
            baseURL, signedFor: "bank.example", scheme: "https",
            extra: ["Forwarded": #"proto=https;host="bank.example""#])
        #expect(claimed.status == 401 && claimed.reason == "bad_signature")
    }

    /// Opens a TCP connection to 127.0.0.1:`port`; `nil` when refused.
    static func connect(port: Int) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    static func write(_ descriptor: Int32, _ data: Data) {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Everything the peer sends until it closes the connection.
    static func readToEnd(_ descriptor: Int32) async -> String {
        await offThePool {
            var bytes = Data()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count <= 0 { break }
                bytes.append(contentsOf: buffer[0..<count])
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    @Test("SIGTERM drains: new connections are refused at once, a batch whose body is still arriving is stored and answered 200, then the process exits 0")
    func sigtermDrains() async throws {
        let port = try LoopbackSocket.freePort()
        let (process, _, _) = try await startServe(["--port", "\(port)"]) { $0.contains("Signatures verified") }
        defer { process.terminate() }
        let (head, body) = try Self.signedBatch(scheme: "http", authority: "127.0.0.1:\(port)")
        let socket = try #require(Self.connect(port: port))
        defer { close(socket) }
        var text = "POST /oplog/batches HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        for field in head.headerFields { text += "\(field.name.rawName): \(field.value)\r\n" }
        text += "\r\n"
        Self.write(socket, Data(text.utf8) + body.prefix(body.count / 2))
        // The request is in flight (its head read, its body half there) when the signal comes:
        // the server's own gauge of requests in its handlers counts the POST. (An answered health
        // check on another connection did not say so: on a busy machine the POST's connection
        // could still be unread, and a drain closes such an idle connection without an answer.)
        let inFlight = #"http_server_active_requests{http_request_method="POST"} 1"#
        while try await !Self.metricsText(port: port).contains(inFlight) {
            // A pause between polls, not the signal: asking back to back would take the CPU the
            // low-priority server needs to read the POST.
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(kill(process.processIdentifier, SIGTERM) == 0)
        // Draining: the listening socket closes, so a new connection is refused. The server
        // runs at a low priority: on a busy machine it may take long to get there.
        var refused = false
        let giveUp = ContinuousClock.now + .seconds(90)
        while !refused, ContinuousClock.now < giveUp {
            if let probe = Self.connect(port: port) {
                close(probe)
                try await Task.sleep(for: .milliseconds(25))
            } else {
                refused = true
            }
        }
        #expect(refused, "the server stopped accepting")
        #expect(process.isRunning, "still running: a request is in flight")
        Self.write(socket, body.suffix(from: body.count / 2))
        let answer = await Self.readToEnd(socket)
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(300))")
        #expect(answer.contains(#""new":1"#))
        await offThePool { process.waitUntilExit() }
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    }
}
