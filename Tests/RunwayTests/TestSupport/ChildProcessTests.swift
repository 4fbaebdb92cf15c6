import Foundation
import RunwayTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tests' children end with the test process: a test that never reached its clean-up leaves
/// no server running after the suite.
@Suite("Test children: killed when the test process exits", .timeLimit(.minutes(3)))
struct ChildProcessTests {
    /// Set in the environment of the run ``exitKillsAChildLeftRunning()`` starts.
    static let leaveChildVariable = "RUNWAY_TEST_LEAVE_CHILD"

    @Test("A child is on the exit list from its start until a wait sees it end")
    func onTheListUntilReaped() async throws {
        let child = ChildProcess("/bin/sleep", ["600"])
        try child.run()
        #expect(child.isKilledAtExit)
        child.terminate()
        await offThePool { child.waitUntilExit() }
        // Reaped: its process id may be reused, so it is no longer signalled.
        #expect(!child.isKilledAtExit)
    }

    /// Starts this test bundle again to run ``leaveAChildRunning()`` alone, its standard output a
    /// pipe that the child it leaves holds too: the pipe ends only once both have ended. The
    /// child sleeps ten minutes; it ends with the run only if the run's exit kills it. A minute
    /// after the run ended is the bound (a killed process is gone at its next turn on a CPU).
    @Test("A child left running by a test is killed when the test process exits")
    func exitKillsAChildLeftRunning() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment[Self.leaveChildVariable] = "1"
        let run = ChildProcess(
            CommandLine.arguments[0], ["--testing-library", "swift-testing", "--filter", "leaveAChildRunning"],
            environment: environment, output: .pipe, error: .output)
        try run.run()
        let reader = try #require(run.standardOutput)
        let (output, ended) = await offThePool { () -> (Data, Bool) in
            // Its output is a few lines: the pipe holds them while the run ends.
            run.waitUntilExit()
            return Self.drain(reader.fileDescriptor, untilEndWithin: 60)
        }
        let text = String(decoding: output, as: UTF8.self)
        #expect(run.terminationStatus == 0, "\(text)")
        let left = text.split(separator: "\n").first { $0.hasPrefix("left child ") }
        #expect(left != nil, "the helper test did not run: \(text)")
        #expect(ended, "the child the run left still holds its pipe a minute after the run ended")
        if !ended, let pid = left.flatMap({ Int32($0.dropFirst("left child ".count)) }) { kill(pid, SIGKILL) }
    }

    /// The helper of ``exitKillsAChildLeftRunning()``: leaves a child running, its standard
    /// output this process's own. Runs only in the run that test starts.
    @Test(
        "Helper: leaves a child running (only in the run the exit test starts; skipped otherwise)",
        .enabled(if: ProcessInfo.processInfo.environment[leaveChildVariable] != nil))
    func leaveAChildRunning() throws {
        let child = ChildProcess("/bin/sleep", ["600"], output: .inherited)
        try child.run()
        print("left child \(child.processIdentifier)")
        #expect(child.isKilledAtExit)
    }

    /// Reads `descriptor` until its end or until `seconds` have passed; whether it ended.
    static func drain(_ descriptor: Int32, untilEndWithin seconds: Int) -> (Data, Bool) {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return (data, false) }
            var watched = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watched, 1, Int32(left.components.seconds * 1000 + 1))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return (data, false) }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return (data, count == 0) }
            data.append(contentsOf: buffer[..<count])
        }
    }
}
