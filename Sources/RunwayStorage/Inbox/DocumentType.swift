import Foundation

/// A kind of document the app accepts from other programs, by file extension and, where the
/// format has one, by the bytes it must start with.
public struct DocumentType: Sendable, Hashable {
    /// A uniform type identifier, for example `com.adobe.pdf`.
    public var identifier: String
    /// Lowercase file extensions without the dot.
    public var extensions: Set<String>
    /// The bytes every file of the type starts with, if the format defines them.
    public var magic: [UInt8]?

    public init(identifier: String, extensions: Set<String>, magic: [UInt8]? = nil) {
        self.identifier = identifier
        self.extensions = Set(extensions.map { $0.lowercased() })
        self.magic = magic
    }

    /// PDF documents (`%PDF-`).
    public static let pdf = DocumentType(identifier: "com.adobe.pdf", extensions: ["pdf"], magic: Array("%PDF-".utf8))
    /// PNG images.
    public static let png = DocumentType(
        identifier: "public.png", extensions: ["png"], magic: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    /// Plain UTF-8 text.
    public static let plainText = DocumentType(identifier: "public.plain-text", extensions: ["txt", "text"])
    /// JSON documents.
    public static let json = DocumentType(identifier: "public.json", extensions: ["json"])

    /// Whether `url`'s extension and first bytes fit this type.
    func matches(_ url: URL, head: Data) -> Bool {
        guard extensions.contains(url.pathExtension.lowercased()) else { return false }
        guard let magic else { return true }
        return head.count >= magic.count && Array(head.prefix(magic.count)) == magic
    }
}
