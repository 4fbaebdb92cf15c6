public import Logging
public import RunwayStorage

extension OperationLog {
    /// The former name of ``Policy``.
    @available(*, deprecated, renamed: "Policy")
    public typealias Configuration = Policy

    /// The former name of ``policy``.
    @available(*, deprecated, renamed: "policy")
    public var configuration: Policy { policy }

    /// Opens the log.
    @available(*, deprecated, renamed: "init(engine:service:container:policy:logger:onUpload:)")
    public convenience init(
        engine: Engine, service: ServiceID, container: Container, configuration: Policy,
        logger: Logger = Logger(label: "runway.oplog"), onUpload: (@Sendable (UploadReport) -> Void)? = nil
    ) throws(OperationLogError) {
        try self.init(engine: engine, service: service, container: container, policy: configuration, logger: logger, onUpload: onUpload)
    }
}
