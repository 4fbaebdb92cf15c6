import Foundation

/// The writer: events checked as the collector would check them, then committed in one
/// transaction per arrival burst.
extension OperationLog {
    /// The event, once everything a collector would refuse it for is ruled out here: an event
    /// the collector refuses would hold back every event queued behind it.
    func makeEvent(_ name: String, payload: JSON, time: Date) throws(OperationLogError) -> OperationEvent {
        guard !name.isEmpty, name.utf8.count <= OperationEvent.maximumNameLength, !name.utf8.contains(0) else {
            throw .invalidName(name)
        }
        let milliseconds = (time.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds >= 0, milliseconds < 0x1p62 else { throw .invalidTime(time) }
        if payload.holdsNULCharacter {
            throw .unencodablePayload(reason: "a string holds a NUL character, which the collector cannot store")
        }
        let encoded: Data
        do {
            encoded = try payload.encoded()
        } catch {
            throw .unencodablePayload(reason: error.reason)
        }
        let size = encoded.count + name.utf8.count
        guard size <= policy.maximumEventSize else {
            throw .eventTooLarge(size: size, limit: policy.maximumEventSize)
        }
        return OperationEvent(
            id: UUID().uuidString.lowercased(), name: name,
            timeMilliseconds: Int64(milliseconds), payload: encoded)
    }

    func enqueue(_ item: Item) throws(OperationLogError) {
        let wasEmpty = state.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            state.inbox.append(item)
            return state.inbox.count == 1
        }
        guard let wasEmpty else { throw .closed }
        if wasEmpty { writerBell.ring() }
    }

    /// Returns once everything recorded before the call is committed (or failed).
    func committedSoFar() async {
        await withCheckedContinuation { continuation in
            do {
                try enqueue(.barrier(continuation))
            } catch {
                continuation.resume()
            }
        }
    }

    func runWriter() async {
        var retryDelay: Duration?
        while true {
            let items = state.withLock { state -> [Item] in
                defer { state.inbox = [] }
                return state.inbox
            }
            if items.isEmpty {
                if Task.isCancelled, state.withLock({ $0.closed }) { return }
                await writerBell.wait(timeout: retryDelay)
                continue
            }
            var events: [OperationEvent] = []
            for case .event(let event, _) in items { events.append(event) }
            do {
                if !events.isEmpty {
                    let dropped = try await queue.insert(events)
                    if dropped > 0 {
                        logger.warning(
                            "operation log full: dropped the oldest unsent events",
                            metadata: ["dropped": "\(dropped)", "capacity": "\(policy.capacity)"])
                    }
                }
                retryDelay = nil
                for item in items {
                    switch item {
                    case .event(_, let waiter): waiter?.resume()
                    case .barrier(let waiter): waiter.resume()
                    }
                }
                uploaderBell.ring()
            } catch {
                // Callers who wait learn of it; events recorded without waiting are kept in memory
                // and committed on the next try.
                logger.error(
                    "operation log could not commit events; keeping them for the next try",
                    metadata: ["events": "\(events.count)", "error": "\(error)"])
                var kept: [Item] = []
                for item in items {
                    switch item {
                    case .event(_, let waiter?): waiter.resume(throwing: OperationLogError.storage(reason: "\(error)"))
                    case .event(let event, nil): kept.append(.event(event, nil))
                    case .barrier(let waiter): waiter.resume()
                    }
                }
                state.withLock { $0.inbox.insert(contentsOf: kept, at: 0) }
                retryDelay = .seconds(1)
                if Task.isCancelled { return }
                await writerBell.wait(timeout: retryDelay)
            }
        }
    }
}
