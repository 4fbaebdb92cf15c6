import Foundation
import HTTPTypes
import Logging
@testable import Runway
import RunwayNIO
import RunwayTestSupport
import Testing

/// The guard for resumed downloads: each input's download is cut short after a seeded number of
/// bytes, and the request for the rest gets a hostile answer (``HostileResumes``); every later
/// request an honest one. Every download must end — a success or a `RunwayError` — in time; a
/// success holds exactly version 1 of the file or exactly a whole answer the server sent, never
/// two answers spliced; a failure leaves no file at the destination; and a second download to the
/// same destination, from the now honest server, holds exactly version 1 — whatever partial file
/// the first one left is never spliced into it.
///
/// The suite runs a short seeded run; `Fuzz/fuzz-answers.sh` runs a long one (a tenth of its
/// count of answers, in downloads), one transport to a process, as for the answers' fuzzer.
@Suite("Hostile answers to a resumed download: the fuzzer", .timeLimit(.minutes(60)))
struct HostileResumeFuzzTests {
    static let seed = HostileAnswerFuzzTests.seed
    static let inputs = HostileAnswerFuzzTests.longRun.map { $0 / 10 } ?? 240

    /// The download of input `index`, with retries whose waits pass at once. The first download
    /// has a short timeout, so that an answer held open ends in it (and a slow honest answer on a
    /// busy machine, too: any typed error is allowed there); the second, which must succeed, has
    /// a long one.
    struct ResumeAPI: API {
        var index: Int
        var timeout: Duration = .seconds(2)
        var service: ServiceID { .test }
        var path: String { "/resume/\(index)" }
        var method: HTTPRequest.Method { .get }
        var retryPolicy: RetryPolicy { RetryPolicy(maximumRetries: 3, baseDelay: .milliseconds(1)) }
    }

    /// What the server did for one input: requests answered, and the whole files it sent.
    struct Served {
        var requests = 0
        var wholes: [[UInt8]] = []
        var hostile = ""
    }

    @Test("every hostile answer to a resume ends well or in a typed error, and no download splices two answers",
          arguments: TransportKind.allCases)
    func resumes(_ kind: TransportKind) async throws {
        if let only = HostileAnswerFuzzTests.only, only != kind.rawValue { return }
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let served = TestBox<[Int: Served]>([:])
        let server = try await RawHTTPServer.startAnsweringHeads { head in
            let line = head.unicodeScalars.prefix { $0 != "\r" }
            let path = String(line).split(separator: " ").dropFirst().first ?? ""
            guard path.hasPrefix("/resume/"), let index = Int(path.dropFirst("/resume/".count)) else {
                return .init("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            }
            let (from, ifRange) = HostileResumes.asked(in: head)
            let request = served.mutate { served in
                served[index, default: Served()].requests += 1
                return served[index, default: Served()].requests
            }
            var planned: HostileResumes.Planned
            switch request {
            case 1: planned = .init(answer: HostileResumes.cut(seed: Self.seed, index: index))
            case 2: planned = HostileResumes.make(seed: Self.seed, index: index, from: from)
            default: planned = .init(answer: HostileResumes.honest(from: from, ifRange: ifRange))
            }
            #if !canImport(Darwin)
            // A platform trap, not Runway's to catch (`URLSessionPlatformTrapTests`).
            if kind == .urlSession, planned.answer.trapsURLSessionOnLinux {
                planned = .init(answer: HostileResumes.honest(from: from, ifRange: ifRange))
            }
            #endif
            if request == 2 {
                served.mutate { $0[index]?.hostile = planned.answer.description }
            }
            if let whole = planned.whole {
                served.mutate { $0[index]?.wholes.append(whole) }
            }
            // Every connection serves one answer: bytes an answer leaves past its own length would
            // otherwise be read as the next answer on that connection — another input's.
            planned.answer.fields.append(("Connection", "close"))
            return .init(planned.answer.wire, holdOpen: planned.answer.holdOpen)
        }
        let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let transport: any Transport = nio ?? URLSessionTransport()
        var outcomes: [String: Int] = [:]
        try await withCleanup({
            try? await nio?.shutdown()
            await server.stop()
        }) {
            let engine = Engine(transport: transport, logger: Logger(label: "runway.fuzz") { _ in SwiftLogNoOpLogHandler() }, sleep: { _ in })
            try engine.register(
                Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL], connection: .init(allowsInsecureHTTP: true)))
            await withTaskGroup(of: (Int, String).self) { group in
                var next = 0
                func start() {
                    let index = next
                    next += 1
                    group.addTask {
                        let destination = DownloadDestination.caches("resume-\(index).bin", in: container)
                        let outcome = await Self.check(index, destination: destination, engine: engine) {
                            served.value[index] ?? Served()
                        }
                        return (index, outcome)
                    }
                }
                for _ in 0..<16 where next < Self.inputs { start() }
                while let (_, outcome) = await group.next() {
                    outcomes[outcome, default: 0] += 1
                    if next < Self.inputs { start() }
                }
            }
        }
        print("hostile resumes over \(kind) (seed \(Self.seed)): \(Self.inputs) downloads; "
            + outcomes.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        #expect(outcomes.values.reduce(0, +) == Self.inputs)
    }

    static func ending(_ transfer: Transfer<DownloadedFile>) async -> Result<DownloadedFile, RunwayError> {
        do throws(RunwayError) {
            return .success(try await transfer.value)
        } catch {
            return .failure(error)
        }
    }

    /// Downloads input `index` twice and checks both against the property; returns how the first
    /// ended.
    static func check(
        _ index: Int, destination: DownloadDestination, engine: Engine, served: @Sendable () -> Served
    ) async -> String {
        let api = ResumeAPI(index: index)
        let started = ContinuousClock.now
        let first = await Self.ending(engine.download(api, to: destination))
        let took = ContinuousClock.now - started
        let seen = served()
        let context = "input \(index) (\(seen.requests) requests), hostile answer \(seen.hostile), first download \(first.map(\.byteCount))"
        // Every attempt ends within its timeout; the grace covers a busy machine.
        #expect(took < .seconds(60), "\(context): took \(took)")
        guard let url = try? destination.url() else {
            Issue.record("\(context): no destination URL")
            return "no destination"
        }
        let partial = url.appendingPathExtension("part")
        let note = partial.appendingPathExtension("resume")
        let outcome: String
        switch first {
        case .success(let file):
            let bytes = (try? Data(contentsOf: file.url)).map(Array.init) ?? []
            #expect(
                bytes == HostileResumes.v1 || seen.wholes.contains(bytes),
                "\(context): the file is \(bytes.count) bytes that are neither version 1 nor a whole answer sent")
            #expect(file.byteCount == Int64(bytes.count), "\(context): \(file.byteCount) bytes reported, \(bytes.count) on disk")
            #expect(!FileManager.default.fileExists(atPath: partial.path), "\(context): a partial file is left after a success")
            #expect(!FileManager.default.fileExists(atPath: note.path), "\(context): a resume note is left after a success")
            outcome =
                switch bytes {
                case HostileResumes.v1: "version 1"
                case HostileResumes.v2: "version 2"
                case []: "empty (204)"
                default: "spliced"
                }
        case .failure(let error):
            #expect(error != .cancelled, "\(context): cancelled")
            #expect(!FileManager.default.fileExists(atPath: url.path), "\(context): a failed download left a file: \(error)")
            outcome = "\(error.messageKey.dropFirst("error.".count))"
        }
        // The server is honest from now on: whatever the first download left, the second holds
        // exactly version 1.
        switch await Self.ending(engine.download(ResumeAPI(index: index, timeout: .seconds(120)), to: destination)) {
        case .success(let file):
            let bytes = (try? Data(contentsOf: file.url)).map(Array.init) ?? []
            #expect(bytes == HostileResumes.v1, "\(context): after it, an honest server's download is not version 1 (\(bytes.count) bytes, resumed from \(file.resumedFrom))")
        case .failure(let error):
            Issue.record("\(context): after it, an honest server's download failed: \(error)")
        }
        return outcome
    }
}
