import ArgumentParser
import Foundation
import Runway

/// `runway network`: the network path as Runway sees it, and its changes — rtnetlink on Linux.
struct NetworkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "network",
        abstract: "Print the network path (reachable, interfaces) and, with --watch, its next changes."
    )

    @Option(help: "Print this many changes after the current path, then exit.")
    var watch = 0

    func run() async throws {
        let monitor = NetworkMonitor.system()
        let changes = monitor.changes()
        Self.print(monitor.path)
        var seen = 0
        if watch > 0 {
            for await path in changes {
                Self.print(path)
                seen += 1
                if seen == watch { break }
            }
        }
        monitor.stop()
    }

    /// One JSON line, written unbuffered: a parent process reads it through a pipe at once.
    static func print(_ path: NetworkPath) {
        let interfaces = path.interfaces.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
        let line = #"{"reachable":\#(path.isReachable),"interfaces":[\#(interfaces)],"expensive":\#(path.isExpensive),"constrained":\#(path.isConstrained)}"#
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
