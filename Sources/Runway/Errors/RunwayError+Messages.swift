import Foundation

extension RunwayError {
    /// A sentence for people, in English or Simplified Chinese.
    ///
    /// The texts live in the package's `Localizable.strings` resources, so an app can read them
    /// in the user's language.
    ///
    /// - parameter language: A localization name: `"en"` or `"zh-Hans"`. Other names fall back
    ///   to English.
    public func localizedMessage(language: String = "en") -> String {
        let table = MessageTable.table(for: language)
        let template = table[messageKey] ?? MessageTable.table(for: "en")[messageKey] ?? messageKey
        return template.replacingOccurrences(of: "%@", with: messageArgument)
    }

    /// The key of this case in `Localizable.strings`.
    var messageKey: String {
        switch self {
        case .paramsInvalid: return "error.paramsInvalid"
        case .paramsUnencodable: return "error.paramsUnencodable"
        case .invalidRequest: return "error.invalidRequest"
        case .vetoed: return "error.vetoed"
        case .httpStatus: return "error.httpStatus"
        case .business: return "error.business"
        case .invalidResponse: return "error.invalidResponse"
        case .noContent: return "error.noContent"
        case .timeout: return "error.timeout"
        case .noNetwork(.connectionRefused): return "error.noNetwork.connectionRefused"
        case .noNetwork(.unreachable): return "error.noNetwork.unreachable"
        case .noNetwork(.dnsFailure): return "error.noNetwork.dnsFailure"
        case .connectionLost: return "error.connectionLost"
        case .cancelled: return "error.cancelled"
        case .insecureConnection: return "error.insecureConnection"
        case .pinningFailed: return "error.pinningFailed"
        case .tlsFailure: return "error.tlsFailure"
        case .redirectRefused: return "error.redirectRefused"
        case .unauthenticated: return "error.unauthenticated"
        case .userChanged: return "error.userChanged"
        case .transport: return "error.transport"
        case .service: return "error.service"
        }
    }

    /// The detail substituted for `%@` in the template.
    private var messageArgument: String {
        switch self {
        case .paramsInvalid(let reason), .paramsUnencodable(let reason), .invalidRequest(let reason),
            .vetoed(let reason), .invalidResponse(let reason):
            return reason
        case .httpStatus(let code, _): return String(code)
        case .business(let code, let message): return "\(message) (\(code))"
        case .transport(let description): return description
        case .insecureConnection(let host), .pinningFailed(let host): return host
        case .tlsFailure(let reason), .unauthenticated(let reason): return reason
        case .redirectRefused(_, let reason): return reason
        case .service(let failure): return failure.message
        case .noContent, .timeout, .noNetwork, .connectionLost, .cancelled, .userChanged: return ""
        }
    }
}

extension RunwayError: LocalizedError {
    /// The English message; use ``localizedMessage(language:)`` for another language.
    public var errorDescription: String? { localizedMessage() }
}

extension RunwayError: CustomStringConvertible {
    /// The case and its English message, for logs. A response body is summarised by its size,
    /// never printed.
    public var description: String {
        switch self {
        case .httpStatus(let code, let body): return "httpStatus(\(code), \(body.count) bytes)"
        default: return localizedMessage()
        }
    }
}

/// The message tables read from the package resources, loaded once per language.
enum MessageTable {
    private static let tables = Locked<[String: [String: String]]>([:])

    static func table(for language: String) -> [String: String] {
        if let cached = tables.withLock({ $0[language] }) { return cached }
        let loaded = load(language)
        tables.withLock { $0[language] = loaded }
        return loaded
    }

    private static func load(_ language: String) -> [String: String] {
        let bundle = Bundle.module
        // SwiftPM writes localization folders lowercased on some platforms (`zh-hans.lproj`).
        var found: URL?
        for name in [language, language.lowercased()] where found == nil {
            found =
                bundle.url(forResource: "Localizable", withExtension: "strings", subdirectory: nil, localization: name)
                ?? bundle.url(forResource: "Localizable", withExtension: "strings", subdirectory: "\(name).lproj")
        }
        guard let url = found, let data = try? Data(contentsOf: url),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil),
            let strings = plist as? [String: String]
        else { return [:] }
        return strings
    }
}
