import Foundation
import RunwayTestSupport
import Testing
@testable import Runway

@Suite("JSON parsing and encoding", .timeLimit(.minutes(10)))
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

    @Test("a value limit stops the parse at the first value past it, not at the end of the text")
    func valueLimitStopsAtTheFirstValuePast() throws {
        // A million empty objects: the 1,001st value is the 1,000th element, at byte 1 + 999 × 3.
        let text = Data(("[" + Array(repeating: "{}", count: 1_000_000).joined(separator: ",") + "]").utf8)
        let limits = JSONParser.Limits(maximumNodes: 1_000)
        let failure = #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text, limits: limits) }
        #expect(failure?.exceeded == .nodes)
        #expect(failure?.offset == 1 + 999 * 3)
        // Exactly at the limit parses; member names are not values.
        let fits = Data(#"{"a":[1,2],"b":"x"}"#.utf8)
        #expect(try JSONParser.parse(fits, limits: .init(maximumNodes: 5)) == ["a": [1, 2], "b": "x"])
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(fits, limits: .init(maximumNodes: 4)) }
        // Syntax errors are not limits.
        #expect((#expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Data("[1,".utf8), limits: limits) })?.exceeded == nil)
    }

    @Test("an element limit holds only the named member of the top-level object, and stops before the element past it")
    func arrayMemberLimit() throws {
        let limits = JSONParser.Limits(maximumNodes: .max, arrayMember: ("events", 3))
        let over = Data(#"{"events":[1,2,3,4,5]}"#.utf8)
        let failure = #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(over, limits: limits) }
        #expect(failure?.exceeded == .arrayMember)
        #expect(failure?.offset == #"{"events":[1,2,3,"#.utf8.count)
        for text in [
            #"{"events":[1,2,3],"other":[1,2,3,4,5]}"#,  // another member
            #"{"events":[[1,2,3,4],{"x":[1,2,3,4]}]}"#,  // arrays inside the elements
            #"{"events":{"x":[1,2,3,4]}}"#,  // not an array: an array inside it is not held
            #"{"a":{"events":[1,2,3,4]}}"#,  // not the top-level object
            #"[{"events":[1,2,3,4]}]"#,
        ] {
            #expect(throws: Never.self, "\(text)") { try JSONParser.parse(Data(text.utf8), limits: limits) }
        }
    }

    @Test("the size lower bound never refuses what encodes within the limit, and is exact without escapes")
    func encodedSizeLowerBound() throws {
        let values: [JSON] = [
            nil, true, false, 0, -12345, 2.5, .bigInteger("123456789012345678901234567890"), "", "plain", "é\n\"q\"",
            [], [1, 2, 3], [:], ["a": 1, "bb": [true, nil]], ["k": ["n": ["deep": "x"]]],
            .array(Array(repeating: "xx", count: 100)),
        ]
        for value in values {
            let size = try value.encoded().count
            #expect(!value.encodingCertainlyExceeds(size), "\(value)")
        }
        // Without numbers or escapes the bound is the size itself.
        let exact: JSON = ["name": "tap", "list": ["a", "bc", true, nil], "o": [:]]
        let size = try exact.encoded().count
        #expect(exact.encodingCertainlyExceeds(size - 1))
        #expect(JSON.string(String(repeating: "x", count: 8 << 20)).encodingCertainlyExceeds(32 * 1024))
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

    @Test("whole doubles encode without a fraction below 10¹⁵ — past 2³¹ and 2³² too — and as Swift prints them from there")
    func wholeDoubles() throws {
        let values: [Double] = [0, -3, 2_147_483_648, 4_294_967_296, -4_294_967_297, 999_999_999_999_999, 1e15, 1e16, 2.5]
        let text = String(decoding: try JSON.array(values.map(JSON.double)).encoded(), as: UTF8.self)
        #expect(text == "[0,-3,2147483648,4294967296,-4294967297,999999999999999,1000000000000000.0,1e+16,2.5]")
        #expect(try JSONParser.parse(Data(text.utf8)).arrayValue?.compactMap(\.doubleValue) == values)
    }

    @Test("a leading UTF-8 byte order mark is ignored, as RFC 8259 allows")
    func byteOrderMark() throws {
        let json = try JSONParser.parse(Data([0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8)))
        #expect(json["a"] == 1)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Data([0xEF, 0xBB] + Array("1".utf8))) }
    }

    @Test("integers beyond Int keep every digit and encode back unchanged")
    func bigIntegers() throws {
        let text = #"{"id":18446744073709551615,"neg":-9223372036854775809,"huge":123456789012345678901234567890}"#
        let json = try JSONParser.parse(Data(text.utf8))
        #expect(json["id"] == .bigInteger("18446744073709551615"))
        #expect(json["id"]?.uint64Value == UInt64.max)
        #expect(json["neg"] == .bigInteger("-9223372036854775809"))
        #expect(json["huge"]?.scalarText == "123456789012345678901234567890")
        #expect(json["id"]?.intValue == nil)
        #expect(String(decoding: try json.encoded(), as: UTF8.self) == #"{"huge":123456789012345678901234567890,"id":18446744073709551615,"neg":-9223372036854775809}"#)
        #expect(try JSONParser.parse(Data("9223372036854775807".utf8)) == .int(Int.max))
        #expect(throws: JSON.EncodingFailure.self) { try JSON.bigInteger("12a").encoded() }
    }

    @Test("a string that starts with U+FEFF keeps it; \\u escapes give the same bytes as the raw text")
    func stringsKeepEveryScalar() throws {
        let raw = try JSONParser.parse(Data([0x22, 0xEF, 0xBB, 0xBF] + Array("x\"".utf8)))
        #expect(raw.stringValue?.unicodeScalars.first == "\u{FEFF}")
        let escaped = try JSONParser.parse(Data(#""\ufeffx\u00e9\u4e2d\ud83d\ude00""#.utf8))
        #expect(escaped.stringValue == "\u{FEFF}xé中😀")
    }

    @Test("the UTF-8 validator of older systems agrees with the standard library on every sequence it is shown")
    func validatorAgrees() {
        var samples: [[UInt8]] = [
            [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x98, 0x80],
            [0xE4, 0xB8, 0xAD], [0xC3, 0xA9], [0x80], [0xFF], [0xE4, 0xB8], [0x41],
        ]
        var state: UInt64 = 42
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<(Int(state % 6) + 1) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 33) | (state & 1 == 0 ? 0x80 : 0))
            }
            samples.append(bytes)
        }
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else { return }
        for bytes in samples {
            #expect(UTF8Validation.isValid(bytes) == (String(validating: bytes, as: UTF8.self) != nil), "\(bytes)")
        }
    }
}
