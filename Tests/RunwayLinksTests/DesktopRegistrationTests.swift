#if os(Linux)
import Foundation
import RunwayLinks
import RunwayTestSupport
import Testing

@Suite("Scheme registration on Linux (XDG)", .timeLimit(.minutes(10)))
struct DesktopRegistrationTests {
    final class Home {
        let url: URL
        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-xdg-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        var environment: [String: String] {
            ["XDG_DATA_HOME": url.appendingPathComponent("data").path, "XDG_CONFIG_HOME": url.appendingPathComponent("config").path,
             "HOME": url.path, "XDG_DATA_DIRS": url.appendingPathComponent("data").path]
        }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    @Test("install writes the desktop entry and the default association; uninstall removes both (no xdg-mime)")
    func withoutXDGMime() throws {
        let home = try Home()
        let registration = DesktopRegistration(
            scheme: "todolist", command: ["/opt/my app/runway", "links", "open"], environment: home.environment, xdgMime: nil)
        let file = try registration.install()
        #expect(file.path == home.url.appendingPathComponent("data/applications/runway-todolist.desktop").path)
        let entry = try String(contentsOf: file, encoding: .utf8)
        #expect(entry.contains("MimeType=x-scheme-handler/todolist;"))
        #expect(entry.contains("Exec=\"/opt/my app/runway\" links open %u"))
        let list = home.url.appendingPathComponent("config/mimeapps.list")
        #expect(try String(contentsOf: list, encoding: .utf8).contains("x-scheme-handler/todolist=runway-todolist.desktop"))
        try registration.uninstall()
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(!(try String(contentsOf: list, encoding: .utf8)).contains("x-scheme-handler/todolist"))
    }

    @Test("with xdg-utils installed, xdg-mime reports the handler and xdg-open runs it with the URL")
    func withXDGUtils() throws {
        guard let xdgMime = DesktopRegistration.findXDGMime(), FileManager.default.isExecutableFile(atPath: "/usr/bin/xdg-open") else {
            return  // xdg-utils is not installed: the test above covers the direct association
        }
        let home = try Home()
        // A stand-in for `runway links open`: records the arguments it was started with.
        let record = home.url.appendingPathComponent("opened.txt")
        let script = home.url.appendingPathComponent("fake-runway.sh")
        try "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"\(record.path)\"\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let registration = DesktopRegistration(
            scheme: "todolist", command: [script.path, "links", "open"], environment: home.environment, xdgMime: xdgMime)
        try registration.install()

        let query = try run(xdgMime, ["query", "default", "x-scheme-handler/todolist"], environment: home.environment)
        #expect(query.trimmingCharacters(in: .whitespacesAndNewlines) == "runway-todolist.desktop")
        // xdg-open hands URLs to scheme handlers only inside a graphical session, which it recognises
        // by $DISPLAY; the stand-in needs no display server.
        var session = home.environment
        session["DISPLAY"] = ":99"
        _ = try run("/usr/bin/xdg-open", ["todolist://www.acme.com?Quarterly%20Report#200806231300"], environment: session)
        let arguments = try String(contentsOf: record, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(arguments == ["links", "open", "todolist://www.acme.com?Quarterly%20Report#200806231300"])
        try registration.uninstall()
        let after = try run(xdgMime, ["query", "default", "x-scheme-handler/todolist"], environment: home.environment)
        #expect(after.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
    }

    func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> String {
        var merged = ProcessInfo.processInfo.environment
        merged.removeValue(forKey: "DISPLAY")
        merged.removeValue(forKey: "WAYLAND_DISPLAY")
        for (key, value) in environment { merged[key] = value }
        let process = ChildProcess(executable, arguments, environment: merged, output: .pipe)
        try process.run()
        defer { process.waitUntilExit() }
        let data = try process.standardOutput?.readToEnd() ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
#endif
