import ArgumentParser
import Crypto
import Runway
import RunwayExamples

/// An HMAC key named on the command line, `--key-id` and `--secret`: the demo key's by default,
/// so that a default `runway serve` verifies what the CLI's clients sign.
struct KeyOptions: ParsableArguments {
    @Option(help: "The HMAC key id (default: the demo key's, runway-demo-2026).")
    var keyID: String?

    @Option(help: "The key's HMAC secret, hex, at least 32 bytes (default: the demo secret).")
    var secret: String?

    func validate() throws {
        if let secret, (RequestSignature.bytes(fromHex: secret)?.count ?? 0) < 32 {
            throw ValidationError("--secret must be at least 32 bytes of hex")
        }
    }

    /// Whether neither was given: the demo key.
    var isDemoKey: Bool { keyID == nil && secret == nil }

    /// The key id.
    var id: String { keyID ?? DemoSigningKey.keyID }

    /// The secret.
    var key: SymmetricKey {
        secret.flatMap(RequestSignature.bytes(fromHex:)).map { SymmetricKey(data: $0) } ?? DemoSigningKey.secret
    }
}
