import Foundation
import HTTPTypes
import Runway
import RunwayExamples
import RunwayTestSupport
import Testing

@Suite("StubTransport for apps' own tests", .timeLimit(.minutes(10)))
@MainActor
struct StubTransportTests {
    @Test("sample data answers per API name, an API without a sample gets 404, and requests are recorded")
    func sampleData() async throws {
        let stub = StubTransport(sampleData: [
            "RunwayExamples.SecondHandListAPI": .json([
                "code": 0, "data": ["items": [["esf_id": 7, "esf_name": "n", "esf_title": "t", "esf_price": 1]]],
            ]),
            "RunwayExamples.RentalListAPI": .failure(.noNetwork(reason: .unreachable)),
        ])
        let engine = Engine(transport: stub, sleep: { _ in })
        try engine.register(listingService(baseURL: "https://listings.example.com"))

        let rows = try await APIManager(SecondHandListAPI(), engine: engine).load(reformedBy: ListingRowsReformer())
        #expect(rows == [ListingRow(kind: "esf", id: 7, name: "n", title: "t", price: 1)])
        await #expect(throws: RunwayError.noNetwork(reason: .unreachable)) {
            try await APIManager(RentalListAPI(), engine: engine).load()
        }
        await #expect(throws: RunwayError.httpStatus(code: 404, body: Data())) {
            try await APIManager(NewHomeListAPI(), engine: engine).load()
        }
        #expect(stub.requests.map(\.apiName) == [
            "RunwayExamples.SecondHandListAPI", "RunwayExamples.RentalListAPI", "RunwayExamples.RentalListAPI", "RunwayExamples.RentalListAPI", "RunwayExamples.NewHomeListAPI",
        ])
        #expect(stub.requests.first?.head.path == "/listings/esf?client=runway-demo")
    }

    @Test("a stubbed download lands in its file, so an app can test its download code without a server")
    func download() async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let plan = Data("%PDF-1.7 a floor plan".utf8)
        let stub = StubTransport(sampleData: ["RunwayExamples.FloorPlanAPI": .data(plan)])
        let engine = Engine(transport: stub)
        try engine.register(accountService(baseURL: "https://account.example.com", authentication: Authentication(FixedToken())))
        let file = try await engine.download(FloorPlanAPI(), to: .caches("plan.pdf", in: container)).value
        #expect(try Data(contentsOf: file.url) == plan)
        #expect(stub.requests.first?.head.headerFields[.authorization] == "Bearer fixed")
    }
}

/// A credential that never expires, for stubbed tests.
struct FixedToken: Authenticator {
    func credential() async throws -> String? { "fixed" }
    func apply(_ token: String, to request: inout HTTPRequest) { request.headerFields[.authorization] = "Bearer \(token)" }
    func refresh(_ expired: String?) async throws -> String { "fixed" }
}
