public import Foundation

/// What a load sends as its body, beside its params: an `Encodable` value, bytes with their
/// content type, a file, or a multipart form.
///
/// With a body, the load's params (and the service's common params) go into the query. Files —
/// given alone or as parts of a form — are read while the request is sent, a chunk at a time, so
/// a 1 GB upload costs the app kilobytes of memory, not a gigabyte.
///
/// For example:
///
/// ```swift
/// try await manager.load(body: .json(NewComment(text: "Nice flat")))
/// try await manager.load(body: .data(png, contentType: "image/png"))
///
/// var form = MultipartForm()
/// form.append("Balcony", name: "caption")
/// form.append(fileAt: photoURL, name: "photo", contentType: "image/jpeg")
/// let upload = engine.upload(PhotoUploadAPI(), body: .multipart(form))
/// for await progress in upload.progress { bar.progress = progress.fractionCompleted ?? 0 }
/// let response = try await upload.value
/// ```
public struct RequestBody: Sendable {
    enum Content: Sendable {
        case data(Data, contentType: String)
        case json(@Sendable (JSONEncoder) throws -> Data)
        case file(URL, contentType: String)
        case multipart(MultipartForm)
    }

    let content: Content

    /// `value` as JSON (`application/json`), encoded with the API's ``API/jsonEncoder``.
    public static func json<Value: Encodable & Sendable>(_ value: Value) -> RequestBody {
        RequestBody(content: .json { encoder in try encoder.encode(value) })
    }

    /// `data` as it is, with its content type.
    public static func data(_ data: Data, contentType: String) -> RequestBody {
        RequestBody(content: .data(data, contentType: contentType))
    }

    /// The file at `url` as the whole body, read while it is sent.
    public static func file(_ url: URL, contentType: String = "application/octet-stream") -> RequestBody {
        RequestBody(content: .file(url, contentType: contentType))
    }

    /// A `multipart/form-data` form, its files read while it is sent.
    public static func multipart(_ form: MultipartForm) -> RequestBody {
        RequestBody(content: .multipart(form))
    }

    /// The body's bytes and content type for `api`.
    ///
    /// - throws: ``RunwayError/paramsUnencodable(reason:)`` when the value cannot be encoded;
    ///   ``RunwayError/invalidRequest(reason:)`` when a file cannot be read.
    func prepared(for api: some API) throws(RunwayError) -> (body: TransportBody, contentType: String) {
        switch content {
        case .data(let data, let contentType):
            return (TransportBody(data), contentType)
        case .json(let encode):
            do {
                return (TransportBody(try encode(api.jsonEncoder)), "application/json")
            } catch {
                throw .paramsUnencodable(reason: "the body cannot be encoded as JSON: \(error)")
            }
        case .file(let url, let contentType):
            return (try TransportBody.file(url), contentType)
        case .multipart(let form):
            return (try form.makeBody(), form.contentType)
        }
    }
}
