public import Foundation
public import HTTPTypes

/// A finished download: where its file is and what came with it.
public struct DownloadedFile: Sendable {
    /// The file, complete, at the destination that was asked for.
    public var url: URL
    /// Its size in bytes.
    public var byteCount: Int64
    /// How many of those bytes were already on disk from an earlier, interrupted download and
    /// were not downloaded again (0 for a download from the start).
    public var resumedFrom: Int64
    /// The request that answered (the last redirect hop), its credentials redacted as in
    /// ``RawResponse/request``.
    public var request: HTTPRequest
    /// The head of the answer that completed it.
    public var response: HTTPResponse
}

extension DownloadedFile {
    /// The answer as interceptors see it: its head, with an empty body (the body is in the file).
    func headOnly(of api: some API) -> RawResponse {
        RawResponse(api: api, request: request, response: response, body: Data(), json: nil)
    }
}
