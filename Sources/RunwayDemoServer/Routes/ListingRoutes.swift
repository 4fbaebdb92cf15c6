import Foundation
import Hummingbird
import RunwayServer

/// The demo's listing APIs: `GET /listings/{esf|zf|xf}?page=&page_size=&city=` and
/// `GET /listings/{kind}/{id}`, answered in the `{"code":0,"data":…}` envelope.
///
/// `city=atlantis` answers business error 1001, as a real service refuses a city it does not
/// serve.
enum ListingRoutes {
    static func add(to router: some RouterMethods<ServerRequestContext>, catalog: ListingCatalog, probe: ServerProbe) {
        router.get("/listings/:kind") { request, context -> Response in
            guard let kind = context.parameters.get("kind").flatMap(ListingKind.init(rawValue:)) else {
                return JSONResponse.html("No such listing", status: .notFound)
            }
            probe.record("/listings/\(kind.rawValue)")
            let query = request.uri.queryParameters
            if query["city"].map(String.init) == "atlantis" {
                return JSONResponse.businessError(code: 1001, message: "city not served")
            }
            guard let page = Int(query["page"].map(String.init) ?? "1"), page >= 1,
                let size = Int(query["page_size"].map(String.init) ?? "20"), (1...100).contains(size)
            else {
                return JSONResponse.businessError(code: 1002, message: "page and page_size must be positive")
            }
            let result = catalog.page(kind, number: page, size: size)
            return JSONResponse.success([
                "items": result.items.map { $0.json(as: kind) },
                "page": page, "page_size": size, "total": result.total, "has_more": result.hasMore,
            ])
        }
        router.get("/listings/:kind/:id") { _, context -> Response in
            guard let kind = context.parameters.get("kind").flatMap(ListingKind.init(rawValue:)),
                let id = context.parameters.get("id").flatMap(Int.init),
                let listing = catalog.listing(kind, id: id)
            else {
                return JSONResponse.businessError(code: 1004, message: "listing not found")
            }
            probe.record("/listings/detail")
            var detail = listing.json(as: kind)
            detail["\(kind.prefix)_description"] = "A bright home in \(listing.name), close to the metro."
            return JSONResponse.success(detail)
        }
    }
}
