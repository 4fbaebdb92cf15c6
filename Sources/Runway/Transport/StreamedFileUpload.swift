import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(FoundationNetworking)
extension URLSessionTransport {
    /// `urlRequest` with `file` (`length` bytes) as a body stream: how a file is uploaded on
    /// Linux.
    ///
    /// swift-corelibs-foundation sends an upload task's file through a `DispatchIO` channel,
    /// pausing the curl handle until each read comes back; a read that comes back after the
    /// transfer ended (the server answered and closed, the task was cancelled or timed out)
    /// unpauses the ended handle with a `try!` that fails, and the process traps (its
    /// `BodySource.swift` and `NativeProtocol.swift`; met in CI and in one of nine runs of
    /// Runway's suite). A body stream is read when curl asks for bytes, on the session's work
    /// queue, with nothing left to come back later.
    ///
    /// curl sends a body of unknown length chunked, whatever `Content-Length` says, unless the
    /// request names a `Transfer-Encoding`; it sends no field whose value is blank. So the
    /// length goes in `Content-Length` and a blank `Transfer-Encoding` keeps the body whole,
    /// as a file upload sends it. A blank `Content-Type` likewise keeps Foundation from adding
    /// a form's type to a POST that has none.
    static func streaming(_ urlRequest: URLRequest, file: URL, length: Int64) throws(RunwayError) -> URLRequest {
        guard let stream = InputStream(url: file) else {
            throw .invalidRequest(reason: "cannot read \(file.path)")
        }
        var fields = urlRequest.allHTTPHeaderFields ?? [:]
        var hasContentType = false
        for name in Array(fields.keys) {
            switch name.lowercased() {
            case "content-length", "transfer-encoding": fields[name] = nil
            case "content-type": hasContentType = true
            default: break
            }
        }
        fields["Content-Length"] = String(length)
        fields["Transfer-Encoding"] = " "
        if !hasContentType { fields["Content-Type"] = " " }
        var streamed = urlRequest
        streamed.allHTTPHeaderFields = fields
        streamed.httpBodyStream = stream
        return streamed
    }
}
#endif
