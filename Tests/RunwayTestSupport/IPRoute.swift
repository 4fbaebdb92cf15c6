import Foundation

/// iproute2 for the tests that build networks of their own (namespaces and veth links; root only).
public enum IPRoute {
    /// Whether this process may build them: root, with `/usr/sbin/ip`.
    public static var isAvailable: Bool {
        geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `ip` with `arguments` and waits for it.
    public static func run(_ arguments: [String]) async throws {
        let process = ChildProcess("/usr/sbin/ip", arguments)
        try process.run()
        await offThePool { process.waitUntilExit() }
        guard process.terminationStatus == 0 else {
            throw Failure(description: "ip \(arguments.joined(separator: " ")) failed")
        }
    }

    /// What `executable` with `arguments` writes to its standard output, once it has exited.
    public static func output(of executable: String, _ arguments: [String]) async throws -> String {
        let process = ChildProcess(executable, arguments, output: .pipe)
        try process.run()
        let reader = process.standardOutput
        return try await offThePool { () throws -> String in
            defer { process.waitUntilExit() }
            return String(decoding: try reader?.readToEnd() ?? Data(), as: UTF8.self)
        }
    }

    /// A `10.213.x` prefix no interface here holds: a run that was killed before its clean-up
    /// leaves its veth behind, and a second link on the same subnet would take this one's
    /// packets.
    public static func freeSubnet() async throws -> String {
        let listing = try await output(of: "/usr/sbin/ip", ["-4", "-o", "addr", "show"])
        let free = (0...255).filter { !listing.contains("10.213.\($0).") }
        guard let third = free.randomElement() else {
            throw Failure(description: "every 10.213.x subnet is taken on this host")
        }
        return "10.213.\(third)"
    }
}
