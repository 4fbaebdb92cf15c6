import Foundation
import Runway

/// One chapter of `runway demo`: an idea of the seed, shown with figures measured in the run.
struct DemoChapter: Sendable {
    /// What `--chapter` selects it by.
    let name: String
    /// The heading it prints.
    let title: String
    /// Whether it needs the server in this process (its probe sees the wire, or it stands up
    /// servers of its own); such chapters are skipped with `--server`.
    let needsInProcessServer: Bool
    /// Runs the chapter: says what was done, records its figures, and throws
    /// ``DemoChapterFailure`` when it did not see what it expected.
    let run: @MainActor @Sendable (DemoContext, ChapterLog) async throws -> Void

    init(
        _ name: String, _ title: String, needsInProcessServer: Bool = false,
        run: @escaping @MainActor @Sendable (DemoContext, ChapterLog) async throws -> Void
    ) {
        self.name = name
        self.title = title
        self.needsInProcessServer = needsInProcessServer
        self.run = run
    }

    /// Every chapter, in the order the demo tells them.
    static let all: [DemoChapter] = [
        .services, .signing, .reformers, .validation, .strategies, .landing, .pagination, .retries, .cache,
        .offline, .memory, .operationLogs, .endpoints, .storage,
    ]
}

/// A chapter that did not see what it expected, and why.
struct DemoChapterFailure: Error, CustomStringConvertible {
    let description: String
}

/// What one chapter said and measured.
@MainActor
final class ChapterLog {
    private(set) var lines: [String] = []
    private(set) var figures: [String: JSON] = [:]

    /// A line of the chapter's story.
    func say(_ line: String) { lines.append(line) }

    /// A figure of the run, for the story and for `--json`.
    func figure(_ name: String, _ value: JSON) { figures[name] = value }

    /// Fails the chapter with `reason` unless `condition` holds.
    func require(_ condition: Bool, _ reason: @autoclosure () -> String) throws {
        if !condition { throw DemoChapterFailure(description: reason()) }
    }
}

extension Duration {
    /// Milliseconds, for figures.
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}

/// `value` with one decimal, for the story.
func oneDecimal(_ value: Double) -> String { String(format: "%.1f", value) }

/// A time for the story: two decimals below 10 ms, one below 1 s, seconds above.
func readable(milliseconds: Double) -> String {
    if milliseconds < 10 { return String(format: "%.2f ms", milliseconds) }
    if milliseconds < 1000 { return String(format: "%.1f ms", milliseconds) }
    return String(format: "%.1f s", milliseconds / 1000)
}
