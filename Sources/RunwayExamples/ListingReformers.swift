public import Runway

/// One row of the listing table: the same shape whichever API it came from.
public struct ListingRow: Sendable, Hashable {
    public var kind: String
    public var id: Int
    public var name: String
    public var title: String
    public var price: Int

    public init(kind: String, id: Int, name: String, title: String, price: Int) {
        self.kind = kind
        self.id = id
        self.name = name
        self.title = title
        self.price = price
    }
}

/// Normalises the three listing APIs' different keys into one row type: one reformer for
/// many APIs, as a listing view needs.
public struct ListingRowsReformer: Reformer {
    public init() {}

    public func reform(_ response: RawResponse) throws -> [ListingRow] {
        guard let api = response.api as? any ListingAPI else {
            throw ValidationFailure("\(response.api.name) is not a listing API")
        }
        let p = api.keyPrefix
        guard let items = response.payload?["items"]?.arrayValue else {
            throw ValidationFailure("the listing has no items")
        }
        return items.compactMap { item in
            guard let id = item["\(p)_id"]?.intValue, let name = item["\(p)_name"]?.stringValue,
                let title = item["\(p)_title"]?.stringValue, let price = item["\(p)_price"]?.intValue
            else { return nil }
            return ListingRow(kind: p, id: id, name: name, title: title, price: price)
        }
    }
}

/// A map pin: the same listings, shaped for a map view.
public struct MapPin: Sendable, Hashable {
    public var label: String
    public var latitude: Double
    public var longitude: Double

    public init(label: String, latitude: Double, longitude: Double) {
        self.label = label
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Shapes any listing API's data as map pins: a second view of the same raw data.
public struct MapPinReformer: Reformer {
    public init() {}

    public func reform(_ response: RawResponse) throws -> [MapPin] {
        guard let api = response.api as? any ListingAPI else {
            throw ValidationFailure("\(response.api.name) is not a listing API")
        }
        let p = api.keyPrefix
        return (response.payload?["items"]?.arrayValue ?? []).compactMap { item in
            guard let name = item["\(p)_name"]?.stringValue, let lat = item["\(p)_lat"]?.doubleValue,
                let lng = item["\(p)_lng"]?.doubleValue
            else { return nil }
            return MapPin(label: name, latitude: lat, longitude: lng)
        }
    }
}
