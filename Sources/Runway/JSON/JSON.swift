/// A JSON value: the raw data a manager keeps and reformers read.
///
/// `JSON` is a `Sendable` value type, so a parsed response can cross from the engine (where it is
/// parsed, off the main actor) to the manager and to reformers without copying into
/// `[String: Any]`. Integers and floating-point numbers stay distinct, so identifiers keep every
/// digit: integers that do not fit `Int` (an unsigned 64-bit id, say) are kept as their exact
/// digits in ``bigInteger(_:)``, never rounded through `Double`.
///
/// For example:
///
/// ```swift
/// let json: JSON = ["city": "shanghai", "page": 1, "tags": ["new", "metro"]]
/// json["city"]?.stringValue   // "shanghai"
/// json["tags"]?[1]?.stringValue // "metro"
/// ```
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    /// An integer outside `Int`'s range, as its exact decimal digits (with a leading `-` when
    /// negative), as it arrived.
    case bigInteger(String)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])
}

// MARK: - Reading

extension JSON {
    /// The member named `key` when this is an object; `nil` otherwise.
    public subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index` when this is an array and the index is in range; `nil` otherwise.
    public subscript(index: Int) -> JSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, when this is an integer or a floating-point number with no fraction.
    public var intValue: Int? {
        switch self {
        case .int(let value): return value
        case .double(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// The number as a `Double`, when this is a number (a big integer rounded to the nearest).
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .bigInteger(let digits): return Double(digits)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The integer as a `UInt64`, when this is an integer in its range: unsigned 64-bit
    /// identifiers above `Int.max` included.
    public var uint64Value: UInt64? {
        switch self {
        case .int(let value): return UInt64(exactly: value)
        case .bigInteger(let digits): return UInt64(digits)
        default: return nil
        }
    }

    /// The Boolean, when this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, when this is an object.
    public var objectValue: [String: JSON]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value as text for a query string or a form: strings as they are, numbers and Booleans
    /// in their JSON spelling; `nil` for `null`, arrays and objects.
    public var scalarText: String? {
        switch self {
        case .string(let value): return value
        case .int(let value): return String(value)
        case .bigInteger(let digits): return digits
        case .double(let value): return value.isFinite ? JSON.format(value) : nil
        case .bool(let value): return value ? "true" : "false"
        case .null, .array, .object: return nil
        }
    }
}

// MARK: - Memory

extension JSON {
    /// About how many bytes the value holds in memory: each value's slot, strings' storage,
    /// and arrays' and dictionaries' buffers. The memory tier counts it against its cost limit.
    var approximateMemoryCost: Int {
        let slot = MemoryLayout<JSON>.stride
        switch self {
        case .null, .bool, .int, .double: return slot
        case .string(let text): return slot + (text.utf8.count > 15 ? 32 + text.utf8.count : 0)
        case .bigInteger(let digits): return slot + 32 + digits.utf8.count
        case .array(let elements):
            return slot + 32 + elements.reduce(0) { $0 + $1.approximateMemoryCost }
        case .object(let members):
            // A dictionary keeps about a third of its buckets free, and a key is a String slot.
            let buckets = members.count + members.count / 3
            return slot + 48 + buckets * MemoryLayout<String>.stride
                + members.reduce(0) { total, member in
                    total + (member.key.utf8.count > 15 ? 32 + member.key.utf8.count : 0) + member.value.approximateMemoryCost
                }
        }
    }
}

// MARK: - Literals

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
