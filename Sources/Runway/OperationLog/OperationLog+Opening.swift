public import Logging
public import RunwayStorage

extension OperationLog {
    /// Opens the queue as ``init(engine:service:container:policy:logger:onUpload:)`` does, off the
    /// caller's actor: opening the queue's SQLite file and reading what an earlier run left is
    /// disk work, which a launch on the main actor must not wait for there. It runs on a dispatch
    /// queue of its own, never on a thread of Swift's cooperative pool.
    ///
    /// - throws: ``OperationLogError/storage(reason:)`` when the queue cannot be opened or made.
    @concurrent
    public static func open(
        engine: Engine, service: ServiceID, container: Container, policy: Policy = Policy(),
        logger: Logger = Logger(label: "runway.oplog"), onUpload: (@Sendable (UploadReport) -> Void)? = nil
    ) async throws(OperationLogError) -> OperationLog {
        try await BlockingWork.run { () throws(OperationLogError) in
            try OperationLog(
                engine: engine, service: service, container: container, policy: policy, logger: logger, onUpload: onUpload)
        }
    }
}
