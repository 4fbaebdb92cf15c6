import Foundation

/// A cgroup v1 CPU quota: the processes added may use at most `cores` of CPU time together.
struct CPUQuota {
    let folder: URL

    /// Makes the group, or `nil` where cgroup v1's cpu controller is not writable here.
    init?(cores: Double, name: String) {
        let folder = URL(fileURLWithPath: "/sys/fs/cgroup/cpu/\(name)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        let period = 100_000
        do {
            try Data("\(period)".utf8).write(to: folder.appendingPathComponent("cpu.cfs_period_us"))
            try Data("\(Int(Double(period) * cores))".utf8).write(to: folder.appendingPathComponent("cpu.cfs_quota_us"))
        } catch {
            _ = rmdir(folder.path)  // a cgroup is removed with rmdir, its control files with it
            return nil
        }
        self.folder = folder
    }

    /// Whether quotas can be made here: a group made and removed at once.
    static var isAvailable: Bool {
        guard let probe = CPUQuota(cores: 1, name: "runway-probe-\(getpid())") else { return false }
        probe.remove()
        return true
    }

    /// Moves the process, every thread of it, into the group.
    func add(_ pid: Int32) {
        try? Data("\(pid)".utf8).write(to: folder.appendingPathComponent("cgroup.procs"))
    }

    /// Removes the group (once its processes have exited).
    func remove() {
        _ = rmdir(folder.path)
    }
}
