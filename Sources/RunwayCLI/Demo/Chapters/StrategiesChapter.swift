import Runway
import RunwayTestSupport
import RunwayServer

extension DemoChapter {
    /// Per-API strategies: a refresh while one is in flight is ignored (and joins it); a new
    /// filter cancels the load in flight on the wire.
    static let strategies = DemoChapter("strategies", "Request strategies (seed 003: 策略)", needsInProcessServer: true) { context, log in
        guard let probe = context.server?.probe else { return }
        // Pull to refresh three times while the first refresh is in flight.
        var refresh = AdHocAPI("RefreshAPI", path: "/faults/gate/refresh")
        refresh.requestStrategy = .ignoreNewWhileLoading
        let refresher = APIManager(refresh, engine: context.engine)
        let refreshDelegate = RecordingDelegate()
        refresher.delegate = refreshDelegate
        let gatesBefore = probe.count(of: .gateWaiting)
        let first = refresher.loadData()
        await probe.wait(for: .gateWaiting, count: gatesBefore + 1)
        let ignored = (0..<2).map { _ in refresher.loadData() }.filter { $0 == nil }.count
        probe.openGate("refresh")
        await refreshDelegate.waitForEvents(1)
        let served = probe.count("/faults/gate/refresh")
        log.say("ignoreNewWhileLoading: 3 pulls to refresh during one load → \(ignored) ignored, "
            + "\(served) request served, \(refreshDelegate.events.count) delivery")

        // Change the filter while the old filter's load hangs on the server.
        var filter = AdHocAPI("FilterAPI", path: "/faults/hang")
        filter.requestStrategy = .cancelInFlight
        let filterer = APIManager(filter, engine: context.engine)
        let filterDelegate = RecordingDelegate()
        filterer.delegate = filterDelegate
        let (started, closed) = (probe.count(of: .holdStarted), probe.count(of: .holdClosed))
        filterer.loadData(with: ["price": "0-300"])
        await probe.wait(for: .holdStarted, count: started + 1)
        filterer.api.path = "/echo/filtered"
        filterer.loadData(with: ["price": "0-500"])
        await probe.wait(for: .holdClosed, count: closed + 1)
        await filterDelegate.waitForEvents(2)
        let outcomes = filterDelegate.events.map { event -> String in
            switch event {
            case .success(let response): "success (\(response?.json?["query"]?.stringValue ?? ""))"
            case .failure(let error): error == .cancelled ? "cancelled" : error.localizedMessage()
            }
        }
        log.say("cancelInFlight: new filter while the old one loads → the server saw the old connection close; "
            + "deliveries: \(outcomes.joined(separator: ", "))")
        log.figure("refreshesIgnored", .int(ignored))
        log.figure("refreshRequests", .int(served))
        log.figure("filterDeliveries", .array(outcomes.map { .string($0) }))
        try log.require(first != nil && ignored == 2 && served == 1 && refreshDelegate.events.count == 1, "the refreshes were not ignored as expected")
        try log.require(outcomes == ["cancelled", "success (price=0-500)"], "expected the old filter cancelled and the new one delivered")
    }

    /// The landing point vanishes: a manager released mid-flight takes its request with it.
    static let landing = DemoChapter("landing", "The landing point vanishes (seed 003: 回調時 delegate 已被釋放)", needsInProcessServer: true) { context, log in
        guard let probe = context.server?.probe else { return }
        let (started, closed) = (probe.count(of: .holdStarted), probe.count(of: .holdClosed))
        let delegate = RecordingDelegate()
        var manager: APIManager<AdHocAPI>? = APIManager(AdHocAPI("DetailAPI", path: "/faults/hang"), engine: context.engine)
        weak let released = manager
        manager?.delegate = delegate
        manager?.loadData()
        await probe.wait(for: .holdStarted, count: started + 1)
        manager = nil
        await probe.wait(for: .holdClosed, count: closed + 1)
        // Anything the manager would still deliver is queued on the main actor: let it run.
        await Task { @MainActor in }.value
        log.say("a view controller goes away while its load hangs on the server; its manager is released")
        log.say("manager freed: \(released == nil); the server saw the connection close; callbacks delivered: \(delegate.events.count)")
        log.figure("managerFreed", .bool(released == nil))
        log.figure("callbacks", .int(delegate.events.count))
        try log.require(released == nil && delegate.events.isEmpty, "the released manager's load still landed")
    }
}
