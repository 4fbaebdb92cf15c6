import Foundation
import Testing
@testable import RunwayStorage

@Suite("Container roles and the Linux mapping")
struct ContainerTests {
    @Test("an explicit root mirrors the iOS container, created on demand with private roles 0700")
    func explicitRoot() throws {
        let root = try TemporaryRoot()
        let container = root.container
        #expect(!FileManager.default.fileExists(atPath: root.url.appendingPathComponent("Library").path))
        let support = try container.directory(for: .applicationSupport)
        #expect(support.path == root.url.appendingPathComponent("Library/Application Support").path)
        #expect(FileSystem.permissions(of: support) == 0o700)
        #expect(FileSystem.permissions(of: try container.directory(for: .caches)) == 0o700)
        #expect(FileSystem.permissions(of: try container.directory(for: .temporary)) == 0o700)
        #expect(FileSystem.permissions(of: try container.directory(for: .documents)) == 0o755)
        let file = try container.url(for: "db/index.sqlite", in: .caches)
        #expect(file.path == root.url.appendingPathComponent("Library/Caches/db/index.sqlite").path)
        #expect(FileSystem.isDirectory(file.deletingLastPathComponent()))
    }

    @Test("paths that climb out or are absolute are refused", arguments: ["../escape", "/etc/passwd", "", "a/../../b", "./x"])
    func badPaths(_ path: String) throws {
        let root = try TemporaryRoot()
        #expect(throws: StorageError.invalidPath(path)) { try root.container.url(for: path, in: .documents) }
    }

    #if os(Linux)
    @Test("the system layout follows XDG, with the documented fallbacks")
    func xdgMapping() {
        let set = ContainerLayout.system(
            appName: "todo", environment: ["XDG_DATA_HOME": "/data", "XDG_CACHE_HOME": "/cache", "HOME": "/home/u", "TMPDIR": "/scratch"])
        #expect(set.directory(for: .documents).path == "/data/todo/Documents")
        #expect(set.directory(for: .applicationSupport).path == "/data/todo")
        #expect(set.directory(for: .caches).path == "/cache/todo")
        #expect(set.directory(for: .temporary).path == "/scratch/todo-\(getuid())")

        let unset = ContainerLayout.system(appName: "todo", environment: ["HOME": "/home/u", "XDG_DATA_HOME": "relative/ignored"])
        #expect(unset.directory(for: .documents).path == "/home/u/.local/share/todo/Documents")
        #expect(unset.directory(for: .applicationSupport).path == "/home/u/.local/share/todo")
        #expect(unset.directory(for: .caches).path == "/home/u/.cache/todo")
        #expect(unset.directory(for: .temporary).path == "/tmp/todo-\(getuid())")
    }
    #endif

    @Test("the role of a URL is found even where documents nest inside support")
    func roleContaining() throws {
        let layout = ContainerLayout.system(appName: "todo", environment: ["XDG_DATA_HOME": "/data", "XDG_CACHE_HOME": "/cache"])
        let container = Container(layout)
        #if os(Linux)
        #expect(container.role(containing: URL(fileURLWithPath: "/data/todo/Documents/a.txt")) == .documents)
        #expect(container.role(containing: URL(fileURLWithPath: "/data/todo/settings.json")) == .applicationSupport)
        #expect(container.role(containing: URL(fileURLWithPath: "/cache/todo/x")) == .caches)
        #endif
        #expect(container.role(containing: URL(fileURLWithPath: "/elsewhere")) == nil)
    }
}
