extension Doorbell {
    /// Rings on every change of the engine's network path (back online, off cellular), which may
    /// make waiting work due; `nil` when the engine watches no path. Cancel the task to stop.
    func ringOnPathChanges(of engine: Engine) -> Task<Void, Never>? {
        guard let network = engine.network else { return nil }
        let changes = network.changes()
        return Task.detached { [self] in
            for await _ in changes { ring() }
        }
    }
}
