import Foundation
import RunwayExamples
import RunwayLinks
import Testing

@Suite("The todolist example", .timeLimit(.minutes(10)))
struct TodoListLinksTests {
    let zone = TimeZone(identifier: "Asia/Shanghai")!
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
    }

    @Test("the seed's URL adds \"Quarterly Report\" due 2008-06-23 13:00 in the declared time zone")
    func seedExample() {
        let list = TodoList()
        let router = TodoListLinks.router(list: list, timeZone: zone, now: { now })
        #expect(router.route("todolist://www.acme.com?Quarterly%20Report#200806231300") == .handled(route: "add-todo"))
        #expect(list.items == [TodoItem(title: "Quarterly Report", due: date(2008, 6, 23, 13, 0))])
    }

    @Test("a missing fragment or \"today\" means due now", arguments: [
        "todolist://www.acme.com?Buy%20milk", "todolist://www.acme.com?Buy%20milk#today", "TODOLIST://WWW.ACME.COM?Buy%20milk#",
    ])
    func dueNow(_ text: String) {
        let list = TodoList()
        let router = TodoListLinks.router(list: list, timeZone: zone, now: { now })
        #expect(router.route(text) == .handled(route: "add-todo"))
        #expect(list.items == [TodoItem(title: "Buy milk", due: now)])
    }

    @Test("an invalid task or date is not handled and adds nothing", arguments: [
        "todolist://www.acme.com?Report#200813231300",  // month 13
        "todolist://www.acme.com?Report#20080623130",  // eleven digits
        "todolist://www.acme.com?Report#2008062313000",  // thirteen digits
        "todolist://www.acme.com?Report#2008O6231300",  // a letter O
        "todolist://www.acme.com?Report#200806312400",  // 31 June, hour 24
        "todolist://www.acme.com?Report#tomorrow",
        "todolist://www.acme.com",  // no task
        "todolist://www.acme.com?",  // empty task
        "todolist://www.acme.com?" + String(repeating: "x", count: 201),  // task too long
        "todolist://www.acme.com?Tab%09inside",  // control character
        "todolist://www.acme.com?Null%00byte",
        "todolist://www.acme.com?Report%C0%AF",
        "todolist://evil.com?Report#200806231300",  // another host
        "todolist://www.acme.com/path?Report",  // a path the route does not declare
        "todolist://www.acme.com:8080?Report",  // a port the route does not declare
    ])
    func invalid(_ text: String) {
        let list = TodoList()
        let router = TodoListLinks.router(list: list, timeZone: zone, now: { now })
        switch router.route(text) {
        case .handled, .handledByFallback: Issue.record("\(text) must not be handled")
        case .notHandled, .rejected: break
        }
        #expect(list.items.isEmpty)
    }

    @Test("the outgoing builder makes the seed's URL, and what it builds routes back to the same values")
    func outgoingRoundTrip() throws {
        let seed = try OutgoingURL(scheme: "todolist", host: "www.acme.com", queryText: "Quarterly Report", fragment: "200806231300").string()
        #expect(seed == "todolist://www.acme.com?Quarterly%20Report#200806231300")
        let list = TodoList()
        let router = TodoListLinks.router(list: list, timeZone: zone, now: { now })
        for title in ["A&B = C+D", "50% #1 / 2?", "新年 🎉 plan", "quote \" and 'apostrophe'"] {
            let url = try OutgoingURL(scheme: "todolist", host: "www.acme.com", queryText: title, fragment: "today").string()
            #expect(router.route(url) == .handled(route: "add-todo"), "\(url)")
        }
        #expect(list.items.map(\.title) == ["A&B = C+D", "50% #1 / 2?", "新年 🎉 plan", "quote \" and 'apostrophe'"])
    }

    @Test("query items and path segments are encoded by their own rules")
    func encodingRules() throws {
        let url = try OutgoingURL(
            scheme: "shop", host: "search", path: ["a b", "x/y", "c:d@e"],
            queryItems: [.init("q", "a&b=c+d"), .init("π", "1/2?")], fragment: "f#g").string()
        #expect(url == "shop://search/a%20b/x%2Fy/c:d@e?q=a%26b%3Dc%2Bd&%CF%80=1/2?#f%23g")
        let parsed = try IncomingURL(url)
        #expect(parsed.pathSegments == ["a b", "x/y", "c:d@e"])
        #expect(parsed.queryItems == ["q": "a&b=c+d", "π": "1/2?"])
        #expect(parsed.fragment == "f#g")
        #expect(throws: LinkError.self) { try OutgoingURL(scheme: "1bad", host: "x").string() }
        #expect(throws: LinkError.self) { try OutgoingURL(scheme: "ok", host: "bad host").string() }
    }

    @Test("a refusal reads as a sentence, not a Swift value")
    func refusalSentences() {
        let errors: [LinkError] = [
            .tooLong(length: 3000, limit: 2048), .invalidCharacter(offset: 3), .malformed(reason: "no authority"),
            .undeclaredScheme("evil"), .malformedPercentEncoding(component: "query"), .invalidUTF8(component: "path"),
            .controlCharacter(component: "fragment"), .duplicateQueryKey("id"),
        ]
        for error in errors {
            let text = error.description
            #expect(!text.contains("("), "\(text) looks like a Swift value")
            #expect(text.first?.isLowercase == true)
        }
        #expect(LinkError.undeclaredScheme("evil").description.contains("\"evil\""))
    }

    @Test("a pattern that declares a port accepts that port only")
    func declaredPort() {
        var router = URLRouter(declarations: [URLSchemeDeclaration(name: "com.acme.todolist", schemes: ["todolist"])])
        router.add("local", RoutePattern(host: "localhost", port: 8080)) { _ in .handled }
        #expect(router.route("todolist://localhost:8080") == .handled(route: "local"))
        #expect(router.route("todolist://localhost:8081") != .handled(route: "local"))
        #expect(router.route("todolist://localhost") != .handled(route: "local"))
    }
}
