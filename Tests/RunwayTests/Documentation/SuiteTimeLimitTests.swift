import Foundation
import Testing

/// CONTRIBUTING's rule that a hang fails its own test instead of holding up the run: a test
/// awaiting an event that never comes (a server's hold, a child's exit) is ended by its suite's
/// time limit, and the run goes on to the next.
@Suite("The test suites keep CONTRIBUTING's rules", .timeLimit(.minutes(10)))
struct SuiteTimeLimitTests {
    /// `Tests/`, from this file's place in it.
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("every suite of every test target has a time limit")
    func everySuiteHasATimeLimit() throws {
        let files = FileManager.default.enumerator(at: Self.tests, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        var suites = 0
        var unlimited: [String] = []
        for file in files {
            let source = try String(contentsOf: file, encoding: .utf8)
            for declaration in Self.suiteDeclarations(in: source) {
                suites += 1
                if !declaration.contains(".timeLimit(") { unlimited.append("\(file.lastPathComponent): \(declaration)") }
            }
        }
        #expect(suites > 100, "the scan found the suites")
        #expect(unlimited.isEmpty, "\(unlimited.joined(separator: "\n"))")
    }

    /// Each `@Suite(…)` attribute of `source` up to the type it marks (its arguments may span lines).
    static func suiteDeclarations(in source: String) -> [String] {
        source.components(separatedBy: "\n@Suite(").dropFirst().map { rest in
            String(rest.prefix { $0 != "{" })
        }
    }
}
