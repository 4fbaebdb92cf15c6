import Foundation
import Runway

/// One chapter of `runway demo`: one idea of the network layer, shown with figures measured in the run.
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
        .offline, .memory, .operationLogs, .outbox, .openAPI, .endpoints, .storage, .waterfall,
    ]
}

/// A chapter that did not see what it expected, and why.
struct DemoChapterFailure: Error, CustomStringConvertible {
    let description: String
}
