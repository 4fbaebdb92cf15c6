import Foundation
@testable import RunwayStorage
import RunwayTestSupport

/// A fresh directory under the system temp folder, removed when the test ends.
final class TemporaryRoot {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-storage-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var container: Container { Container(root: url) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Runs a program and returns its standard output; fails the test on a non-zero exit.
func run(_ executable: String, _ arguments: [String], in directory: URL? = nil) throws -> String {
    let process = ChildProcess(executable, arguments, directory: directory?.path, output: .pipe)
    try process.run()
    let data: Data
    do {
        defer { process.waitUntilExit() }
        data = try process.standardOutput?.readToEnd() ?? Data()
    }
    guard process.terminationStatus == 0 else {
        throw StorageError.io(operation: executable, path: arguments.joined(separator: " "), reason: "exit \(process.terminationStatus)")
    }
    return String(decoding: data, as: UTF8.self)
}
