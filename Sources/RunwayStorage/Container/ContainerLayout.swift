import Foundation

/// How roles map to directories: the system's locations, or an explicit root.
///
/// On Apple platforms the system layout uses the app container's directories. On Linux it follows
/// the XDG Base Directory specification:
///
/// | role | Linux directory | when the variable is unset, empty or relative |
/// |---|---|---|
/// | documents | `$XDG_DATA_HOME/<app>/Documents` | `$HOME/.local/share/<app>/Documents` |
/// | applicationSupport | `$XDG_DATA_HOME/<app>` | `$HOME/.local/share/<app>` |
/// | caches | `$XDG_CACHE_HOME/<app>` | `$HOME/.cache/<app>` |
/// | temporary | `$XDG_RUNTIME_DIR/<app>`, else `$TMPDIR/<app>-<uid>` | `/tmp/<app>-<uid>` |
///
/// Without `$HOME` the user's home directory from the password database is used. An explicit root
/// (for tests and sandboxes) mirrors the iOS container: `Documents`, `Library/Application Support`,
/// `Library/Caches` and `tmp`.
public enum ContainerLayout: Sendable, Hashable {
    /// The system's directories for the app named `appName`, read from `environment`.
    case system(appName: String, environment: [String: String])
    /// Everything below `root`.
    case root(URL)

    /// The system layout for `appName`, reading the process environment.
    public static func system(appName: String) -> ContainerLayout {
        .system(appName: appName, environment: ProcessInfo.processInfo.environment)
    }

    /// The directory of `role`; nothing is created.
    public func directory(for role: ContainerRole) -> URL {
        switch self {
        case .root(let root):
            switch role {
            case .documents: return root.appendingPathComponent("Documents", isDirectory: true)
            case .applicationSupport:
                return root.appendingPathComponent("Library/Application Support", isDirectory: true)
            case .caches: return root.appendingPathComponent("Library/Caches", isDirectory: true)
            case .temporary: return root.appendingPathComponent("tmp", isDirectory: true)
            }
        case .system(let appName, let environment):
            return Self.systemDirectory(for: role, appName: appName, environment: environment)
        }
    }

    #if canImport(Darwin)
    private static func systemDirectory(for role: ContainerRole, appName: String, environment: [String: String]) -> URL {
        let manager = FileManager.default
        func first(_ directory: FileManager.SearchPathDirectory) -> URL {
            manager.urls(for: directory, in: .userDomainMask).first ?? manager.temporaryDirectory
        }
        switch role {
        case .documents: return first(.documentDirectory)
        #if os(macOS)
        case .applicationSupport: return first(.applicationSupportDirectory).appendingPathComponent(appName, isDirectory: true)
        case .caches: return first(.cachesDirectory).appendingPathComponent(appName, isDirectory: true)
        #else
        case .applicationSupport: return first(.applicationSupportDirectory)
        case .caches: return first(.cachesDirectory)
        #endif
        case .temporary: return manager.temporaryDirectory
        }
    }
    #else
    private static func systemDirectory(for role: ContainerRole, appName: String, environment: [String: String]) -> URL {
        switch role {
        case .documents:
            return xdg("XDG_DATA_HOME", fallback: ".local/share", environment)
                .appendingPathComponent(appName, isDirectory: true).appendingPathComponent("Documents", isDirectory: true)
        case .applicationSupport:
            return xdg("XDG_DATA_HOME", fallback: ".local/share", environment).appendingPathComponent(appName, isDirectory: true)
        case .caches:
            return xdg("XDG_CACHE_HOME", fallback: ".cache", environment).appendingPathComponent(appName, isDirectory: true)
        case .temporary:
            // The runtime directory is the user's own (0700, per the XDG specification); /tmp is
            // everyone's, so Container checks the folder found there before using it.
            if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
                return URL(fileURLWithPath: runtime, isDirectory: true).appendingPathComponent(appName, isDirectory: true)
            }
            let base = environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
            return URL(fileURLWithPath: base, isDirectory: true)
                .appendingPathComponent("\(appName)-\(getuid())", isDirectory: true)
        }
    }

    /// An XDG variable when it holds an absolute path (the specification says to ignore others),
    /// else `$HOME/<fallback>`.
    static func xdg(_ variable: String, fallback: String, _ environment: [String: String]) -> URL {
        if let value = environment[variable], value.hasPrefix("/") {
            return URL(fileURLWithPath: value, isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(fallback, isDirectory: true)
    }
    #endif
}
