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
    /// gunicorn's access log, when asked for at start.
    public let accessLog: AccessLog?

    /// gunicorn's access log, one line per request in the format given at start, read from its
    /// standard output as it comes.
    public final class AccessLog: Sendable {
        private let reader: FileHandle
        private let buffer = TestBox("")

        init(reader: FileHandle) { self.reader = reader }

        /// The lines logged until one containing `marker` (included): with one worker thread,
        /// every request answered before the marker's request is logged before it.
        public func lines(through marker: String) async throws -> [String] {
            let reader = self.reader
            let buffer = self.buffer
            return try await offThePool { () throws -> [String] in
                while true {
                    let text = buffer.value
                    if let range = text.range(of: marker), let end = text[range.upperBound...].firstIndex(of: "\n") {
                        buffer.set(String(text[text.index(after: end)...]))
                        return text[...end].split(separator: "\n").map(String.init)
                    }
                    let chunk = try reader.availableBytes()
                    if chunk.isEmpty { return text.split(separator: "\n").map(String.init) }
                    buffer.set(text + String(decoding: chunk, as: UTF8.self))
                }
            }
        }
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts gunicorn (threaded workers, so a slow endpoint holds no other request) and waits
    /// for the address it listens on.
    ///
    /// - parameters:
    ///   - threads: gunicorn's worker threads; one handles requests one after another, so that
    ///     the access log is in request order.
    ///   - accessLogFormat: gunicorn's `--access-logformat`: with it, ``accessLog`` reads the
    ///     lines.
    static func start(threads: Int = 16, accessLogFormat: String? = nil) async throws -> HTTPBin {
        // A child started from the test process inherits its blocked signals, so gunicorn would
        // never hear the signal that stops it: the mask is cleared before gunicorn starts.
        let launcher = "import signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, set()); from gunicorn.app.wsgiapp import run; sys.argv = ['gunicorn'] + sys.argv[1:]; run()"
        let arguments = [
            "-c", launcher, "--bind", "127.0.0.1:0", "--worker-class", "gthread", "--threads", "\(threads)",
            "--no-control-socket", "--log-level", "info",
            // gunicorn closes an idle keep-alive connection after 2 s; on a busy machine the
            // next request of a test could meet that close on its pooled connection. These tests
            // are not about that race (see the Transports article), so idle
            // connections stay open for the test's length.
            "--keep-alive", "300",
        ] + (accessLogFormat.map { ["--access-logfile", "-", "--access-logformat", $0] } ?? []) + ["httpbin:app"]
        let process = PythonTools.process(arguments, output: accessLogFormat == nil ? .null : .pipe, error: .pipe)
        try process.run()
        guard let reader = process.standardError else { throw ChildProcess.SpawnFailure(description: "no pipe") }
        let port = try await offThePool { () throws -> Int? in
            var text = ""
            while true {
                let chunk = try reader.availableBytes()
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
        // The rest of its log is read and dropped, so that a full pipe never stalls a worker;
        // a failed read ends the reading (Foundation's availableData would trap the process).
        Thread { while let chunk = try? reader.availableBytes(), !chunk.isEmpty {} }.start()
        return HTTPBin(process: process, port: port, accessLog: process.standardOutput.map(AccessLog.init(reader:)))
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
    isolation: isolated (any Actor)? = #isolation, threads: Int = 16, accessLogFormat: String? = nil,
    _ body: (HTTPBin) async throws -> T
) async throws -> T {
    let server = try await HTTPBin.start(threads: threads, accessLogFormat: accessLogFormat)
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
