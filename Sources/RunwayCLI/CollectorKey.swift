import ArgumentParser
import Runway

/// How a client command signs what it sends to a collector: with ``KeyOptions``' key, or not at
/// all with `--unsigned` (for a `runway serve --no-verify`).
struct CollectorKey: ParsableArguments {
    @OptionGroup var key: KeyOptions

    @Flag(help: "Send unsigned requests (to a `runway serve --no-verify`).")
    var unsigned = false

    func validate() throws {
        if unsigned, !key.isDemoKey { throw ValidationError("--unsigned takes no key") }
    }

    /// The signer, or `nil` with `--unsigned`.
    var signer: HMACSigner? {
        unsigned ? nil : HMACSigner(keyID: key.id, secret: key.key)
    }
}
