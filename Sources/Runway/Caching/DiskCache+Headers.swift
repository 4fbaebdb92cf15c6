import Foundation
import HTTPTypes

/// How the disk tier stores an entry's header fields.
extension DiskCache {
    /// The first byte of the header format: a version, so that another format can be told apart.
    static let headerFormat: UInt8 = 0x01

    /// Header fields as ``headerFormat`` then `name NUL value NUL` for each field, in order,
    /// repeated fields apart. HTTP allows no NUL in a field name or value, so the split is
    /// unambiguous, and reading it back is a byte scan instead of a JSON parse.
    static func encodeHeaders(_ headers: HTTPFields) -> Data {
        var bytes = [headerFormat]
        for field in headers {
            bytes += field.name.rawName.utf8
            bytes.append(0)
            bytes += field.value.utf8
            bytes.append(0)
        }
        return Data(bytes)
    }

    /// Reads what ``encodeHeaders(_:)`` wrote; anything else reads as no fields. A name that is
    /// not a valid field name is skipped with its value; bytes a value may not hold read as
    /// spaces.
    static func decodeHeaders(_ data: Data) -> HTTPFields {
        guard data.first == headerFormat else { return HTTPFields() }
        var fields = HTTPFields()
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 1
            var name: HTTPField.Name?
            var expectsName = true
            for index in 1..<bytes.count where bytes[index] == 0 {
                let part = UnsafeBufferPointer(rebasing: bytes[start..<index])
                if expectsName {
                    name = HTTPField.Name(String(decoding: part, as: UTF8.self))
                } else if let name {
                    fields.append(HTTPField(name: name, value: part))
                }
                expectsName.toggle()
                start = index + 1
            }
        }
        return fields
    }
}
