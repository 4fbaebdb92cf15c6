public import Foundation

/// A `multipart/form-data` form (RFC 7578): text fields, bytes and files, in order.
///
/// Files are not read when they are appended: their size is read when the request is built and
/// their bytes while it is sent.
///
/// For example:
///
/// ```swift
/// var form = MultipartForm()
/// form.append("Balcony", name: "caption")
/// form.append(fileAt: photoURL, name: "photo", contentType: "image/jpeg")
/// let response = try await manager.load(body: .multipart(form))
/// ```
public struct MultipartForm: Sendable {
    private enum Content: Sendable {
        case bytes(Data)
        case file(URL)
    }

    private struct Part: Sendable {
        var name: String
        var filename: String?
        var contentType: String?
        var content: Content
    }

    /// The boundary between parts; random unless given.
    public let boundary: String
    private var parts: [Part] = []

    /// Creates an empty form.
    ///
    /// - parameter boundary: The boundary line's text (1–70 characters of RFC 2046's set);
    ///   random by default, which is what keeps it out of the parts' bytes.
    public init(boundary: String? = nil) {
        self.boundary = boundary ?? "runway-\(UUID().uuidString.lowercased())"
    }

    /// The `Content-Type` header field value of the form.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Appends a text field.
    public mutating func append(_ value: String, name: String) {
        parts.append(Part(name: name, content: .bytes(Data(value.utf8))))
    }

    /// Appends bytes, as a file part when `filename` is given.
    public mutating func append(_ data: Data, name: String, filename: String? = nil, contentType: String? = nil) {
        parts.append(
            Part(name: name, filename: filename, contentType: contentType ?? "application/octet-stream", content: .bytes(data)))
    }

    /// Appends the file at `url` as a file part, named by `filename` (default: the file's name).
    public mutating func append(
        fileAt url: URL, name: String, filename: String? = nil, contentType: String = "application/octet-stream"
    ) {
        parts.append(
            Part(name: name, filename: filename ?? url.lastPathComponent, contentType: contentType, content: .file(url)))
    }

    /// The form as a body: each part's header as bytes, each file as a piece read while sending
    /// (its size is read now).
    ///
    /// - throws: ``RunwayError/invalidRequest(reason:)`` when the boundary is not valid or a file
    ///   cannot be read.
    public func makeBody() throws(RunwayError) -> TransportBody {
        guard Self.isValidBoundary(boundary) else {
            throw .invalidRequest(reason: "the multipart boundary \"\(boundary)\" is not 1–70 allowed characters")
        }
        var segments: [TransportBody.Segment] = []
        var pending = Data()
        for part in parts {
            var header = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escaped(part.name))\""
            if let filename = part.filename { header += "; filename=\"\(Self.escaped(filename))\"" }
            header += "\r\n"
            if let contentType = part.contentType {
                guard !contentType.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                    throw .invalidRequest(reason: "the content type of part \"\(part.name)\" holds a line break")
                }
                header += "Content-Type: \(contentType)\r\n"
            }
            header += "\r\n"
            pending.append(Data(header.utf8))
            switch part.content {
            case .bytes(let data):
                pending.append(data)
            case .file(let url):
                segments.append(.bytes(pending))
                pending = Data()
                segments.append(.file(url, length: try TransportBody.fileLength(url)))
            }
            pending.append(Data("\r\n".utf8))
        }
        pending.append(Data("--\(boundary)--\r\n".utf8))
        segments.append(.bytes(pending))
        return TransportBody(segments: segments)
    }

    /// A name or file name inside quotes, as the HTML standard writes it: `"`, CR and LF
    /// percent-encoded, so no value can end the quoted text or the header line.
    static func escaped(_ text: String) -> String {
        var output = ""
        for character in text {
            switch character {
            case "\"": output += "%22"
            case "\r": output += "%0D"
            case "\n": output += "%0A"
            case "\r\n": output += "%0D%0A"
            default: output.append(character)
            }
        }
        return output
    }

    /// RFC 2046: 1–70 characters from its set, not ending in a space.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'()+_,-./:=? ")
        return (1...70).contains(boundary.count) && boundary.allSatisfy(allowed.contains) && boundary.last != " "
    }
}
