/// Which sign-in a request was made for: the count of ``Authentication/reset()`` calls when its
/// load took its first credential.
///
/// A load carries the epoch through its attempts, redirect hops, renewals, the cookies it
/// stores and the answer it caches; before any of them is sent again or kept, the engine compares
/// it with the current one, and a load of an earlier sign-in ends with
/// ``RunwayError/userChanged`` — never sent again under the next user's identity.
public struct SignInEpoch: Hashable, Sendable, CustomStringConvertible {
    /// How many resets came before this sign-in.
    public let resets: Int

    init(resets: Int) {
        self.resets = resets
    }

    public var description: String { "sign-in #\(resets)" }
}
