import Foundation

extension Dictionary where Key == String, Value == JSON {
    /// The params an `Encodable` value encodes to: each member of its top-level object is one
    /// param, so a typed query (`SearchQuery(city: "sh", page: 2)`) goes where ``Parameters``
    /// go — into the query or the body per the API's ``ParamEncoding`` — and is validated and
    /// keyed in the cache exactly like them. A `nil` optional member is left out, as
    /// `JSONEncoder` leaves it.
    ///
    /// - parameters:
    ///   - value: The params as a value; it must encode to a JSON object.
    ///   - encoder: How to encode it (dates, keys); the API's ``API/jsonEncoder`` on the
    ///     manager's and engine's `Encodable` overloads.
    /// - throws: ``RunwayError/paramsInvalid(reason:)`` when the value does not encode, or does
    ///   not encode to an object of named params.
    public init(encoding value: some Encodable, with encoder: JSONEncoder = JSONEncoder()) throws(RunwayError) {
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw .paramsInvalid(reason: "\(type(of: value)) could not be encoded as params: \(error)")
        }
        guard let object = (try? JSON(parsing: data))?.objectValue else {
            throw .paramsInvalid(reason: "\(type(of: value)) does not encode to an object of named params")
        }
        self = object
    }
}
