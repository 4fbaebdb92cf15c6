#if os(Linux)
import Foundation

/// Registers a scheme handler on a Linux desktop (Linux only: Apple platforms declare schemes in
/// the app's `Info.plist`): a `.desktop` entry with
/// `MimeType=x-scheme-handler/<scheme>` under `$XDG_DATA_HOME/applications`, made the default
/// handler through `xdg-mime` when it is installed (otherwise by writing the association into
/// `$XDG_CONFIG_HOME/mimeapps.list` directly). Then `xdg-open <scheme>://…` runs the command.
public struct DesktopRegistration: Sendable {
    public let scheme: String
    /// The program and leading arguments run with the URL appended (`runway links open`).
    public let command: [String]
    /// The environment giving `XDG_DATA_HOME`, `XDG_CONFIG_HOME` and `HOME`.
    public let environment: [String: String]
    /// Where `xdg-mime` is, or `nil` to write `mimeapps.list` directly.
    public let xdgMime: String?

    public init(
        scheme: String, command: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        xdgMime: String? = DesktopRegistration.findXDGMime()
    ) {
        self.scheme = scheme.lowercased()
        self.command = command
        self.environment = environment
        self.xdgMime = xdgMime
    }

    /// `runway-<scheme>.desktop`.
    public var desktopFileName: String { "runway-\(scheme).desktop" }
    public var mimeType: String { "x-scheme-handler/\(scheme)" }

    var dataHome: URL { Self.directory(environment["XDG_DATA_HOME"], fallback: ".local/share", environment) }
    var configHome: URL { Self.directory(environment["XDG_CONFIG_HOME"], fallback: ".config", environment) }

    /// The desktop entry's path.
    public var desktopFile: URL { dataHome.appendingPathComponent("applications/\(desktopFileName)") }

    /// Writes the desktop entry and makes it the default handler of the scheme.
    ///
    /// - returns: The desktop entry's path.
    @discardableResult
    public func install() throws -> URL {
        try FileManager.default.createDirectory(at: desktopFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        let exec = command.map(Self.quote).joined(separator: " ") + " %u"
        let entry = """
            [Desktop Entry]
            Type=Application
            Name=Runway \(scheme) links
            Comment=Opens \(scheme):// links
            Exec=\(exec)
            Terminal=false
            NoDisplay=true
            MimeType=\(mimeType);

            """
        try Data(entry.utf8).write(to: desktopFile, options: .atomic)
        if let xdgMime {
            try run(xdgMime, ["default", desktopFileName, mimeType])
        } else {
            try setDefault(desktopFileName)
        }
        return desktopFile
    }

    /// Removes the desktop entry and the default-handler association.
    public func uninstall() throws {
        try? FileManager.default.removeItem(at: desktopFile)
        try setDefault(nil)
    }

    /// Adds (or with `nil` removes) our line under `[Default Applications]` in `mimeapps.list`.
    func setDefault(_ desktopFile: String?) throws {
        let list = configHome.appendingPathComponent("mimeapps.list")
        var lines = ((try? String(contentsOf: list, encoding: .utf8)) ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeAll { $0.hasPrefix("\(mimeType)=") }
        if let desktopFile {
            if let header = lines.firstIndex(of: "[Default Applications]") {
                lines.insert("\(mimeType)=\(desktopFile)", at: header + 1)
            } else {
                lines = ["[Default Applications]", "\(mimeType)=\(desktopFile)", ""] + lines
            }
        }
        try FileManager.default.createDirectory(at: configHome, withIntermediateDirectories: true)
        try Data(lines.joined(separator: "\n").utf8).write(to: list, options: .atomic)
    }

    func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in self.environment { environment[key] = value }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(executable) exited \(process.terminationStatus)"])
        }
    }

    /// Quotes an `Exec` argument as the Desktop Entry specification asks.
    static func quote(_ argument: String) -> String {
        let reserved = CharacterSet(charactersIn: " \t\n\"'\\><~|&;$*?#()`=")
        guard argument.unicodeScalars.contains(where: reserved.contains) else { return argument }
        var escaped = ""
        for character in argument {
            if "\"`$\\".contains(character) { escaped += "\\" }
            escaped.append(character)
        }
        return "\"\(escaped)\""
    }

    static func directory(_ value: String?, fallback: String, _ environment: [String: String]) -> URL {
        if let value, value.hasPrefix("/") { return URL(fileURLWithPath: value, isDirectory: true) }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(fallback, isDirectory: true)
    }

    /// `xdg-mime` on the `PATH`, if installed.
    public static func findXDGMime() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/xdg-mime"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
#endif
