import Foundation
public import RunwayLinks

/// A to-do item made from a link.
public struct TodoItem: Sendable, Hashable {
    public var title: String
    public var due: Date

    public init(title: String, due: Date) {
        self.title = title
        self.due = due
    }
}

/// The to-do list the example's links add to.
public final class TodoList: Sendable {
    private let storage = NSLockedItems()

    public init() {}

    public var items: [TodoItem] { storage.items }

    func add(_ item: TodoItem) { storage.append(item) }
}

/// A lock-protected array for ``TodoList``.
private final class NSLockedItems: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [TodoItem] = []
    var items: [TodoItem] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
    func append(_ item: TodoItem) {
        lock.lock()
        stored.append(item)
        lock.unlock()
    }
}

/// Apple's todolist example, routed strictly:
/// `todolist://www.acme.com?Quarterly%20Report#200806231300` adds "Quarterly Report" due
/// 2008-06-23 13:00 (24-hour clock, Gregorian calendar, the list's declared time zone). A missing
/// fragment or `today` means due now. An invalid task or date is not handled and adds nothing.
public enum TodoListLinks {
    /// The app's scheme declaration.
    public static let declaration = URLSchemeDeclaration(name: "com.acme.todolist", schemes: ["todolist"])

    /// The task text: 1 to 200 characters, letters, digits, punctuation, symbols and spaces.
    public static let task = ParameterConverter.string(length: 1...200)

    /// A router that adds to `list`.
    ///
    /// - parameters:
    ///   - timeZone: The time zone due dates are read in.
    ///   - now: What "due now" means; replace it in tests.
    public static func router(list: TodoList, timeZone: TimeZone, now: @escaping @Sendable () -> Date = { Date() }) -> URLRouter {
        var router = URLRouter(declarations: [declaration])
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let due = ParameterConverter.oneOf([
            .literal("today", value: .string("today")),
            .date(format: "yyyyMMddHHmm", calendar: calendar, timeZone: timeZone),
        ])
        let pattern = RoutePattern(
            scheme: "todolist", host: "www.acme.com", query: .text("task", task, optional: false),
            fragment: .parameter("due", due, optional: true))
        router.add("add-todo", pattern) { match in
            guard let title = match["task"]?.string else { return .notHandled }
            list.add(TodoItem(title: title, due: match["due"]?.date ?? now()))
            return .handled
        }
        return router
    }
}
