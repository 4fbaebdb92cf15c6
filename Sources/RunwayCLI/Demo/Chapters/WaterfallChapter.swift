import Foundation
import Runway
import RunwayTestSupport

extension DemoChapter {
    /// A screen opening: one burst of loads (bursty, not chatty), drawn as a waterfall
    /// from the engine's recorder — one bar per load on one time axis, its phases shaded, cache
    /// hits and joined loads marked. `--json` carries every load of the demo, phases and all.
    static let waterfall = DemoChapter("waterfall", "A waterfall of what the network layer did") { context, log in
        let recorder = context.recorder
        let since = recorder.loads.last?.loadID.rawValue ?? 0
        var list = AdHocAPI("WaterfallListAPI", path: "/faults/cacheable")
        list.cachePolicy = .memory(lifetime: .seconds(60))
        let key = JSON.string("screen-\(UUID().uuidString.prefix(8))")
        await Self.openScreen(list: list, key: key, on: context.engine)

        let burst = recorder.loads.filter { $0.loadID.rawValue > since && $0.apiName.hasPrefix("Waterfall") }
        for line in Waterfall.draw(burst, width: 40) { log.say(line) }
        log.say("phases: ░ to the first byte · ▓ body · ▒ parse · c cache lookup")
        log.figure("loads", .array(recorder.loads.map(Waterfall.json)))
        log.figure("exchanges", .int(recorder.exchanges.count))
        let outcomes = burst.map(\.outcome)
        let joined = outcomes.filter { if case .joined = $0 { true } else { false } }.count
        let hits = outcomes.filter { if case .cache = $0 { true } else { false } }.count
        log.figure("burstLoads", .int(burst.count))
        log.figure("burstJoined", .int(joined))
        log.figure("burstCacheHits", .int(hits))
        let listRequests = context.wire.count(list.name)
        log.figure("listRequests", .int(listRequests))
        try log.require(burst.count == 5, "the burst recorded \(burst.count) loads, not 5")
        // The second ask joins the first's flight, or — on a machine slow enough that the first
        // landed before it began — finds its answer in memory: one request either way.
        try log.require(listRequests == 1, "three loads of the list sent \(listRequests) requests")
        try log.require(joined + hits == 2, "expected two of the list's loads joined or from memory, saw \(joined + hits)")
    }
}

extension DemoChapter {
    /// The screen asks for its list twice at once (two views), its header through a redirect,
    /// and a detail; then the list again once it has landed.
    nonisolated static func openScreen(list: AdHocAPI, key: JSON, on engine: Engine) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = await engine.perform(list, params: ["key": key]) }
            group.addTask { _ = await engine.perform(list, params: ["key": key]) }
            group.addTask { _ = await engine.perform(AdHocAPI("WaterfallHeaderAPI", path: "/faults/redirect-to/302/echo/header")) }
            group.addTask { _ = await engine.perform(AdHocAPI("WaterfallDetailAPI", path: "/echo/detail")) }
        }
        _ = await engine.perform(list, params: ["key": key])
    }
}

/// Draws loads on a terminal time axis.
enum Waterfall {
    /// One line per load: name, a bar on the shared axis, duration and outcome.
    static func draw(_ loads: [LoadRecord], width: Int) -> [String] {
        guard let first = loads.map(\.offset).min() else { return [] }
        let end = loads.map { $0.offset + $0.duration }.max() ?? first
        let span = max((end - first).milliseconds, 0.001)
        let nameWidth = min(28, loads.map(\.apiName.count).max() ?? 0)
        return loads.sorted { $0.offset < $1.offset }.map { load in
            let start = (load.offset - first).milliseconds
            let from = Int((start / span * Double(width)).rounded(.down))
            let cells = max(1, Int((load.duration.milliseconds / span * Double(width)).rounded()))
            let bar = String(repeating: " ", count: min(from, width - 1))
                + shaded(load, cells: min(cells, width - min(from, width - 1)))
            let padded = bar.padding(toLength: width, withPad: " ", startingAt: 0)
            let name = String(load.apiName.prefix(nameWidth)).padding(toLength: nameWidth, withPad: " ", startingAt: 0)
            return "\(name) │\(padded)│ \(readable(milliseconds: load.duration.milliseconds)) \(mark(load.outcome))"
        }
    }

    /// `cells` characters whose share of each shade is the phase's share of the load.
    static func shaded(_ load: LoadRecord, cells: Int) -> String {
        let phases: [(PhaseTimings.Phase, Character)] = [(.cacheLookup, "c"), (.firstByte, "░"), (.body, "▓"), (.parse, "▒")]
        let measured = phases.compactMap { phase, shade in load.timings[phase].map { (shade, $0.milliseconds) } }
        let total = measured.reduce(0) { $0 + $1.1 }
        guard total > 0 else { return String(repeating: "─", count: cells) }
        var bar = ""
        for (shade, milliseconds) in measured {
            bar += String(repeating: shade, count: Int((milliseconds / total * Double(cells)).rounded()))
        }
        if bar.count < cells { bar += String(repeating: bar.last ?? "─", count: cells - bar.count) }
        return String(bar.prefix(cells))
    }

    static func mark(_ outcome: LoadRecord.Outcome) -> String {
        switch outcome {
        case .network(let status): "\(status)"
        case .cache(let tier, let isStale): "cache hit (\(tier.rawValue)\(isStale ? ", stale" : ""))"
        case .revalidated(let tier): "304, \(tier.rawValue) cache revalidated"
        case .joined(let status): "joined a load in flight" + (status.map { " · \($0)" } ?? "")
        case .failed(let error): "failed: \(error.localizedMessage())"
        }
    }

    /// A load as `--json` carries it: start and duration in milliseconds, outcome, phases.
    static func json(_ load: LoadRecord) -> JSON {
        var phases: [String: JSON] = [:]
        for phase in PhaseTimings.Phase.allCases {
            switch load.timings.status(of: phase) {
            case .took(let duration): phases[phase.rawValue] = .double(duration.milliseconds)
            case .skipped: phases[phase.rawValue] = "skipped"
            case .notReported: break
            }
        }
        return .object([
            "load": .int(Int(load.loadID.rawValue)), "api": .string(load.apiName), "startMs": .double(load.offset.milliseconds),
            "durationMs": .double(load.duration.milliseconds), "outcome": .string(mark(load.outcome)), "phases": .object(phases),
        ])
    }
}
