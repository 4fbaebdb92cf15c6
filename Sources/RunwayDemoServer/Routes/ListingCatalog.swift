import Foundation

/// The demo's house listings: three kinds whose items carry the same facts under different keys,
/// as the three listing APIs of a property app do (second-hand homes `esf_…`, rentals `zf_…`,
/// new homes `xf_…`).
public enum ListingKind: String, CaseIterable, Sendable {
    /// Second-hand homes.
    case secondHand = "esf"
    /// Rentals.
    case rental = "zf"
    /// New homes.
    case newHome = "xf"

    /// The key prefix of this kind's items.
    public var prefix: String { rawValue }
}

/// The facts of one listing, the same for every kind.
struct Listing: Sendable {
    var id: Int
    var name: String
    var title: String
    var price: Int
    var latitude: Double
    var longitude: Double

    /// The listing as its kind's API spells it.
    func json(as kind: ListingKind) -> [String: Any] {
        let p = kind.prefix
        return [
            "\(p)_id": id, "\(p)_name": name, "\(p)_title": title, "\(p)_price": price,
            "\(p)_lat": latitude, "\(p)_lng": longitude,
        ]
    }
}

/// Deterministic listings for each kind, so tests and the demo see the same data every run.
struct ListingCatalog: Sendable {
    static let countPerKind = 45
    static let districts = ["Jing'an", "Xuhui", "Pudong", "Changning", "Hongkou"]

    let listings: [ListingKind: [Listing]]

    init() {
        var listings: [ListingKind: [Listing]] = [:]
        for (kindIndex, kind) in ListingKind.allCases.enumerated() {
            listings[kind] = (1...Self.countPerKind).map { number in
                let district = Self.districts[(number + kindIndex) % Self.districts.count]
                let base = kindIndex * 1000 + number
                return Listing(
                    id: base,
                    name: "\(district) \(kind == .rental ? "Flat" : "Residence") \(number)",
                    title: "\(number % 3 + 1) bed, \(50 + number * 3) m²",
                    price: kind == .rental ? 3000 + number * 150 : 2_000_000 + number * 75_000,
                    latitude: 31.2 + Double(number) / 1000,
                    longitude: 121.4 + Double(kindIndex * 10 + number) / 1000
                )
            }
        }
        self.listings = listings
    }

    /// One page of `kind`, numbered from 1.
    func page(_ kind: ListingKind, number: Int, size: Int) -> (items: [Listing], total: Int, hasMore: Bool) {
        let all = listings[kind] ?? []
        let start = max(0, (number - 1) * size)
        guard start < all.count else { return ([], all.count, false) }
        let end = min(all.count, start + size)
        return (Array(all[start..<end]), all.count, end < all.count)
    }

    func listing(_ kind: ListingKind, id: Int) -> Listing? {
        listings[kind]?.first { $0.id == id }
    }
}
