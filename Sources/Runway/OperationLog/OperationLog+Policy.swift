import Foundation

extension OperationLog {
    /// What the log keeps and how it uploads: batch sizes and ages, back-off, capacity and the
    /// queue's file.
    public struct Policy: Sendable {
        /// The path of the collector's batch route on the service. Default `/oplog/batches`.
        public var path: String = "/oplog/batches"
        /// The most events one upload carries. Default 30.
        public var batchSize: Int = 30
        /// How long an event may wait for its batch to fill before it is sent anyway. Default 60 s.
        public var maximumAge: Duration = .seconds(60)
        /// The largest event accepted, encoded, in bytes. Default 32 KB.
        public var maximumEventSize: Int = 32 * 1024
        /// The most events kept; beyond it the oldest unsent ones are dropped and counted.
        /// Default 10,000.
        public var capacity: Int = 10_000
        /// The wait after the first failed upload; doubled after each further failure.
        /// Default 1 s.
        public var baseBackoff: Duration = .seconds(1)
        /// The longest wait between failed uploads, unless `Retry-After` asks for longer.
        /// Default 5 minutes.
        public var maximumBackoff: Duration = .seconds(300)
        /// The engine's retries within one upload. Default: one retry of a transient failure.
        public var retryPolicy = RetryPolicy(maximumRetries: 1, retriesNonIdempotentMethods: true)
        /// The deadline of one upload attempt. Default 30 s.
        public var timeout: Duration = .seconds(30)
        /// How long uploads may wait for a path that is not expensive (Wi-Fi rather than
        /// cellular) before they go anyway; `nil` (the default) sends on any path. ``OperationLog/flush(within:)``
        /// sends at once.
        public var deferOnExpensivePath: Duration?
        /// The most events one upload carries while a backlog waits (more than two batches of
        /// ``batchSize``): a backlog drains in fewer, larger uploads. Default 500 (the
        /// collector's default limit is 1,000).
        public var backlogBatchSize: Int = 500
        /// How many uploads may be in flight at once while a backlog waits; otherwise one.
        /// Default 2: the device's work on one batch overlaps the collector's on another.
        public var maximumConcurrentUploads: Int = 2
        /// The most bytes of event names and payloads in one upload (the first event goes
        /// regardless). Default 512 KB, well inside the collector's default limits of 1 MB
        /// compressed and 8 MB inflated.
        public var maximumBatchBytes: Int = 512 * 1024
        /// How many failed uploads a batch is given before it is dropped (and counted in
        /// ``Status/abandoned``); with the default back-off that is about 8 hours online.
        /// Default 100.
        public var maximumAttempts: Int = 100
        /// The queue's file name inside its folder of application support.
        public var databaseName: String = "queue.sqlite"

        /// The defaults.
        public init() {}
    }

    /// What one upload did, for an app's own bookkeeping or a test.
    public struct UploadReport: Sendable {
        /// The batch's idempotency key.
        public var batchKey: String
        /// How many events it carried.
        public var eventCount: Int
        /// The compressed bytes sent.
        public var bodyBytes: Int
        /// The JSON bytes before compression.
        public var uncompressedBytes: Int
        /// `nil` when the collector acknowledged the batch; otherwise why it did not.
        public var failure: RunwayError?
        /// After a failure, how long the log waits before the next upload.
        public var backoff: Duration?
    }

    /// What the queue holds and has done.
    public struct Status: Sendable, Hashable {
        /// Events waiting for a batch.
        public var pending: Int
        /// Events in the batch being uploaded (or to be sent again).
        public var inFlight: Int
        /// Events acknowledged by the collector, ever, on this container.
        public var uploaded: Int
        /// Events dropped because the queue was full, ever, on this container.
        public var dropped: Int
        /// Events the collector refused for good (an event it cannot store, a batch it calls
        /// malformed), ever, on this container.
        public var refused: Int
        /// Events dropped after their batch failed ``Policy/maximumAttempts`` times,
        /// ever, on this container.
        public var abandoned: Int
        /// Events removed because their row in the queue's file could not be read (a damaged or
        /// tampered file), ever, on this container; each is logged as an error. Without this a
        /// damaged row would stop every upload queued after it.
        public var unreadable: Int
    }
}
