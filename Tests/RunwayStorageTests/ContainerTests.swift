import Foundation
import Testing
@testable import RunwayStorage

#if canImport(Glibc)
import Glibc
#endif

@Suite("Container roles and the Linux mapping", .timeLimit(.minutes(10)))
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

        let runtime = ContainerLayout.system(appName: "todo", environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "TMPDIR": "/scratch"])
        #expect(runtime.directory(for: .temporary).path == "/run/user/1000/todo")
    }

    /// A shared folder like /tmp, with a temporary directory someone else may have planted.
    func sharedTemporary(_ plant: (URL) throws -> Void) throws -> (Container, URL, TemporaryRoot) {
        let shared = try TemporaryRoot()
        let app = "runway-test-\(UUID().uuidString.prefix(8))"
        let planted = shared.url.appendingPathComponent("\(app)-\(getuid())")
        try plant(planted)
        let container = Container(.system(appName: app, environment: ["TMPDIR": shared.url.path, "HOME": shared.url.path]))
        return (container, planted, shared)
    }

    @Test("a temporary directory planted as a symbolic link is refused, and nothing is written through it")
    func plantedSymlink() throws {
        let elsewhere = try TemporaryRoot()
        let (container, planted, shared) = try sharedTemporary { url in
            try FileManager.default.createSymbolicLink(at: url, withDestinationURL: elsewhere.url)
        }
        _ = shared
        #expect(throws: StorageError.self) { try container.url(for: "upload.part", in: .temporary) }
        do {
            _ = try container.directory(for: .temporary)
        } catch {
            guard case .untrustedDirectory(let path, _) = error else { throw error }
            #expect(path == planted.path)
        }
        #expect(try entries(elsewhere.url).isEmpty)
    }

    @Test("a temporary directory open to others, or another user's, is refused")
    func openPermissions() throws {
        let (open, _, keepOpen) = try sharedTemporary { url in
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            chmod(url.path, 0o777)
        }
        _ = keepOpen
        #expect {
            try open.directory(for: .temporary)
        } throws: { error in
            guard case .untrustedDirectory(_, let reason) = error as? StorageError else { return false }
            return reason.contains("777")
        }
        if getuid() == 0 {
            let (foreign, _, keepForeign) = try sharedTemporary { url in
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
                chmod(url.path, 0o700)
                chown(url.path, 65534, 65534)
            }
            _ = keepForeign
            #expect {
                try foreign.directory(for: .temporary)
            } throws: { error in
                guard case .untrustedDirectory(_, let reason) = error as? StorageError else { return false }
                return reason.contains("another user")
            }
        }
    }

    @Test("a temporary directory this user made, 0700, is used")
    func ownPrivateDirectory() throws {
        let (container, planted, shared) = try sharedTemporary { _ in }
        _ = shared
        let url = try container.directory(for: .temporary)
        #expect(url.path == planted.path)
        #expect(FileSystem.permissions(of: url) == 0o700)
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
