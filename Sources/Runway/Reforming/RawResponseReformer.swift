/// The reformer that hands back the response as it landed: what an API is read with when it
/// declares no ``API/defaultReformer``.
///
/// Ask for it by name to get the raw response of an API that does declare one:
///
/// ```swift
/// let raw = try await manager.load(reformedBy: .rawResponse)
/// ```
public struct RawResponseReformer: Reformer {
    /// Creates the reformer.
    public init() {}

    public func reform(_ response: RawResponse) -> RawResponse { response }
}

extension Reformer where Self == RawResponseReformer {
    /// The response as it landed, unreformed.
    public static var rawResponse: RawResponseReformer { RawResponseReformer() }
}

extension Reformer {
    /// A reformer that decodes `type` from the body bytes: `.decoding(Profile.self)`.
    public static func decoding<Output: Decodable & Sendable>(_ type: Output.Type) -> DecodingReformer<Output>
    where Self == DecodingReformer<Output> {
        DecodingReformer(type)
    }
}
