import Runway
import RunwayExamples

extension DemoChapter {
    /// A paged API: the manager keeps the page it is on and knows when it has reached the last.
    static let pagination = DemoChapter("pagination", "Pagination (seed 003: 翻頁)") { context, log in
        let manager = APIManager(SecondHandListAPI(), engine: context.engine)
        var pages = [try await manager.firstPage()]
        while let next = try await manager.nextPage() { pages.append(next) }
        let sizes = pages.map { $0.payload?["items"]?.arrayValue?.count ?? 0 }
        let total = pages.first?.payload?["total"]?.intValue ?? 0
        log.say("firstPage() then nextPage() until it returns nil: \(pages.count) pages of \(sizes.map(String.init).joined(separator: ", ")) items")
        log.say("\(sizes.reduce(0, +)) of \(total) listings; isLastPage: \(manager.isLastPage); one more nextPage() sends nothing")
        let sent = context.wire.count(SecondHandListAPI().name)
        _ = try await manager.nextPage()
        log.figure("pages", .int(pages.count))
        log.figure("items", .int(sizes.reduce(0, +)))
        try log.require(sizes.reduce(0, +) == total && total > 0 && manager.isLastPage, "the pages did not add up to the total")
        try log.require(context.wire.count(SecondHandListAPI().name) == sent, "a load past the last page was sent")
    }
}
