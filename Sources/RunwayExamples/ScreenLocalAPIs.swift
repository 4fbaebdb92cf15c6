import HTTPTypes
public import Runway

/// An API that one screen uses, declared `private` beside it, as apps often do.
private struct ProfileBadgeAPI: API {
    var service: ServiceID { .listings }
    var path: String { "/echo/badge" }
    var method: HTTPRequest.Method { .get }
}

/// APIs declared where only one screen sees them: `private`, or inside a function. Their default
/// names must be the same on every launch, since names are part of cache keys and metric labels.
public enum ScreenLocalAPIs {
    /// One `private` API and one declared inside a function.
    public static var all: [any API] { [ProfileBadgeAPI(), declaredInAFunction()] }

    static func declaredInAFunction() -> any API {
        struct UnreadCountAPI: API {
            var service: ServiceID { .listings }
            var path: String { "/echo/unread" }
            var method: HTTPRequest.Method { .get }
        }
        return UnreadCountAPI()
    }
}
