import Foundation

/// httpbin (PyPI) under gunicorn, in a child process on a free loopback port: a server Runway's
/// authors did not write, with its own reading of HTTP — `WWW-Authenticate` on every 401,
/// `Set-Cookie` on redirects, its own encodings. `Scripts/test` installs both packages
/// (``PythonTools``).
public struct HTTPBin: Sendable {
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public let process: ChildProcess
    public let port: Int

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts gunicorn (threaded workers, so a slow endpoint holds no other request) and waits
    /// for the address it listens on.
    static func start() async throws -> HTTPBin {
        // A child started from the test process inherits its blocked signals, so gunicorn would
        // never hear the signal that stops it: the mask is cleared before gunicorn starts.
        let launcher = "import signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, set()); from gunicorn.app.wsgiapp import run; sys.argv = ['gunicorn'] + sys.argv[1:]; run()"
        let arguments = [
            "-c", launcher, "--bind", "127.0.0.1:0", "--worker-class", "gthread", "--threads", "16",
            "--no-control-socket", "--log-level", "info",
            // gunicorn closes an idle keep-alive connection after 2 s; on a busy machine the
            // next request of a test could meet that close on its pooled connection. These tests
            // are not about that race (see the Transports article), so idle
            // connections stay open for the test's length.
            "--keep-alive", "300", "httpbin:app",
        ]
        let process = PythonTools.process(arguments, error: .pipe)
        try process.run()
        guard let reader = process.standardError else { throw ChildProcess.SpawnFailure(description: "no pipe") }
        let port = await offThePool { () -> Int? in
            var text = ""
            while true {
                let chunk = reader.availableData
                guard !chunk.isEmpty else { return nil }
                text += String(decoding: chunk, as: UTF8.self)
                if let range = text.range(of: #"Listening at: http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                    let colon = text[range].lastIndex(of: ":")
                {
                    return Int(text[range][text.index(after: colon)...])
                }
            }
        }
        guard let port else {
            process.terminate()
            throw Unavailable(description: "gunicorn did not start httpbin: \(PythonTools.installHint)")
        }
        // The rest of its log is read and dropped, so that a full pipe never stalls a worker.
        Thread { while !reader.availableData.isEmpty {} }.start()
        return HTTPBin(process: process, port: port)
    }

    /// Stops gunicorn and its workers at once (SIGINT: a graceful SIGTERM would wait up to
    /// 30 seconds for the client's idle keep-alive connections).
    func stop() async {
        process.interrupt()
        let process = self.process
        await offThePool { process.waitUntilExit() }
    }
}

/// Runs `body` with a fresh httpbin, stopping it after.
public func withHTTPBin<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: (HTTPBin) async throws -> T
) async throws -> T {
    let server = try await HTTPBin.start()
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
