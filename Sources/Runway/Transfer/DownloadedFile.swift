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
    /// The head of the answer that completed it.
    public var response: HTTPResponse
}
