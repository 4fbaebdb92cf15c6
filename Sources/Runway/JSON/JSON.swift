/// A JSON value: the raw data a manager keeps and reformers read.
///
/// `JSON` is a `Sendable` value type, so a parsed response can cross from the engine (where it is
/// parsed, off the main actor) to the manager and to reformers without copying into
/// `[String: Any]`. Integers and floating-point numbers stay distinct, so 64-bit identifiers keep
/// every digit.
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

    /// The number as a `Double`, when this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
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
        case .double(let value): return value.isFinite ? JSON.format(value) : nil
        case .bool(let value): return value ? "true" : "false"
        case .null, .array, .object: return nil
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
