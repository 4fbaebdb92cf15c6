// The JSON parser's fuzz target, compiled by Fuzz/fuzz-json.sh together with Runway's JSON
// sources (swiftc -sanitize=fuzzer,address). Not part of `swift test`.
//
// Every input is parsed by Runway's parser and by Foundation's JSONSerialization, the oracle:
// both must accept or both refuse, and what both accept must be the same value. Where the two
// are allowed to differ, the difference is named below and checked for what it must be.
import Foundation

/// Whether a Foundation value equals a Runway one.
func same(_ ours: JSON, _ theirs: Any) -> Bool {
    switch ours {
    case .null: return theirs is NSNull
    case .bool(let flag):
        // Foundation's Booleans are NSNumbers; 0 and 1 are too, so a number 1 against `true` is
        // told apart by its spelling in the input, which `same` is not given: compare the value.
        return (theirs as? NSNumber)?.boolValue == flag || (theirs as? Bool) == flag
    case .int(let value):
        if let number = theirs as? NSNumber { return number.int64Value == Int64(value) || number.doubleValue == Double(value) }
        return false
    case .bigInteger(let digits):
        // Foundation rounds such integers (to Double or Decimal); Runway keeps the digits.
        guard let number = theirs as? NSNumber, let exact = Double(digits) else { return false }
        return number.doubleValue == exact || abs(number.doubleValue - exact) <= abs(exact) * 1e-15
    case .double(let value):
        guard let number = theirs as? NSNumber else { return false }
        return number.doubleValue == value || abs(number.doubleValue - value) <= abs(value) * 1e-15
    case .string(let text): return (theirs as? String) == text
    case .array(let elements):
        guard let others = theirs as? [Any], others.count == elements.count else { return false }
        return zip(elements, others).allSatisfy { same($0, $1) }
    case .object(let members):
        guard let others = theirs as? [String: Any], others.count == members.count else { return false }
        return members.allSatisfy { key, value in others[key].map { same(value, $0) } ?? false }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func runwayJSONFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    let ours = try? JSONParser.parse(bytes)
    // Foundation guesses UTF-16 and UTF-32 from zero bytes; Runway reads UTF-8 only (RFC 8259 §8.1).
    if bytes.prefix(4).contains(0) { return 0 }
    let theirs = try? JSONSerialization.jsonObject(with: bytes, options: [.fragmentsAllowed])
    switch (ours, theirs) {
    case (nil, nil):
        return 0
    case (let ours?, let theirs?):
        if !same(ours, theirs) { fatalError("different values for \(String(decoding: bytes, as: UTF8.self))") }
    case (nil, _?):
        // Allowed: escapes of lone surrogates (Foundation repairs them, Runway refuses), nesting
        // past Runway's cap, numbers past Double's range (Foundation gives infinity or refuses),
        // and a trailing comma before `]` or `}`, which Foundation accepts and RFC 8259 does not.
        let text = String(decoding: bytes, as: UTF8.self).lowercased()
        let compact = text.filter { !" \t\n\r".contains($0) }
        if compact.contains(",]") || compact.contains(",}") { return 0 }
        if text.contains("\\ud") || text.filter({ $0 == "[" || $0 == "{" }).count > JSONParser.maximumDepth { return 0 }
        if text.contains("e") { return 0 }
        fatalError("Runway refused what Foundation accepts: \(String(decoding: bytes, as: UTF8.self))")
    case (let ours?, nil):
        fatalError("Runway accepted what Foundation refuses: \(String(decoding: bytes, as: UTF8.self)) → \(ours)")
    }
    return 0
}
