import HTTPTypes
@testable import Runway
import Testing

/// `HTTPFields.value(of:)` reads a name as the subscript does, without its generic join: the
/// engine's reads of a response's fields rely on it.
@Suite("Reading a header field's value", .timeLimit(.minutes(1)))
struct HTTPFieldsValueTests {
    @Test("Absent, one field, several fields in order, Cookie joined by \"; \": each as the subscript reads it")
    func readsAsTheSubscript() throws {
        let custom = try #require(HTTPField.Name("X-Part"))
        var fields = HTTPFields()
        fields.append(HTTPField(name: .contentLength, value: "2400"))
        fields.append(HTTPField(name: .contentEncoding, value: "gzip"))
        fields.append(HTTPField(name: .contentType, value: "application/json"))
        fields.append(HTTPField(name: .contentEncoding, value: "br"))
        fields.append(HTTPField(name: custom, value: ""))
        fields.append(HTTPField(name: custom, value: "b"))
        fields[.cookie] = "a=1; b=2"
        let names: [HTTPField.Name] = [.contentLength, .contentEncoding, .cookie, custom, .location, .retryAfter]
        for name in names {
            #expect(fields.value(of: name) == fields[name], "\(name)")
        }
        #expect(fields.value(of: .contentEncoding) == "gzip, br")
        #expect(fields.value(of: .cookie) == "a=1; b=2")
        #expect(fields.value(of: custom) == ", b")
        #expect(fields.value(of: .location) == nil)
        // Names are matched as HTTP matches them: whatever case they were written in.
        let mixed = try #require(HTTPField.Name("Content-LENGTH"))
        #expect(fields.value(of: mixed) == "2400")
    }
}
