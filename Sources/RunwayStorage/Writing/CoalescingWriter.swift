import Foundation

/// Writes state that changes often at most once per interval, and on ``flush()`` and
/// ``close()``: Apple's "write only what changed, and not often".
///
/// Each ``update(_:)`` replaces the pending content; the first one after a write schedules the
/// next write an interval later, so a burst of changes costs one write of the latest state.
///
/// For example:
///
/// ```swift
/// let writer = CoalescingWriter(url: draftURL, interval: .seconds(2))
/// await writer.update(draft)     // many times, as the user types
/// try await writer.close()      // when the document closes
/// ```
public actor CoalescingWriter {
    private let url: URL
    private let interval: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private var pending: Data?
    private var scheduled: Task<Void, Never>?
    /// Identifies the scheduled write; a flush or close moves it on, so a sleeper that wakes
    /// anyway (cancelled, or a sleep that does not throw) never writes out of turn.
    private var schedule = 0
    private var closed = false
    /// How many times the file has been written.
    public private(set) var writeCount = 0
    /// The error of the last scheduled write that failed, if any (flush and close throw theirs).
    public private(set) var lastError: StorageError?

    /// Creates a writer for `url`.
    ///
    /// - parameters:
    ///   - url: The file the writer replaces atomically on each write.
    ///   - interval: The least time between two writes.
    ///   - sleep: Waits the interval; replace it to drive the writer from a test.
    public init(
        url: URL, interval: Duration,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.url = url
        self.interval = interval
        self.sleep = sleep
    }

    /// Replaces the content to write; schedules a write if none is scheduled.
    ///
    /// - returns: `false` when the writer is closed and the update was refused.
    @discardableResult
    public func update(_ data: Data) -> Bool {
        guard !closed else { return false }
        pending = data
        if scheduled == nil {
            let interval = self.interval
            let sleep = self.sleep
            schedule += 1
            let token = schedule
            scheduled = Task { [weak self] in
                do { try await sleep(interval) } catch { return }
                await self?.scheduledWrite(token)
            }
        }
        return true
    }

    /// Writes the pending content now, if any.
    ///
    /// - throws: The write's ``StorageError``; the content stays pending for the next try.
    public func flush() throws(StorageError) {
        scheduled?.cancel()
        scheduled = nil
        schedule += 1
        try writePending()
    }

    /// Flushes and refuses further updates.
    public func close() throws(StorageError) {
        closed = true
        try flush()
    }

    private func scheduledWrite(_ token: Int) {
        guard token == schedule else { return }
        scheduled = nil
        do { try writePending() } catch { lastError = error }
    }

    private func writePending() throws(StorageError) {
        guard let data = pending else { return }
        try AtomicFile.write(data, to: url)
        pending = nil
        writeCount += 1
    }
}
