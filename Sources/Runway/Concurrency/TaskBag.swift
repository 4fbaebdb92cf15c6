/// What cancels one of a manager's in-flight loads: its task, or the handle of a load that runs
/// in its caller's task.
protocol LoadHandle: Sendable {
    func cancel()
}

extension Task: LoadHandle where Failure == Never {}
extension LoadCancellation: LoadHandle {}

/// The tasks of a manager's in-flight loads, held where the manager's `deinit` can reach them.
///
/// `deinit` of a main-actor class is not isolated, so the tasks live in this `Sendable` box
/// rather than in main-actor state: releasing the manager cancels every one of them.
final class TaskBag: Sendable {
    private let tasks = Locked<[LoadID: any LoadHandle]>([:])

    func insert(_ task: some LoadHandle, for id: LoadID) {
        tasks.withLock { $0[id] = task }
    }

    func remove(_ id: LoadID) {
        _ = tasks.withLock { $0.removeValue(forKey: id) }
    }

    func cancel(_ id: LoadID) {
        tasks.withLock { $0.removeValue(forKey: id) }?.cancel()
    }

    func cancelAll() {
        let all = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return Array(tasks.values)
        }
        for task in all { task.cancel() }
    }

    var count: Int { tasks.withLock { $0.count } }
}
