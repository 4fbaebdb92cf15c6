import Foundation

/// A versioned file format: its name, its current version, and a migration from each older
/// version to the next.
///
/// Files are written as a one-line JSON header — `{"format":"settings","version":3}` — followed
/// by the payload bytes. Reading a file of an older version runs the migrations in order (v1→v2→v3)
/// and rewrites the file atomically; a newer version is refused and the file left as it is.
///
/// For example:
///
/// ```swift
/// let settings = FileFormat(name: "settings", version: 3, migrations: [
///     1: { v1 in try migrateV1toV2(v1) },
///     2: { v2 in try migrateV2toV3(v2) },
/// ])
/// ```
public struct FileFormat: Sendable {
    /// The format's name, stored in each file and checked on read.
    public let name: String
    /// The version this build writes.
    public let version: Int
    /// The payload migration from version `key` to `key + 1`.
    public let migrations: [Int: @Sendable (Data) throws -> Data]

    /// Creates a format.
    ///
    /// - parameters:
    ///   - name: The format's name.
    ///   - version: The current version, 1 or more.
    ///   - migrations: For each older version `v`, the step from `v` to `v + 1`.
    public init(name: String, version: Int, migrations: [Int: @Sendable (Data) throws -> Data] = [:]) {
        self.name = name
        self.version = version
        self.migrations = migrations
    }
}

/// A file of a ``FileFormat``: read with migration, written atomically.
public struct VersionedFile: Sendable {
    /// Where the file lives.
    public let url: URL
    /// Its format.
    public let format: FileFormat
    /// Checked before each write.
    public var capacity: (any CapacitySource)?

    struct Header: Codable {
        var format: String
        var version: Int
    }

    /// Creates the file handle; nothing is read or written yet.
    public init(url: URL, format: FileFormat, capacity: (any CapacitySource)? = SystemCapacity()) {
        self.url = url
        self.format = format
        self.capacity = capacity
    }

    /// Writes `payload` as the current version, atomically.
    public func write(_ payload: Data) throws(StorageError) {
        try AtomicFile.write(Self.encode(payload, format: format.name, version: format.version), to: url, capacity: capacity)
    }

    /// Reads the payload, migrating an older file to the current version and rewriting it.
    ///
    /// - throws: ``StorageError/notFound(_:)``, ``StorageError/corrupt(path:reason:)``,
    ///   ``StorageError/formatMismatch(expected:found:)``,
    ///   ``StorageError/unsupportedVersion(format:found:newest:)`` (file untouched),
    ///   ``StorageError/missingMigration(format:from:)`` or
    ///   ``StorageError/migrationFailed(format:from:reason:)`` (file untouched).
    public func read() throws(StorageError) -> Data {
        let data = try FileSystem.read(url)
        let (header, payload) = try Self.decode(data, path: url.path)
        guard header.format == format.name else {
            throw .formatMismatch(expected: format.name, found: header.format)
        }
        guard header.version <= format.version else {
            throw .unsupportedVersion(format: format.name, found: header.version, newest: format.version)
        }
        guard header.version < format.version else { return payload }
        var migrated = payload
        for version in header.version..<format.version {
            guard let step = format.migrations[version] else {
                throw .missingMigration(format: format.name, from: version)
            }
            do { migrated = try step(migrated) } catch {
                throw .migrationFailed(format: format.name, from: version, reason: "\(error)")
            }
        }
        try write(migrated)
        return migrated
    }

    /// The version stored in the file, without reading further.
    public func storedVersion() throws(StorageError) -> Int {
        try Self.decode(try FileSystem.read(url), path: url.path).0.version
    }

    static func encode(_ payload: Data, format: String, version: Int) -> Data {
        var header = Data(#"{"format":"#.utf8)
        header += (try? JSONEncoder().encode(format)) ?? Data("\"\"".utf8)
        header += Data(#","version":\#(version)}"#.utf8)
        return header + Data([0x0A]) + payload
    }

    static func decode(_ data: Data, path: String) throws(StorageError) -> (Header, Data) {
        guard let newline = data.firstIndex(of: 0x0A) else {
            throw .corrupt(path: path, reason: "no header line")
        }
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: data[data.startIndex..<newline])
        } catch {
            throw .corrupt(path: path, reason: "unreadable header")
        }
        guard header.version >= 1 else { throw .corrupt(path: path, reason: "version \(header.version)") }
        return (header, Data(data[data.index(after: newline)...]))
    }
}

extension VersionedFile {
    /// Reads and decodes the payload as JSON into `type`.
    ///
    /// - throws: As ``read()``, and ``StorageError/corrupt(path:reason:)`` when the payload does
    ///   not decode.
    public func read<Value: Decodable>(_ type: Value.Type) throws(StorageError) -> Value {
        let payload = try read()
        do { return try JSONDecoder().decode(type, from: payload) } catch {
            throw .corrupt(path: url.path, reason: "the payload does not decode as \(type)")
        }
    }

    /// Encodes `value` as JSON and writes it as the current version.
    public func write<Value: Encodable>(_ value: Value) throws(StorageError) {
        let payload: Data
        do { payload = try JSONEncoder().encode(value) } catch {
            throw .io(operation: "encode", path: url.path, reason: "\(error)")
        }
        try write(payload)
    }
}
