import Runway

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
