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
}
