public import HTTPTypes

/// The credential of one service, shared by all its loads: applied to every request, refreshed
/// once when it expires, whoever meets the expiry first.
///
/// Give it to the ``Service``; the engine does the rest. Thirty loads that all come back with 401
/// cause one ``Authenticator/refresh(_:)``, after which all thirty are sent again with the new
/// credential; a load that meets the expiry after another load already refreshed is simply sent
/// again. A refresh that fails, or a refreshed credential the server refuses too, fails the load
/// with ``RunwayError/unauthenticated(reason:)``.
///
/// For example:
///
/// ```swift
/// let authentication = Authentication(TokenAuthenticator(keychain: keychain, engine: engine))
/// try engine.register(Service(id: .account, baseURLs: [.release: "https://api.example.com"],
///                         authentication: authentication))
/// // after login or logout, once the keychain holds the new state:
/// authentication.reset()
/// ```
public final class Authentication: Sendable {
    private let box: any AuthenticationBox
    /// The cookie jars of the services this authentication signs in to, emptied by ``reset()``.
    private let jars = Locked<[ObjectIdentifier: CookieJar]>([:])
    private let resetObservers = Locked<[@Sendable (SignInEpoch) -> Void]>([])

    /// Creates the shared credential state of `authenticator`.
    public init<A: Authenticator>(_ authenticator: A) {
        box = CredentialBox(authenticator)
        credentialFields = authenticator.credentialFields
    }

    /// The header fields the authenticator's credential is written to
    /// (``Authenticator/credentialFields``).
    public let credentialFields: Set<HTTPField.Name>

    /// Forgets the credential held in memory, and the cookies of every service registered with
    /// this authentication: the next load asks ``Authenticator/credential()`` again. Call it
    /// after a login or logout.
    ///
    /// A refresh already running belongs to the sign-in before: what it returns is never stored
    /// or handed out. Loads that were waiting for it fail with
    /// ``RunwayError/unauthenticated(reason:)`` (they were the previous user's); loads that
    /// joined it after the reset read ``Authenticator/credential()`` instead.
    ///
    /// An ``Outbox`` of this sign-in holds or drops its pending items before `reset()` returns
    /// (one small write to its database), so that a relaunch right after never sends them as
    /// the next user.
    public func reset() {
        box.reset()
        for jar in jars.withLock({ Array($0.values) }) { jar.removeAll() }
        for observer in resetObservers.withLock({ $0 }) { observer(box.epoch) }
    }

    /// Called by every ``reset()`` with the new epoch, before it returns (an outbox links itself).
    func onReset(_ observer: @escaping @Sendable (SignInEpoch) -> Void) {
        resetObservers.withLock { $0.append(observer) }
    }

    /// Empties `jar` on every ``reset()`` (the engine links a service's jar when it registers it).
    func clearsOnReset(_ jar: CookieJar) {
        jars.withLock { $0[ObjectIdentifier(jar)] = jar }
    }

    /// The sign-in now: it changes with every ``reset()``.
    public var epoch: SignInEpoch { box.epoch }

    /// The credential to send now, loading or refreshing it first if need be.
    func lease() async throws(RunwayError) -> CredentialLease { try await box.lease() }

    /// A credential newer than the one of `generation`: the one another load already refreshed
    /// to, or a new one from a refresh that this call starts (or joins).
    func renew(after generation: Int) async throws(RunwayError) -> CredentialLease {
        try await box.renew(after: generation)
    }

    /// Whether `response` says its credential was refused.
    func isAuthenticationFailure(_ response: HTTPResponse) -> Bool { box.isAuthenticationFailure(response) }
}

/// One credential, ready to apply, and the generation it belongs to.
struct CredentialLease: Sendable {
    /// Increases each time the credential changes, so a load can tell whether the credential its
    /// request was refused with is still the current one.
    let generation: Int
    /// The sign-in the credential belongs to.
    let epoch: SignInEpoch
    let apply: @Sendable (inout HTTPRequest) -> Void
}

private protocol AuthenticationBox: Sendable {
    func reset()
    var epoch: SignInEpoch { get }
    func lease() async throws(RunwayError) -> CredentialLease
    func renew(after generation: Int) async throws(RunwayError) -> CredentialLease
    func isAuthenticationFailure(_ response: HTTPResponse) -> Bool
}

private final class CredentialBox<A: Authenticator>: AuthenticationBox {
    typealias Waiter = OneShot<Result<CredentialLease, RunwayError>>

    /// A load waiting for a load or refresh, and the sign-in (``State/epoch``) it waits in.
    struct Waiting {
        let waiter: Waiter
        let epoch: Int
    }

    private struct State {
        /// Whether ``credential`` holds what the authenticator gave (it may still be `nil`
        /// before the first load).
        var isLoaded = false
        var credential: A.Credential?
        var generation = 0
        /// Counts ``reset()`` calls: a load or refresh started in an earlier epoch belongs to a
        /// sign-in that is over.
        var epoch = 0
        /// The loads waiting while a load or refresh of the credential runs; `nil` when none runs.
        var waiting: [Waiting]?
        /// Why the refresh that ended ``generation`` failed, for loads that met the expiry
        /// before it ended: they share its outcome instead of starting another refresh.
        var failure: RunwayError?
    }

    private enum Work {
        /// Read the stored credential; refresh it if there is none or it has expired.
        case load
        /// Replace the current credential.
        case refresh(A.Credential?)
    }

    private let authenticator: A
    private let state = Locked(State())

    init(_ authenticator: A) {
        self.authenticator = authenticator
    }

    func reset() {
        state.withLock { state in
            state.isLoaded = false
            state.credential = nil
            state.failure = nil
            state.generation += 1
            state.epoch += 1
        }
    }

    func isAuthenticationFailure(_ response: HTTPResponse) -> Bool {
        authenticator.isAuthenticationFailure(response)
    }

    var epoch: SignInEpoch { SignInEpoch(resets: state.withLock { $0.epoch }) }

    func lease() async throws(RunwayError) -> CredentialLease {
        try await acquire { state in
            if state.isLoaded, let credential = state.credential, !authenticator.requiresRefresh(credential) {
                return .ready(.success(lease(credential, state: state)))
            }
            return .start(state.isLoaded ? .refresh(state.credential) : .load)
        }
    }

    func renew(after generation: Int) async throws(RunwayError) -> CredentialLease {
        try await acquire { state in
            if state.generation > generation {
                if state.isLoaded, let credential = state.credential {
                    return .ready(.success(lease(credential, state: state)))
                }
                if let failure = state.failure { return .ready(.failure(failure)) }
            }
            // After a reset nothing is loaded: read the stored credential, never refresh `nil`.
            return .start(state.isLoaded ? .refresh(state.credential) : .load)
        }
    }

    private enum Decision {
        case ready(Result<CredentialLease, RunwayError>)
        case start(Work)
    }

    /// Joins the load or refresh in flight, if one runs; otherwise lets `decide` answer from the
    /// state or name the work to start, which every later caller then joins.
    private func acquire(_ decide: (State) -> Decision) async throws(RunwayError) -> CredentialLease {
        try refuseInsideOwnRefresh()
        let waiter = Waiter()
        let start = state.withLock { state -> (Work, epoch: Int)? in
            if state.waiting != nil {
                state.waiting?.append(Waiting(waiter: waiter, epoch: state.epoch))
                return nil
            }
            switch decide(state) {
            case .ready(let result):
                waiter.resolve(result)
                return nil
            case .start(let work):
                state.waiting = [Waiting(waiter: waiter, epoch: state.epoch)]
                return (work, state.epoch)
            }
        }
        if let start { run(start.0, epoch: start.epoch) }
        return try await wait(for: waiter)
    }

    /// A request that ``Authenticator/refresh(_:)`` sends itself and that needs this very
    /// credential would wait for the refresh it is part of, forever: it fails at once instead.
    private func refuseInsideOwnRefresh() throws(RunwayError) {
        if RefreshScope.current == ObjectIdentifier(self) {
            throw .unauthenticated(
                reason: "a request sent by refresh(_:) needs the credential being refreshed; declare `authenticates: false` on its API")
        }
    }

    /// Loads or refreshes in a task of its own, so that a load cancelled while it waits does not
    /// cancel the refresh the others wait for.
    private func run(_ work: Work, epoch: Int) {
        let authenticator = self.authenticator
        let identity = ObjectIdentifier(self)
        Task {
            await RefreshScope.$current.withValue(identity) {
                await self.perform(work, epoch: epoch, authenticator: authenticator)
            }
        }
    }

    /// What ends a load or refresh: its outcome for the loads that waited, or, when a reset came
    /// meanwhile, a fresh read for the loads of the new sign-in.
    private enum Ending {
        case resolve([Waiting], Result<CredentialLease, RunwayError>)
        case superseded(previous: [Waiting], restart: Int?)
    }

    /// Reads or refreshes the credential, then hands the outcome to every load waiting for it —
    /// unless ``reset()`` was called meanwhile, in which case the outcome is dropped.
    private func perform(_ work: Work, epoch: Int, authenticator: A) async {
        let outcome: Result<A.Credential, RunwayError>
        do {
            switch work {
            case .load:
                var credential = try await authenticator.credential()
                if credential.map(authenticator.requiresRefresh) ?? true {
                    credential = try await authenticator.refresh(credential)
                }
                outcome = credential.map { .success($0) }
                    ?? .failure(.unauthenticated(reason: "the authenticator gave no credential"))
            case .refresh(let expired):
                outcome = .success(try await authenticator.refresh(expired))
            }
        } catch let error as RunwayError {
            outcome = .failure(.unauthenticated(reason: "refreshing the credential failed: \(error.description)"))
        } catch {
            outcome = .failure(.unauthenticated(reason: "refreshing the credential failed: \(error)"))
        }
        let ending = state.withLock { state -> Ending in
            let waiting = state.waiting ?? []
            guard epoch == state.epoch else {
                // Signed out or in again while this ran: its credential is the previous user's.
                // Their loads end; loads that came after the reset read the stored credential.
                let previous = waiting.filter { $0.epoch != state.epoch }
                let current = waiting.filter { $0.epoch == state.epoch }
                guard !current.isEmpty else {
                    state.waiting = nil
                    return .superseded(previous: previous, restart: nil)
                }
                state.waiting = current
                return .superseded(previous: previous, restart: state.epoch)
            }
            state.waiting = nil
            switch outcome {
            case .success(let credential):
                state.isLoaded = true
                state.credential = credential
                state.failure = nil
                state.generation += 1
                return .resolve(waiting, .success(lease(credential, state: state)))
            case .failure(let error):
                // Loads that met the expiry meanwhile share this failure; the next new load
                // starts again from the stored credential.
                state.isLoaded = false
                state.credential = nil
                state.failure = error
                state.generation += 1
                return .resolve(waiting, .failure(error))
            }
        }
        switch ending {
        case .resolve(let waiting, let result):
            for waiting in waiting { waiting.waiter.resolve(result) }
        case .superseded(let previous, let restart):
            let reset = RunwayError.unauthenticated(reason: "the credential was reset (a sign-out or a new sign-in) while this load waited for it")
            for waiting in previous { waiting.waiter.resolve(.failure(reset)) }
            if let restart { run(.load, epoch: restart) }
        }
    }

    private func lease(_ credential: A.Credential, state: State) -> CredentialLease {
        let authenticator = self.authenticator
        return CredentialLease(generation: state.generation, epoch: SignInEpoch(resets: state.epoch)) { request in
            authenticator.apply(credential, to: &request)
        }
    }

    /// Waits for `waiter`; a cancelled load stops waiting at once.
    private func wait(for waiter: Waiter) async throws(RunwayError) -> CredentialLease {
        let result = await withTaskCancellationHandler {
            await waiter.value()
        } onCancel: {
            waiter.resolve(.failure(.cancelled))
        }
        return try result.get()
    }
}

/// The credential box whose refresh the current task is running, so that a request sent from
/// inside a refresh is recognised.
private enum RefreshScope {
    @TaskLocal static var current: ObjectIdentifier?
}
