import Foundation
import HTTPTypes
import Logging

/// Writes a download's body to its partial file as it arrives, resuming where an earlier attempt
/// (or an earlier run of the app) stopped when the server answers a `Range` request with 206.
///
/// The rule that a resumed file is the same file is held at every step: the range is asked only
/// with `If-Range` and the strong `ETag` of the first answer (never `Last-Modified`, whose
/// one-second grain cannot tell two versions apart); a 206 must carry that same `ETag`, start
/// exactly where the partial file ends — a proxy that ignores `If-Range` answers a changed file
/// with a 206 too — and hold exactly the range it names, no byte fewer or more than its
/// `Content-Range`, or the partial file is dropped and the download starts again, instead of
/// splicing two answers together; a 200 starts the file again. Partial files and their notes
/// are readable by this user only, like every file Runway writes for a body.
///
/// The file-system work done between exchanges — reading the partial file's size and its note
/// before each attempt, moving the finished file into place, discarding a partial file — runs
/// as ``BlockingWork``, never on a thread of Swift's pool; the body's own writes run where the
/// transport hands them over, never on the pool either.
final class DownloadSink: ResponseSink {
    /// What was noted about a partial file, so a later attempt can ask for the rest of it.
    struct ResumeNote: Codable, Sendable {
        var url: String
        var validator: String
    }

    private struct State {
        var output: FileHandle?
        /// The status of the answer being received.
        var status = 0
        /// Bytes in the partial file.
        var onDisk: Int64 = 0
        /// Bytes the partial file held before this answer (when the answer resumes it).
        var resumedFrom: Int64 = 0
        var total: Int64?
        /// Where a 206's bytes end in the file: one past the last byte of its range. A byte past
        /// it is not part of the range the server named.
        var rangeEnd: Int64?
        /// The body of an answer that is not the file (an error, a redirect), kept for the error.
        var other = Data()
        /// The `Range` start asked for in the current attempt, if any.
        var askedFrom: Int64?
        /// The URL of the current attempt's first request, which a resume note is for.
        var requestURL: String?
        /// The validator the range was asked with, which a 206 must carry.
        var askedValidator: String?
        /// A 206 did not continue the partial file: it must go, and the download start again.
        var mustStartOver = false
    }

    static let keptErrorBody = 64 * 1024

    let destination: URL
    let partial: URL
    let note: URL
    private let progress: @Sendable (TransferProgress) -> Void
    private let logger: Logger
    private let state = Locked(State())

    init(destination: URL, logger: Logger, progress: @escaping @Sendable (TransferProgress) -> Void) {
        self.destination = destination
        self.partial = destination.appendingPathExtension("part")
        self.note = partial.appendingPathExtension("resume")
        self.logger = logger
        self.progress = progress
    }

    /// Before each attempt: ask for the rest of the partial file, if a validator says which file
    /// it is part of.
    func prepare(_ request: inout PreparedRequest) async {
        // Ranges count bytes of the representation as sent; ask for it unencoded.
        request.head.headerFields[.acceptEncoding] = "identity"
        request.head.headerFields[.range] = nil
        request.head.headerFields[.ifRange] = nil
        let url = request.head.url?.absoluteString
        let resumable = await BlockingWork.run { [self] in resumePoint(for: url) }
        if let (size, validator) = resumable {
            request.head.headerFields[.range] = "bytes=\(size)-"
            request.head.headerFields[.ifRange] = validator
        }
        state.withLock { state in
            state.askedFrom = resumable?.size
            state.askedValidator = resumable?.validator
            state.mustStartOver = false
            state.requestURL = url
        }
    }

    /// Where the partial file can go on from, if its note says it is part of `url`'s answer
    /// with a strong validator: its size and that validator. Reads the disk.
    private func resumePoint(for url: String?) -> (size: Int64, validator: String)? {
        guard let size = Self.size(of: partial), size > 0, let saved = readNote(), saved.url == url,
            let validator = Self.strongValidator(saved.validator)
        else { return nil }
        logger.debug(
            "runway download: resuming the partial file",
            metadata: ["file": "\(partial.lastPathComponent)", "from": "\(size)"])
        return (size, validator)
    }

    func begin(_ head: HTTPResponse) throws {
        let code = head.status.code
        let contentRange = head.headerFields[.contentRange].flatMap(ContentRange.init)
        let length = head.headerFields[.contentLength].flatMap { Int64($0) }
        let (askedFrom, askedValidator, previous) = state.withLock { state -> (Int64?, String?, FileHandle?) in
            let previous = state.output
            state.output = nil
            state.status = code
            state.other = Data()
            return (state.askedFrom, state.askedValidator, previous)
        }
        try? previous?.close()
        guard (200...299).contains(code) else { return }

        let output: FileHandle
        var resumedFrom: Int64 = 0
        var total: Int64? = length
        var rangeEnd: Int64?
        if code == 206 {
            guard let askedFrom, let contentRange, contentRange.start == askedFrom else {
                state.withLock { $0.mustStartOver = true }
                throw RunwayError.invalidResponse(
                    reason: "a 206 answer for \(head.headerFields[.contentRange] ?? "no range") does not continue the file at byte \(askedFrom ?? 0)")
            }
            let answered = head.headerFields[.eTag].flatMap(Self.strongValidator)
            guard let askedValidator, answered == askedValidator else {
                state.withLock { $0.mustStartOver = true }
                throw RunwayError.invalidResponse(
                    reason: "a 206 answer with ETag \(answered ?? "none") does not continue the file started as \(askedValidator ?? "none")")
            }
            // The body is the range it names, byte for byte: a length that says otherwise (or
            // bytes past the range's end, in `write`) is not the rest of this file, and taking
            // it would end the file early or splice other bytes onto it.
            let ranged = (contentRange.end - contentRange.start).addingReportingOverflow(1)
            let after = contentRange.end.addingReportingOverflow(1)
            if ranged.overflow || after.overflow || length.map({ $0 != ranged.partialValue }) == true {
                state.withLock { $0.mustStartOver = true }
                throw RunwayError.invalidResponse(
                    reason: "a 206 answer of \(length ?? 0) bytes for \(head.headerFields[.contentRange] ?? "its range") does not fill its range")
            }
            output = try Self.open(partial, truncating: false)
            _ = try output.seekToEnd()
            resumedFrom = askedFrom
            rangeEnd = after.partialValue
            // A total nobody knows: the file ends where the range does.
            total = contentRange.total ?? rangeEnd
        } else {
            // A whole answer: the file starts again, and its validator is noted for a resume.
            output = try Self.open(partial, truncating: true)
            if let validator = head.headerFields[.eTag].flatMap(Self.strongValidator) {
                writeNote(validator: validator)
            } else {
                try? FileManager.default.removeItem(at: note)
            }
        }
        state.withLock { state in
            state.output = output
            state.onDisk = resumedFrom
            state.resumedFrom = resumedFrom
            state.total = total
            state.rangeEnd = rangeEnd
        }
        progress(TransferProgress(completed: resumedFrom, total: total))
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        let (output, report) = try state.withLock { state -> (FileHandle?, TransferProgress?) in
            guard let output = state.output else {
                if state.other.count < Self.keptErrorBody {
                    state.other.append(contentsOf: bytes.prefix(Self.keptErrorBody - state.other.count))
                }
                return (nil, nil)
            }
            let onDisk = state.onDisk.addingReportingOverflow(Int64(bytes.count))
            if onDisk.overflow {
                throw RunwayError.invalidResponse(reason: "the answer is longer than any file")
            }
            if let rangeEnd = state.rangeEnd, onDisk.partialValue > rangeEnd {
                state.mustStartOver = true
                throw RunwayError.invalidResponse(reason: "a 206 answer sent bytes past the end of its range, byte \(rangeEnd - 1)")
            }
            state.onDisk = onDisk.partialValue
            return (output, TransferProgress(completed: state.onDisk, total: state.total))
        }
        guard let output, let report else { return }
        do {
            try output.write(contentsOf: Data(bytes))
        } catch {
            throw RunwayError.transport(description: "writing \(partial.lastPathComponent) failed: \(error.localizedDescription)")
        }
        progress(report)
    }

    /// Closes the partial file; it stays for a later resume.
    func close() {
        let output = state.withLock { state -> FileHandle? in
            defer { state.output = nil }
            return state.output
        }
        try? output?.close()
    }

    /// An attempt's answer ended: the file it makes, once ``moveIntoPlace(_:)`` has moved it —
    /// or why the attempt failed (an answer outside 2xx, a body cut short). Reads no disk.
    ///
    /// - parameter request: The request that answered, redacted as for a ``RawResponse``.
    func landed(_ response: TransportResponse, request: HTTPRequest) -> Result<DownloadedFile, RunwayError> {
        close()
        let (status, onDisk, resumedFrom, total, other) = state.withLock {
            ($0.status, $0.onDisk, $0.resumedFrom, $0.total, $0.other)
        }
        guard (200...299).contains(status) else {
            return .failure(.httpStatus(code: response.head.status.code, body: other))
        }
        if let total, total != onDisk {
            return .failure(.connectionLost)
        }
        return .success(
            DownloadedFile(
                url: destination, byteCount: onDisk, resumedFrom: resumedFrom, request: request, response: response.head))
    }

    /// The finished download: the partial file becomes the destination (an empty body, an
    /// empty file), replacing an older one, and the note goes.
    func moveIntoPlace(_ file: DownloadedFile) async -> Result<DownloadedFile, RunwayError> {
        do throws(RunwayError) {
            try await BlockingWork.run { [self] () throws(RunwayError) in try replaceDestination(byteCount: file.byteCount) }
            return .success(file)
        } catch {
            return .failure(error)
        }
    }

    private func replaceDestination(byteCount: Int64) throws(RunwayError) {
        let files = FileManager.default
        let moved: Bool
        do {
            if files.fileExists(atPath: destination.path) {
                try files.removeItem(at: destination)
            }
            moved = files.fileExists(atPath: partial.path)
            if moved { try files.moveItem(at: partial, to: destination) }
        } catch {
            throw .transport(description: "moving the download into place failed: \(error.localizedDescription)")
        }
        // A 204 or an empty body: an empty file.
        if !moved, !files.createFile(atPath: destination.path, contents: nil) {
            throw .transport(description: "cannot create \(destination.lastPathComponent)")
        }
        try? files.removeItem(at: note)
        logger.debug(
            "runway download: the file is in place",
            metadata: ["file": "\(destination.lastPathComponent)", "bytes": "\(byteCount)"])
    }

    /// Deletes the partial file and its note (the server cannot serve the range asked for).
    func discardPartial() async {
        close()
        await BlockingWork.run { [partial, note] in
            try? FileManager.default.removeItem(at: partial)
            try? FileManager.default.removeItem(at: note)
        }
    }

    /// Bytes received in the current attempt's answer.
    var bytesReceived: Int { state.withLock { Int(clamping: $0.onDisk - $0.resumedFrom) } }

    /// Whether the partial file cannot be resumed and the download must start again: the server
    /// cannot serve the range asked for (416), or its 206 is not the rest of this file.
    func mustStartOver(after outcome: Result<DownloadedFile, RunwayError>) -> Bool {
        state.withLock { state in
            guard state.askedFrom != nil, case .failure(let error) = outcome else { return false }
            if case .httpStatus(416, _) = error { return true }
            return state.mustStartOver
        }
    }

    private func readNote() -> ResumeNote? {
        guard let data = FileManager.default.contents(atPath: note.path) else { return nil }
        return try? JSONDecoder().decode(ResumeNote.self, from: data)
    }

    private func writeNote(validator: String) {
        guard let url = state.withLock({ $0.requestURL }),
            let data = try? JSONEncoder().encode(ResumeNote(url: url, validator: validator))
        else { return }
        // Without the note the download still completes; it only cannot resume.
        _ = FileManager.default.createFile(atPath: note.path, contents: data, attributes: Self.ownerOnly)
    }

    /// Readable and writable by this user only: a download may be what nobody else on the
    /// machine should read.
    static var ownerOnly: [FileAttributeKey: Any] { [.posixPermissions: 0o600] }

    private static func open(_ url: URL, truncating: Bool) throws -> FileHandle {
        if truncating || !FileManager.default.fileExists(atPath: url.path) {
            guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: ownerOnly) else {
                throw RunwayError.transport(description: "cannot create \(url.lastPathComponent)")
            }
        } else {
            // A partial file an older version of the app left readable to others.
            try? FileManager.default.setAttributes(ownerOnly, ofItemAtPath: url.path)
        }
        do {
            return try FileHandle(forWritingTo: url)
        } catch {
            throw RunwayError.transport(description: "cannot write \(url.lastPathComponent): \(error.localizedDescription)")
        }
    }

    private static func size(of url: URL) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
    }

    /// A strong ETag as it was sent; a weak one (`W/"…"`) cannot validate a range (RFC 9110 §13.1.5).
    private static func strongValidator(_ etag: String) -> String? {
        etag.hasPrefix("W/") ? nil : etag
    }
}

/// `Content-Range: bytes first-last/total` (RFC 9110 §14.4).
struct ContentRange: Sendable, Hashable {
    var start: Int64
    var end: Int64
    var total: Int64?

    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("bytes ") else { return nil }
        let rest = trimmed.dropFirst("bytes ".count)
        let halves = rest.split(separator: "/", maxSplits: 1)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), start >= 0, end >= start else {
            return nil
        }
        self.start = start
        self.end = end
        if halves[1] == "*" {
            total = nil
        } else {
            guard let total = Int64(halves[1]), total > end else { return nil }
            self.total = total
        }
    }
}
