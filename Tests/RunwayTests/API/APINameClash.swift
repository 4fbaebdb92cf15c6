import RunwayTestSupport
import HTTPTypes
import Runway

/// A `private` API type named like one in `APIIdentityTests.swift`: once the launch-dependent
/// part of their names is left out, the two read the same.
private struct ClashingAPI: API {
    var service: ServiceID { .test }
    var path: String { "/echo/other-file" }
    var method: HTTPRequest.Method { .get }
}

/// The other file's `ClashingAPI`.
func clashingAPIFromAnotherFile() -> any API { ClashingAPI() }
