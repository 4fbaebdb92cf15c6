import Foundation
import HTTPTypes

/// The directives of a response's `Cache-Control` (RFC 9111 §5.2.2, RFC 5861) that a private
/// cache acts on.
///
/// A server's answer is input: directives are matched without regard to case, a value may be
/// quoted, an unknown directive or a malformed number is ignored (a malformed `max-age` is
/// treated as `0`, the safe reading RFC 9111 §4.2.1 asks for), and numbers too large for the
/// clock are capped instead of trapping. Several `Cache-Control` fields read as one list.
struct CacheControl: Equatable, Sendable {
    /// Never kept, in any tier.
    var noStore = false
    /// Kept, but used only after the server confirmed it (revalidation on every use).
    var noCache = false
    /// Once stale, never used without revalidation: not offline, not on an error.
    var mustRevalidate = false
    /// For one user only; Runway's cache is always one user's (entries are kept apart per
    /// credential), so it changes nothing here.
    var isPrivate = false
    /// The freshness lifetime the server gives, in seconds.
    var maxAge: Int?
    /// How long after going stale the entry may answer while it is refreshed in the background.
    var staleWhileRevalidate: Int?
    /// How long after going stale the entry may answer when the server fails.
    var staleIfError: Int?

    /// A bound on any number of seconds a server sends: ten years.
    static let longest = 10 * 365 * 86_400

    init() {}

    /// Reads every `Cache-Control` field of `fields`.
    init(_ fields: HTTPFields) {
        for value in fields[values: .cacheControl] {
            for directive in Self.directives(in: value) { apply(directive.name, directive.value) }
        }
    }

    private mutating func apply(_ name: Substring, _ value: Substring?) {
        switch name.lowercased() {
        case "no-store": noStore = true
        case "no-cache": noCache = true
        case "must-revalidate", "proxy-revalidate": mustRevalidate = true
        case "private": isPrivate = true
        case "max-age": maxAge = Self.seconds(value) ?? 0
        case "stale-while-revalidate": staleWhileRevalidate = Self.seconds(value)
        case "stale-if-error": staleIfError = Self.seconds(value)
        default: break
        }
    }

    /// A delta-seconds value (RFC 9111 §1.2.2): digits only, capped at ``longest``.
    static func seconds(_ text: Substring?) -> Int? {
        guard let text, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        // More digits than any bound needs: the cap, without a conversion that could overflow.
        guard text.utf8.count <= 12, let value = Int(text) else { return longest }
        return min(value, longest)
    }

    /// The comma-separated directives of one field value, each `name` or `name=value`, a quoted
    /// value unquoted (commas inside quotes do not split).
    static func directives(in value: String) -> [(name: Substring, value: Substring?)] {
        var result: [(Substring, Substring?)] = []
        var start = value.startIndex
        var inQuotes = false
        var index = value.startIndex
        func take(_ end: String.Index) {
            let part = value[start..<end].trimmingCharacters(in: .whitespaces)
            guard !part.isEmpty else { return }
            let text = Substring(part)
            if let equals = text.firstIndex(of: "=") {
                var argument = text[text.index(after: equals)...].trimmingCharacters(in: .whitespaces)[...]
                if argument.count >= 2, argument.first == "\"", argument.last == "\"" {
                    argument = argument.dropFirst().dropLast()
                }
                result.append((Substring(text[..<equals].trimmingCharacters(in: .whitespaces)), argument))
            } else {
                result.append((text, nil))
            }
        }
        while index < value.endIndex {
            let character = value[index]
            if character == "\"" { inQuotes.toggle() }
            if character == ",", !inQuotes {
                take(index)
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        take(value.endIndex)
        return result
    }
}
