/// What a transfer adds to the exchanges of a load: progress of the body sent, where the
/// response body goes, a last change to each attempt's request (a download's `Range`), and the
/// sign-in of a request made earlier (an outbox item).
struct TransferHooks: Sendable {
    var uploadProgress: (@Sendable (Int64, Int64) -> Void)?
    var sink: (any ResponseSink)?
    /// May suspend (a download reads its partial file's size and note as blocking work).
    var prepare: (@Sendable (inout PreparedRequest) async throws(RunwayError) -> Void)?
    /// The sign-in the request was made for, when that was before this load began: the load
    /// ends with ``RunwayError/userChanged`` before anything is sent under another one.
    var signIn: SignInEpoch?
}
