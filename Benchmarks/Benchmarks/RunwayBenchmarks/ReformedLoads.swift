import AsyncHTTPClient
import Foundation
import Runway

/// The listing page as a view reads it: one row per listing, made off the main actor and handed
/// to it finished — through a manager's reformer, or by hand around the raw client.
struct ListingRow: Sendable {
    var id: Int
    var title: String
    var price: Int
}

/// The rows from Runway's tree.
struct ListingRowsReformer: Reformer {
    func reform(_ response: RawResponse) throws -> [ListingRow] {
        guard let items = response.json?["data"]?["items"]?.arrayValue else { throw FixtureError.unexpectedBody }
        return try items.map { item in
            guard let id = item["id"]?.intValue, let title = item["title"]?.stringValue, let price = item["price"]?.intValue
            else { throw FixtureError.unexpectedBody }
            return ListingRow(id: id, title: title, price: price)
        }
    }
}

extension Fixture {
    /// Raw AsyncHTTPClient, the body parsed by `JSONSerialization` and made into rows.
    func rawRows() async throws -> [ListingRow] {
        let object = try await rawAsyncHTTPClientParsed().object
        guard let envelope = object as? [String: Any], let data = envelope["data"] as? [String: Any],
            let items = data["items"] as? [[String: Any]]
        else { throw FixtureError.unexpectedBody }
        return try items.map { item in
            guard let id = item["id"] as? Int, let title = item["title"] as? String, let price = item["price"] as? Int
            else { throw FixtureError.unexpectedBody }
            return ListingRow(id: id, title: title, price: price)
        }
    }

    /// Raw AsyncHTTPClient, the body parsed by Runway's parser and made into rows by the same
    /// reformer code.
    func rawRowsRunwayParser() async throws -> [ListingRow] {
        guard let items = try await rawAsyncHTTPClientRunwayParsed()["data"]?["items"]?.arrayValue else {
            throw FixtureError.unexpectedBody
        }
        return try items.map { item in
            guard let id = item["id"]?.intValue, let title = item["title"]?.stringValue, let price = item["price"]?.intValue
            else { throw FixtureError.unexpectedBody }
            return ListingRow(id: id, title: title, price: price)
        }
    }
}

extension MainActorLoop {
    /// The manager's reformed load against the raw client making the same rows off the main
    /// actor, each called from the main actor, the rows read there.
    static func interleavedRows(engine: Engine, fixture: Fixture) async throws -> InterleavedBenchmarks.Ratios {
        let manager = APIManager(ListingsAPI(), engine: engine)
        return try await InterleavedBenchmarks.ratios(
            raw: (
                { @MainActor in try check(await rowsOffMain(fixture, runwayParser: false)) },
                { @MainActor in try check(await rowsOffMain(fixture, runwayParser: true)) }
            ),
            runway: { try check(try await manager.load(reformedBy: ListingRowsReformer())) })
    }

    static func check(_ rows: [ListingRow]) throws {
        guard rows.count == 16 else { throw FixtureError.unexpectedBody }
    }

    @concurrent
    nonisolated static func rowsOffMain(_ fixture: Fixture, runwayParser: Bool) async throws -> [ListingRow] {
        runwayParser ? try await fixture.rawRowsRunwayParser() : try await fixture.rawRows()
    }
}
