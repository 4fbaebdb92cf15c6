import ArgumentParser
import Foundation
import RunwayStorage

/// `runway storage`: what an app stores, where, and whether it is backed up.
struct StorageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage",
        abstract: "Inspect an app's storage container.",
        subcommands: [Report.self]
    )

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List every file per role with its size and backup status, and the totals."
        )

        @Option(help: "An explicit container root (Documents, Library/…, tmp below it).")
        var root: String?

        @Option(help: "The app name of the system layout (XDG directories on Linux).")
        var app = "runway"

        @Flag(help: "Print JSON instead of a table.")
        var json = false

        func run() async throws {
            let container =
                root.map { Container(root: URL(fileURLWithPath: $0, isDirectory: true)) }
                ?? Container(.system(appName: app))
            let report = StorageReport(container: container)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                print(report.text)
            }
        }
    }
}
