import NIOCore
@testable import RunwayNIO
import Testing

@Suite("AsyncHTTPClient transport: an API's timeout as NIO's", .timeLimit(.minutes(10)))
struct TimeoutTests {
    @Test("a timeout of years is clamped, not multiplied past Int64; a negative one is none")
    func clamped() {
        #expect(AsyncHTTPClientTransport.nanoseconds(.seconds(Int64.max)) == .nanoseconds(.max))
        #expect(AsyncHTTPClientTransport.nanoseconds(.seconds(9_300_000_000)) == .nanoseconds(.max))
        #expect(AsyncHTTPClientTransport.nanoseconds(.milliseconds(2_500)) == .nanoseconds(2_500_000_000))
        #expect(AsyncHTTPClientTransport.nanoseconds(.seconds(-1)) == .nanoseconds(0))
    }
}
