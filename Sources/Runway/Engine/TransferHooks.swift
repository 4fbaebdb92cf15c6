/// What a transfer adds to the exchanges of a load: progress of the body sent, where the
/// response body goes, and a last change to each attempt's request (a download's `Range`).
struct TransferHooks: Sendable {
    var uploadProgress: (@Sendable (Int64, Int64) -> Void)?
    var sink: (any ResponseSink)?
    var prepare: (@Sendable (inout PreparedRequest) throws(RunwayError) -> Void)?
}
