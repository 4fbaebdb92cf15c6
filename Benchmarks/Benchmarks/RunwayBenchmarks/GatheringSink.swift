import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Runway

/// A response sink that keeps the body in memory, as the engine's collector does, for a profile
/// run that sends through a transport without the engine (``ProfileRun``'s `transportcall`).
final class GatheringSink: ResponseSink {
    private let gathered = NIOLockedValueBox(Data())

    /// The body so far (the last head's).
    var body: Data { gathered.withLockedValue { $0 } }

    func begin(_ head: HTTPResponse) throws {
        gathered.withLockedValue { $0 = Data() }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        gathered.withLockedValue { $0.append(contentsOf: bytes) }
    }
}
