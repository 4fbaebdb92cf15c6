import ArgumentParser
import Foundation
import RunwayExamples
import RunwayLinks

/// `runway links`: register the todolist example's scheme on a Linux desktop and open links.
struct LinksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "links",
        abstract: "The todolist URL scheme: register it with the desktop, and open links.",
        subcommands: [Install.self, Uninstall.self, Open.self]
    )

    struct Install: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a .desktop entry for the scheme under $XDG_DATA_HOME/applications and make it the default handler.")

        @Option(help: "The scheme to register.")
        var scheme = "todolist"

        func run() async throws {
            #if os(Linux)
            let executable = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
            let registration = DesktopRegistration(scheme: scheme, command: [executable, "links", "open"])
            let file = try registration.install()
            print("Registered \(scheme):// → \(file.path)")
            print(registration.xdgMime == nil ? "Default handler written to mimeapps.list (xdg-mime not installed)." : "Default handler set with xdg-mime.")
            #else
            throw ValidationError("registration is for Linux desktops; Apple platforms declare schemes in Info.plist")
            #endif
        }
    }

    struct Uninstall: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the .desktop entry and the default-handler association.")

        @Option(help: "The scheme to unregister.")
        var scheme = "todolist"

        func run() async throws {
            #if os(Linux)
            try DesktopRegistration(scheme: scheme, command: []).uninstall()
            print("Unregistered \(scheme)://")
            #else
            throw ValidationError("registration is for Linux desktops; Apple platforms declare schemes in Info.plist")
            #endif
        }
    }

    struct Open: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Route a todolist:// URL and print the to-do it adds.")

        @Argument(help: "The URL, for example 'todolist://www.acme.com?Quarterly%20Report#200806231300'.")
        var url: String

        @Option(help: "The time zone due dates are read in.")
        var timeZone = TimeZone.current.identifier

        func run() async throws {
            guard let zone = TimeZone(identifier: timeZone) else { throw ValidationError("unknown time zone \(timeZone)") }
            let list = TodoList()
            let outcome = TodoListLinks.router(list: list, timeZone: zone).route(url)
            switch outcome {
            case .handled, .handledByFallback:
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = zone
                formatter.dateFormat = "yyyy-MM-dd HH:mm zzz"
                for item in list.items {
                    print("Added to-do \"\(item.title)\" due \(formatter.string(from: item.due))")
                }
            case .notHandled:
                StandardStream.error.write("Not handled: the URL is valid, but no route accepts it.\n")
                throw ExitCode.failure
            case .rejected(let error):
                StandardStream.error.write("Refused: \(error.description).\n")
                throw ExitCode.failure
            }
        }
    }
}
