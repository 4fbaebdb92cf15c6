import Foundation

/// A registered service with its base URL parsed once, not on every request.
///
/// A class: every load reads it from the engine's table and hands it down the whole path, and
/// a reference is copied with one retain where `Service`'s fields would each need their own.
final class RegisteredService: Sendable {
    let service: Service
    let baseURL: Result<RequestBuilder.BaseURL, RunwayError>

    init(_ service: Service) {
        self.service = service
        self.baseURL = Result { () throws(RunwayError) in try RequestBuilder.baseURL(of: service) }
    }
}
