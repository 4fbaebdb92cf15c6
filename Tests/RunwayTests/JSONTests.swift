import Foundation
import Testing
@testable import Runway

@Suite("JSON parsing and encoding")
struct JSONTests {
    @Test("parses every JSON type, keeping integers and doubles apart")
    func parsesAllTypes() throws {
        let json = try JSONParser.parse(Data(#"{"a":[1,-2.5,true,false,null,"x"],"big":9007199254740993,"e":1e3}"#.utf8))
        #expect(json["a"] == [1, -2.5, true, false, nil, "x"])
        #expect(json["big"] == .int(9_007_199_254_740_993))
        #expect(json["e"] == .double(1000))
        #expect(json["e"]?.intValue == 1000)
    }

    @Test("decodes escapes, including surrogate pairs")
    func decodesEscapes() throws {
        let json = try JSONParser.parse(Data(#""line\n\"quoted\" \u00e9 \ud83d\ude00 \/""#.utf8))
        #expect(json == .string("line\n\"quoted\" é 😀 /"))
    }

    @Test(
        "refuses malformed input with a reason",
        arguments: [
            "", "{", "[1,]", "{\"a\" 1}", "tru", "01", "1.", "-", "\"\\x\"", "\"\u{01}\"", "{} x", "\"\\ud800\"",
            "<html>not json</html>", "1e999",
        ])
    func refusesMalformed(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Data(text.utf8)) }
    }

    @Test("refuses invalid UTF-8 inside strings")
    func refusesInvalidUTF8() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Data([0x22, 0xC0, 0xAF, 0x22])) }
    }

    @Test("refuses nesting deeper than the cap instead of overflowing the stack")
    func capsDepth() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Data(deep.utf8)) }
        let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect(throws: Never.self) { try JSONParser.parse(Data(fine.utf8)) }
    }

    @Test("encodes with sorted keys and round-trips through the parser")
    func encodesSorted() throws {
        let value: JSON = ["b": [1, 2.5, "t\"x\n"], "a": nil, "c": ["z": true, "y": false]]
        let text = String(decoding: try value.encoded(), as: UTF8.self)
        #expect(text == #"{"a":null,"b":[1,2.5,"t\"x\n"],"c":{"y":false,"z":true}}"#)
        let reparsed = try JSONParser.parse(try value.encoded())
        #expect(reparsed == value)
    }

    @Test("refuses to encode non-finite numbers")
    func refusesNaN() {
        #expect(throws: JSON.EncodingFailure.self) { try JSON.array([.double(.nan)]).encoded() }
        #expect(throws: JSON.EncodingFailure.self) { try JSON.double(.infinity).encoded() }
    }
}
