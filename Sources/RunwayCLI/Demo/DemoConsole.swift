import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the demo speaks. On a terminal: colour, and a progress line on standard error while a
/// chapter runs. Otherwise plain text. With `--json`, nothing but the summary at the end.
@MainActor
final class DemoConsole {
    private let isTerminal: Bool
    private let showsProgress: Bool
    private let jsonOnly: Bool
    private var progress: Task<Void, Never>?

    init(jsonOnly: Bool) {
        self.jsonOnly = jsonOnly
        isTerminal = isatty(STDOUT_FILENO) == 1
        showsProgress = isatty(STDERR_FILENO) == 1
    }

    /// A line of the story.
    func say(_ line: String = "") {
        guard !jsonOnly else { return }
        print(line)
    }

    /// A chapter starts: on a terminal, a progress line that counts the seconds until it ends.
    func begin(_ chapter: DemoChapter, number: Int, of count: Int) {
        guard showsProgress, !jsonOnly else { return }
        let label = "[\(number)/\(count)] \(chapter.title)"
        let started = ContinuousClock.now
        progress = Task.detached {
            let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
            var frame = 0
            while !Task.isCancelled {
                let seconds = (ContinuousClock.now - started).milliseconds / 1000
                StandardStream.error.write("\r\u{1B}[2K\(frames[frame % frames.count]) \(label) \(oneDecimal(seconds)) s")
                frame += 1
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// A chapter ended: its heading, its lines, and how it went.
    func end(_ chapter: DemoChapter, number: Int, log: ChapterLog, outcome: ChapterOutcome, seconds: Double) async {
        if let progress {
            progress.cancel()
            await progress.value
            self.progress = nil
            StandardStream.error.write("\r\u{1B}[2K")
        }
        guard !jsonOnly else { return }
        say()
        say(paint("\(number). \(chapter.title)", "1"))
        for line in log.lines { say("   " + line) }
        switch outcome {
        case .passed: say(paint("   ✔ \(readable(milliseconds: seconds * 1000))", "32"))
        case .failed(let reason): say(paint("   ✘ \(reason)", "31"))
        case .skipped(let reason): say(paint("   – skipped: \(reason)", "33"))
        }
    }

    /// `text` in an SGR colour on a terminal; as it is otherwise.
    func paint(_ text: String, _ code: String) -> String {
        isTerminal ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}

/// How a chapter went.
enum ChapterOutcome {
    case passed
    case failed(String)
    case skipped(String)
}
