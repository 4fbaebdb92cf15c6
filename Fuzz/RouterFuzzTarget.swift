// The router's fuzz target, compiled by Fuzz/fuzz-router.sh together with RunwayLinks' sources
// (swiftc -sanitize=fuzzer,address). Not part of `swift test`.
//
// Every input goes through the incoming-URL parser and a router with every kind of converter.
// Beyond "no crash", it checks one property: a URL the parser accepts, rebuilt from its parts by
// OutgoingURL, parses back to the same parts.
import Foundation

let fuzzRouter: URLRouter = {
    var router = URLRouter(declarations: [URLSchemeDeclaration(name: "com.acme.fuzz", schemes: ["todolist", "shop"])])
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let due = ParameterConverter.oneOf([
        .literal("today", value: .string("today")),
        .date(format: "yyyyMMddHHmm", calendar: calendar, timeZone: calendar.timeZone),
    ])
    router.add("todo", RoutePattern(host: "www.acme.com", query: .text("task", .string(length: 1...200), optional: false),
                                    fragment: .parameter("due", due, optional: true))) { _ in .handled }
    router.add("item", RoutePattern(host: "items", path: [.parameter("id", .integer(1...999_999))])) { _ in .handled }
    router.add("order", RoutePattern(host: "orders", path: [.literal("v1"), .parameter("id", .uuid)])) { _ in .handled }
    router.add("search", RoutePattern(host: "search", query: .items(
        ["q": .string(length: 1...50), "sort": .enumeration(["price", "date"], ignoringCase: true)], required: ["q"]))) { _ in .notHandled }
    router.setFallback { _ in .notHandled }
    return router
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func runwayRouterFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = fuzzRouter.route(text)
    guard let url = try? IncomingURL(text) else { return 0 }
    let rebuilt = OutgoingURL(
        scheme: url.scheme, host: url.host, port: url.port, path: url.pathSegments,
        queryItems: url.queryItems.sorted { $0.key < $1.key }.map { OutgoingURL.QueryItem($0.key, $0.value) },
        fragment: url.fragment)
    guard let again = try? rebuilt.string() else { return 0 }  // hosts OutgoingURL does not build (IP literals, sub-delims)
    guard let reparsed = try? IncomingURL(again, limits: LinkLimits(maximumLength: 1 << 20)) else {
        fatalError("rebuilt URL refused: \(again) from \(text)")
    }
    guard reparsed.scheme == url.scheme, reparsed.host == url.host, reparsed.port == url.port,
          reparsed.pathSegments == url.pathSegments, reparsed.queryItems == url.queryItems, reparsed.fragment == url.fragment
    else {
        fatalError("round trip changed the URL: \(text) → \(again)")
    }
    return 0
}
