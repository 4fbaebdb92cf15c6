import Runway
import RunwayExamples

extension DemoChapter {
    /// Three APIs with different keys, one row type for the list view; one API, two views (rows
    /// and map pins). The view never sees the raw JSON.
    static let reformers = DemoChapter("reformers", "Reformers (seed 003: reformer, 去 model 化)") { context, log in
        let rows = ListingRowsReformer()
        var table: [ListingRow] = []
        var pins: [MapPin] = []
        let second = APIManager(SecondHandListAPI(), engine: context.engine)
        let rental = APIManager(RentalListAPI(), engine: context.engine)
        let new = APIManager(NewHomeListAPI(), engine: context.engine)
        for manager in [second, rental, new] as [any DemoListing] {
            let loaded = try await manager.firstRows(with: rows)
            table += loaded
            pins += try await manager.pins()
            if let sample = loaded.first {
                log.say("\(manager.apiName.split(separator: ".").last ?? ""): \(loaded.count) rows, e.g. "
                    + "\(sample.kind) #\(sample.id) \(sample.name) — \(sample.title), \(sample.price)")
            }
        }
        log.say("3 APIs (esf_/zf_/xf_ keys) → 1 ListingRowsReformer → \(table.count) rows of one type")
        log.say("the same responses → MapPinReformer → \(pins.count) pins, e.g. \(pins.first.map { "\($0.label) @ \(oneDecimal($0.latitude)), \(oneDecimal($0.longitude))" } ?? "none")")
        log.figure("rows", .int(table.count))
        log.figure("pins", .int(pins.count))
        log.figure("kinds", .array(Set(table.map(\.kind)).sorted().map { .string($0) }))
        try log.require(table.count == 30 && pins.count == 30, "expected 30 rows and 30 pins, got \(table.count) and \(pins.count)")
        try log.require(Set(table.map(\.kind)) == ["esf", "zf", "xf"], "rows of every kind were expected")
    }
}

/// A listing manager, whatever its API: what the reformer chapter needs of each.
@MainActor
protocol DemoListing {
    var apiName: String { get }
    func firstRows(with reformer: ListingRowsReformer) async throws(RunwayError) -> [ListingRow]
    func pins() async throws(RunwayError) -> [MapPin]
}

extension APIManager: DemoListing where Endpoint: ListingAPI {
    func firstRows(with reformer: ListingRowsReformer) async throws(RunwayError) -> [ListingRow] {
        try await reform(try await firstPage(), with: reformer)
    }

    func pins() async throws(RunwayError) -> [MapPin] {
        try await reformLastResponse(with: MapPinReformer())
    }
}
