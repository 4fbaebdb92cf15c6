import Foundation

/// A typed value captured from a URL.
public enum ParameterValue: Sendable, Hashable {
    case string(String)
    case integer(Int)
    case date(Date)
    case uuid(UUID)

    public var string: String? { if case .string(let value) = self { return value }; return nil }
    public var integer: Int? { if case .integer(let value) = self { return value }; return nil }
    public var date: Date? { if case .date(let value) = self { return value }; return nil }
    public var uuid: UUID? { if case .uuid(let value) = self { return value }; return nil }
}

/// Turns one decoded URL part into a typed value, or refuses it. A route matches only when every
/// converter accepts its part.
public struct ParameterConverter: Sendable {
    let convert: @Sendable (String) -> ParameterValue?

    public init(_ convert: @escaping @Sendable (String) -> ParameterValue?) { self.convert = convert }

    /// Text of `length` characters, every scalar in `allowed` (default: letters, digits,
    /// punctuation, symbols and spaces — no controls, no separators other than the space).
    public static func string(length: ClosedRange<Int> = 1...256, allowed: CharacterSet? = nil) -> ParameterConverter {
        let set = allowed ?? CharacterSet.alphanumerics.union(.punctuationCharacters).union(.symbols).union(CharacterSet(charactersIn: " "))
        return ParameterConverter { text in
            guard length.contains(text.count), text.unicodeScalars.allSatisfy(set.contains) else { return nil }
            return .string(text)
        }
    }

    /// An integer in `range`: optional `-`, then 1 to 18 ASCII digits; no `+`, no spaces.
    public static func integer(_ range: ClosedRange<Int>) -> ParameterConverter {
        ParameterConverter { text in
            let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
            guard (1...18).contains(digits.count), digits.allSatisfy(\.isASCIIDigit), let value = Int(text), range.contains(value)
            else { return nil }
            return .integer(value)
        }
    }

    /// One of `values`, exactly (or ignoring case).
    public static func enumeration(_ values: Set<String>, ignoringCase: Bool = false) -> ParameterConverter {
        let lowered = Set(values.map { $0.lowercased() })
        return ParameterConverter { text in
            if values.contains(text) { return .string(text) }
            if ignoringCase, lowered.contains(text.lowercased()) { return .string(text.lowercased()) }
            return nil
        }
    }

    /// A date in `format` (a fixed-width, digits-only pattern such as `yyyyMMddHHmm`), read with
    /// an explicit calendar and time zone. The text must have exactly the format's length and be
    /// all digits, and must format back to itself: month 13, 31 June or hour 24 are refused,
    /// never rolled over.
    public static func date(format: String, calendar: Calendar, timeZone: TimeZone) -> ParameterConverter {
        ParameterConverter { text in
            guard text.count == format.count, text.allSatisfy(\.isASCIIDigit) else { return nil }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.calendar = calendar
            formatter.timeZone = timeZone
            formatter.dateFormat = format
            formatter.isLenient = false
            guard let date = formatter.date(from: text), formatter.string(from: date) == text else { return nil }
            return .date(date)
        }
    }

    /// A UUID in its canonical 36-character form.
    public static let uuid = ParameterConverter { text in
        guard text.count == 36, let value = UUID(uuidString: text) else { return nil }
        return .uuid(value)
    }

    /// The exact text `literal`, giving `value`.
    public static func literal(_ literal: String, value: ParameterValue) -> ParameterConverter {
        ParameterConverter { $0 == literal ? value : nil }
    }

    /// The first of `converters` that accepts the text.
    public static func oneOf(_ converters: [ParameterConverter]) -> ParameterConverter {
        ParameterConverter { text in
            for converter in converters { if let value = converter.convert(text) { return value } }
            return nil
        }
    }
}
