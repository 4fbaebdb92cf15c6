import Foundation

/// The sender: the first item of each queue, when it is due, through the engine; and what each
/// answer means for the item.
extension Outbox {
    /// A try that ended, waiting for the sender to act on its answer.
    struct Completion: Sendable {
        var stored: OutboxStore.Stored
        var result: Result<RawResponse, RunwayError>
        var retryAfter: Duration?
    }

    /// Sends until the outbox closes: each round settles the answers that came in, then starts
    /// the due heads of the queues not already sending, up to ``Policy/maximumConcurrentSends``.
    func runSender() async {
        let backoff = Backoff(base: policy.baseBackoff, maximum: policy.maximumBackoff)
        var running: [String: Task<Void, Never>] = [:]
        while !Task.isCancelled {
            for completion in completions.withLock({ completions in
                defer { completions = [] }
                return completions
            }) {
                running[completion.stored.item.queue] = nil
                await settle(completion, backoff: backoff)
            }
            if let path = engine.network?.path, !path.isReachable {
                // Nothing to try until the path changes (the monitor rings).
                await bell.wait(timeout: nil)
                continue
            }
            let generation = signIn.withLock { $0 }
            let heads: OutboxStore.Heads
            do {
                heads = try await store.heads(signIn: generation, excluding: Set(running.keys))
            } catch {
                if Task.isCancelled { break }
                logger.error("outbox could not read its items", metadata: ["error": "\(error)"])
                await bell.wait(timeout: policy.baseBackoff)
                continue
            }
            if !heads.unreadable.isEmpty {
                // Its queue's next item is the head now: look again at once.
                await removeUnreadable(heads.unreadable)
                continue
            }
            let now = BootClock.nowMilliseconds()
            var wakeAt: Int64?
            for head in heads.ready where running.count < max(policy.maximumConcurrentSends, 1) {
                if let notBefore = head.notBefore, notBefore > now {
                    wakeAt = min(wakeAt ?? notBefore, notBefore)
                    continue
                }
                // Stored just now, its `.pending` may not be reported yet: it is, first.
                reportPending(head.item)
                emit(head.item, .sending)
                running[head.item.queue] = Task { [self] in
                    let (result, retryAfter) = await send(head)
                    completions.withLock { $0.append(Completion(stored: head, result: result, retryAfter: retryAfter)) }
                    bell.ring()
                }
            }
            await bell.wait(timeout: wakeAt.map { .milliseconds(max($0 - now, 1)) })
        }
        // Closing: tries in flight are cancelled; their items go again at the next launch.
        for task in running.values { task.cancel() }
        for task in running.values { await task.value }
    }

    /// Removes items whose rows cannot be read (a damaged or tampered file): such an item can
    /// never be sent, and left at the head of its queue it would hold every item behind it.
    /// Each is logged and fails with ``RunwayError/invalidRequest(reason:)``, as an item the
    /// server will never take does.
    func removeUnreadable(_ rows: [OutboxStore.Unreadable]) async {
        for row in rows {
            do {
                // A row that was not there to remove would come back as the same head: wait
                // instead of turning round at once.
                guard try await store.removeRow(row.seq) else { throw OutboxError.storage(reason: "row \(row.seq) not found") }
            } catch {
                logger.error("outbox could not update its items", metadata: ["error": "\(error)"])
                await bell.wait(timeout: policy.baseBackoff)
                return
            }
            logger.error(
                "outbox: an item's stored row could not be read; it is removed",
                metadata: ["seq": "\(row.seq)", "item": "\(row.item.id)", "reason": "\(row.reason)"])
            emit(row.item, .failed(.invalidRequest(reason: "its stored request could not be read (\(row.reason))")))
        }
    }

    /// One try of `stored`, for the sign-in it was made under.
    func send(_ stored: OutboxStore.Stored) async -> (Result<RawResponse, RunwayError>, Duration?) {
        var hooks = TransferHooks()
        if authentication != nil {
            hooks.signIn = SignInEpoch(resets: base.resets + Int(stored.signIn - base.generation))
        }
        let api = OutboxAPI(request: stored.request, key: stored.item.id, retryPolicy: policy.retryPolicy)
        let (result, retryAfter, _) = await engine.perform(
            api, params: stored.request.params, body: Self.body(of: stored.request), loadID: nil, ignoringCache: true,
            hooks: hooks)
        return (result, retryAfter)
    }

    /// Acts on one answer: the item leaves on success and on a final failure; otherwise it waits
    /// out its back-off, until it has failed ``Policy/maximumAttempts`` times.
    func settle(_ completion: Completion, backoff: Backoff) async {
        let item = completion.stored.item
        do {
            switch completion.result {
            case .success(let response):
                try await store.remove(item.id)
                emit(item, .done(response))
            case .failure(.cancelled) where Task.isCancelled || closed.withLock({ $0 }):
                // Closing: the item stays, with its key, for the next launch.
                break
            case .failure(.userChanged):
                // Its sign-in ended while it was on its way: the reset held or dropped it.
                break
            case .failure(let error) where Self.isFinal(error):
                logger.error(
                    "outbox: the server will never take an item; it is removed",
                    metadata: ["api": "\(item.apiName)", "item": "\(item.id)", "error": "\(error)"])
                try await store.remove(item.id)
                emit(item, .failed(error))
            case .failure(let error):
                var generator = SystemRandomNumberGenerator()
                let attempts = completion.stored.attempts + 1
                let delay = backoff.delay(afterFailures: attempts, retryAfter: completion.retryAfter, using: &generator)
                let counted = try await store.recordFailure(
                    item.id, notBefore: BootClock.nowMilliseconds() + Backoff.milliseconds(delay))
                if counted >= max(policy.maximumAttempts, 1) {
                    logger.error(
                        "outbox: an item failed too often; it is removed",
                        metadata: ["api": "\(item.apiName)", "item": "\(item.id)", "attempts": "\(counted)", "error": "\(error)"])
                    try await store.remove(item.id)
                    emit(item, .failed(error))
                } else {
                    logger.warning(
                        "outbox: a try failed; the item waits",
                        metadata: ["api": "\(item.apiName)", "item": "\(item.id)", "error": "\(error)", "retryIn": "\(delay)"])
                    emit(item, .pending)
                }
            }
        } catch {
            logger.error("outbox could not update its items", metadata: ["error": "\(error)"])
        }
    }

    /// Whether `error` says the item will never succeed, however often it is sent.
    static func isFinal(_ error: RunwayError) -> Bool {
        switch error {
        case .httpStatus(let code, _):
            // 408, 409 (the first try still runs), 425 and 429 pass; other 4xx do not — but 401:
            // the next try is signed and authenticated again. A credential that expired, or a
            // signature the server saw twice (Linux's URLSession sends a POST again by itself,
            // headers and all, when its reused connection died after the server read it), is
            // no reason to give up a change the user made.
            (400...499).contains(code) && ![401, 408, 409, 425, 429].contains(code)
        case .paramsInvalid, .paramsUnencodable, .invalidRequest, .vetoed, .business, .redirectRefused,
            .insecureConnection, .invalidResponse, .noContent, .service:
            true
        case .timeout, .noNetwork, .connectionLost, .cancelled, .pinningFailed, .unauthenticated, .userChanged,
            .tlsFailure, .transport:
            false
        }
    }
}
