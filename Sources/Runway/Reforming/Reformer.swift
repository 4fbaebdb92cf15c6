import Foundation

/// Turns a manager's raw response into exactly what one view needs, in one pass.
///
/// The raw data stays in the manager; each view gets it through its own reformer. One API can
/// feed many views (one reformer each: a list and a map of the same listings), and many APIs can
/// feed one view (one reformer normalising their different keys). A reformer is a small
/// `Sendable` value; it runs off the main actor.
///
/// For example, one reformer for three listing APIs with different keys:
///
/// ```swift
/// struct ListingRowsReformer: Reformer {
///     func reform(_ response: RawResponse) throws -> [ListingRow] {
///         let prefix = response.api is RentalListAPI ? "zf" : "esf"
///         return (response.payload?["items"]?.arrayValue ?? []).compactMap { item in
///             ListingRow(id: item["\(prefix)_id"]?.intValue, title: item["\(prefix)_title"]?.stringValue)
///         }
///     }
/// }
/// ```
public protocol Reformer<Output>: Sendable {
    /// What the view receives.
    associatedtype Output: Sendable

    /// Makes the view's data from `response`.
    ///
    /// - throws: Any error when the response does not have the expected shape; the manager
    ///   reports it as ``RunwayError/invalidResponse(reason:)``.
    func reform(_ response: RawResponse) throws -> Output
}

/// A reformer that decodes a reformer-local `Decodable` straight from the body bytes.
///
/// The fastest path for large lists (one `JSONDecoder` pass into the small struct the view
/// needs). Pair it with ``ResponseFormat/raw`` so that the body is not also parsed into a tree.
public struct DecodingReformer<Output: Decodable & Sendable>: Reformer {
    /// Creates the reformer.
    public init(_ type: Output.Type = Output.self) {}

    public func reform(_ response: RawResponse) throws -> Output {
        try JSONDecoder().decode(Output.self, from: response.body)
    }
}
