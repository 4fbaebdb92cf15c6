import Foundation

/// A sparse temporary file of `count` bytes: all of them to send, none of them on disk.
public func makeSparseFile(_ count: Int64) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-upload-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let url = folder.appendingPathComponent("sparse.bin")
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    try handle.truncate(atOffset: UInt64(count))
    return url
}
