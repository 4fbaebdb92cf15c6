import Foundation

/// The Python that runs the tests' tools from PyPI — httpbin under gunicorn, haralyzer,
/// prometheus_client, botocore, hishel — pinned in `Tests/python-tools.txt`.
///
/// `Scripts/test` installs them into a virtual environment under `.build/test-tools` and names its
/// interpreter in `RUNWAY_TEST_PYTHON`; a plain `swift test` after one `Scripts/test` finds the
/// same environment by its path. A machine without either runs `python3` from `PATH`, and a test
/// whose tool is missing there fails with a message that says to run `Scripts/test`.
public enum PythonTools {
    /// What a test says when a tool is missing.
    public static let installHint = "run Scripts/test, which installs the tests' Python tools (Tests/python-tools.txt)"

    /// The executable and the arguments before a script's own: the interpreter named by
    /// `RUNWAY_TEST_PYTHON`, else the one `Scripts/test` made, else `python3` through `env`.
    public static let interpreter: (executable: String, leading: [String]) = {
        if let named = ProcessInfo.processInfo.environment["RUNWAY_TEST_PYTHON"], !named.isEmpty {
            return (named, [])
        }
        // This file is Tests/RunwayTestSupport/PythonTools.swift: the package is two folders up.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let made = package.appendingPathComponent(".build/test-tools/bin/python3").path
        if FileManager.default.isExecutableFile(atPath: made) { return (made, []) }
        return ("/usr/bin/env", ["python3"])
    }()

    /// A child running the interpreter with `arguments`.
    public static func process(
        _ arguments: [String], input: ChildProcess.Stream = .null, output: ChildProcess.Stream = .null,
        error: ChildProcess.Stream = .null
    ) -> ChildProcess {
        ChildProcess(interpreter.executable, interpreter.leading + arguments, input: input, output: output, error: error)
    }

    /// Why a Python run failed.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs the interpreter with `arguments`, writing `input` to its standard input, and returns
    /// its standard output; a non-zero exit is a ``Failure``.
    public static func run(_ arguments: [String], input: Data = Data()) throws -> Data {
        let process = process(arguments, input: .pipe, output: .pipe)
        try process.run()
        let data: Data
        do {
            defer { process.waitUntilExit() }
            // A child that ends without reading its input is an error here, not a trap.
            try process.standardInput?.write(contentsOf: input)
            try process.standardInput?.close()
            data = try process.standardOutput?.readToEnd() ?? Data()
        }
        guard process.terminationStatus == 0 else {
            throw Failure(description: "python exited \(process.terminationStatus) (\(arguments.prefix(2).joined(separator: " "))); \(installHint)")
        }
        return data
    }

    /// Whether the interpreter imports `module`.
    public static func has(_ module: String) -> Bool {
        (try? run(["-c", "import \(module)"])) != nil
    }
}
