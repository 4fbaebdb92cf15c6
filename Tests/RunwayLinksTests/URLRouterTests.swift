import Foundation
import RunwayLinks
import Testing

/// Records what handlers ran.
final class HandlerLog: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []
    func append(_ name: String) { lock.lock(); names.append(name); lock.unlock() }
    var entries: [String] { lock.lock(); defer { lock.unlock() }; return names }
}

@Suite("Router: anchored typed routes, priorities, fallback", .timeLimit(.minutes(10)))
struct URLRouterTests {
    static let shop = URLSchemeDeclaration(name: "com.acme.shop", schemes: ["shop", "acme-shop"])

    func router(_ log: HandlerLog) -> URLRouter {
        var router = URLRouter(declarations: [Self.shop])
        router.add("item", RoutePattern(host: "items", path: [.parameter("id", .integer(1...999_999))])) { match in
            log.append("item \(match["id"]?.integer ?? -1)")
            return .handled
        }
        router.add(
            "search",
            RoutePattern(
                host: "search",
                query: .items(
                    ["q": .string(length: 1...50), "sort": .enumeration(["price", "date"]), "page": .integer(1...100)],
                    required: ["q"]))
        ) { match in
            log.append("search \(match["q"]?.string ?? "") \(match["sort"]?.string ?? "-") \(match["page"]?.integer ?? 1)")
            return .handled
        }
        router.add("order", RoutePattern(host: "orders", path: [.parameter("id", .uuid)])) { match in
            log.append("order \(match["id"]?.uuid?.uuidString ?? "")")
            return .handled
        }
        router.add("declines", RoutePattern(host: "items", path: [.literal("special")]), priority: 10) { _ in
            log.append("declined")
            return .notHandled
        }
        router.add("special", RoutePattern(host: "items", path: [.literal("special")]), priority: 5) { _ in
            log.append("special")
            return .handled
        }
        router.setFallback { url in
            log.append("fallback \(url.host)")
            return url.host == "home" ? .handled : .notHandled
        }
        return router
    }

    @Test("typed parameters are captured; both ends of every pattern are anchored")
    func anchoring() {
        let log = HandlerLog()
        let router = router(log)
        #expect(router.route("shop://items/42") == .handled(route: "item"))
        #expect(router.route("ACME-SHOP://Items/7") == .handled(route: "item"))
        for unanchored in [
            "shop://items/42/extra", "shop://evil/items/42", "shop://items", "shop://items/0", "shop://items/1000000",
            "shop://items/+42", "shop://items/4 2", "shop://items/42?x=1", "shop://items/42#frag", "shop://xitems/42",
            "shop://items/42x", "shop://orders/not-a-uuid",
        ] {
            #expect(router.route(unanchored) != .handled(route: "item"), "\(unanchored) must not reach the item route")
        }
        #expect(router.route("shop://orders/6F9619FF-8B86-D011-B42D-00CF4FC964FF") == .handled(route: "order"))
        #expect(log.entries.prefix(2) == ["item 42", "item 7"])
    }

    @Test("query items: required ones, enumerations, ranges, and no unknown keys")
    func queryItems() {
        let log = HandlerLog()
        let router = router(log)
        #expect(router.route("shop://search?q=lamp&sort=price&page=2") == .handled(route: "search"))
        #expect(router.route("shop://search?sort=price") != .handled(route: "search"), "q is required")
        #expect(router.route("shop://search?q=lamp&sort=name") != .handled(route: "search"), "sort is an enumeration")
        #expect(router.route("shop://search?q=lamp&admin=1") != .handled(route: "search"), "unknown keys are refused")
        #expect(router.route("shop://search?q=lamp&q=rug") == .rejected(.duplicateQueryKey("q")))
        #expect(log.entries.first == "search lamp price 2")
    }

    @Test("higher priority goes first; a handler that declines passes to the next; the fallback gets the rest")
    func priorityAndFallback() {
        let log = HandlerLog()
        let router = router(log)
        #expect(router.route("shop://items/special") == .handled(route: "special"))
        #expect(log.entries == ["declined", "special"])
        #expect(router.route("shop://home") == .handledByFallback)
        #expect(router.route("shop://nowhere") == .notHandled)
        #expect(router.route("other://items/1") == .rejected(.undeclaredScheme("other")))
    }

    @Test("no handler runs on input that failed validation")
    func noHandlerOnInvalidInput() {
        let log = HandlerLog()
        let router = router(log)
        for hostile in ["shop://items/4%002", "shop://items/%C0%AF", "shop://items/" + String(repeating: "9", count: 3000), "shop://items/%FF"] {
            guard case .rejected = router.route(hostile) else {
                Issue.record("\(hostile.prefix(40)) must be rejected")
                continue
            }
        }
        #expect(log.entries.isEmpty)
    }
}
