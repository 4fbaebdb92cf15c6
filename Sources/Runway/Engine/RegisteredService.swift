import Foundation

/// A registered service with its base URL parsed once, not on every request.
struct RegisteredService: Sendable {
    let service: Service
    let baseURL: Result<RequestBuilder.BaseURL, RunwayError>

    init(_ service: Service) {
        self.service = service
        self.baseURL = Result { () throws(RunwayError) in try RequestBuilder.baseURL(of: service) }
    }
}
