import Testing

@testable import Runway

@Suite("The query rule of credential redaction", .timeLimit(.minutes(10)))
struct QueryRedactionTests {
    @Test("the values of params whose name has a secret's part, or was marked (percent-encoded or not), are redacted; the rest is kept as it was")
    func secretsRedacted() {
        let path = "/x?page=2&access_token=abc&api-key=k&monkey=1&q&user.Session=s&ticket=t&%74icket=u&empty="
        #expect(
            CredentialRedaction.redactingQuery(inPath: path, also: ["ticket"])
                == "/x?page=2&access_token=<redacted>&api-key=<redacted>&monkey=1&q&user.Session=<redacted>"
                + "&ticket=<redacted>&%74icket=<redacted>&empty=")
        // Without the mark, an app's own name says nothing.
        #expect(
            CredentialRedaction.redactingQuery(inPath: "/x?ticket=t&sign=s", also: []) == "/x?ticket=t&sign=<redacted>")
    }

    @Test("a path without a secret in its query, or without a query, is handed back unchanged")
    func nothingToRedact() {
        for path in ["/x?page=2&n=3", "/x", "/x?", "/x?&&", "/x?a=b=c"] {
            #expect(CredentialRedaction.redactingQuery(inPath: path) == path)
        }
    }

    @Test("the byte-by-byte check of a query agrees with the rule on every name, and leaves any other character to the full check")
    func byteCheckAgrees() {
        let names = [
            "page", "n", "access_token", "API-KEY", "monkey", "user.Session", "Sid", "sidekick", "signature", "SIGN", "passwd",
            "x.secret.y", "keys", "auth_", "_auth", "a-b-c", "", "%74oken", "token%20", "TOKEN", "pass.word", "session-id",
        ]
        for name in names {
            let query = "a=1&\(name)=v&b&c=="
            #expect(
                CredentialRedaction.mayHoldSensitiveName(query: query[...].utf8) == CredentialRedaction.isSensitive(name: name),
                "\(name)")
        }
        #expect(CredentialRedaction.mayHoldSensitiveName(query: "ключ=1"[...].utf8))
        // A path with other characters than ASCII takes the full check.
        #expect(CredentialRedaction.redactingQuery(inPath: "/ü?page=1&token=t") == "/ü?page=1&token=<redacted>")
        #expect(CredentialRedaction.redactingQuery(inPath: "/ü?page=1&n=2") == "/ü?page=1&n=2")
    }
}
