import Foundation
import Runway
import RunwayExamples
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing

/// The snippet of the Credentials and transfers article, run against the demo server.
@Suite("Credentials and transfers: the article's snippet", .timeLimit(.minutes(10)))
struct TransferSnippetTests {
    @Test("the account snippet signs in by refresh, uploads a form and downloads a file to the caches role")
    func readmeFlow() async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let (photo, _) = try makeUploadFile(40_000, name: "balcony.jpg")
        defer { try? FileManager.default.removeItem(at: photo.deletingLastPathComponent()) }
        try await withHarness { harness in
            let engine = harness.engine
            let baseURL = harness.server.baseURL

            // snippet: Transfers-account
            // A bearer token, refreshed once for every load that finds it expired (TokenAuthenticator
            // and the APIs are in Sources/RunwayExamples/AccountExamples.swift).
            let authentication = Authentication(TokenAuthenticator(engine: engine, refreshToken: "r-1", stored: "expired"))
            try engine.register(accountService(baseURL: baseURL, authentication: authentication))
            let me = try await engine.perform(ProfileAPI()).get()       // 401 → one refresh → sent again

            var form = MultipartForm()
            form.append("Balcony", name: "caption")
            form.append(fileAt: photo, name: "photo", contentType: "image/jpeg")
            let upload = engine.upload(PhotoUploadAPI(), body: .multipart(form))
            let uploaded = try await upload.value

            let download = engine.download(FloorPlanAPI(), params: ["size": "200000"], to: .caches("plans/1204.pdf", in: container))
            var lastFigure: TransferProgress?
            for await progress in download.progress { lastFigure = progress }
            let plan = try await download.value
            // end-snippet

            #expect(me.json?["data"]?["user"]?.stringValue == "demo")
            #expect(harness.probe.count("/auth/token") == 1)
            #expect(uploaded.json?["parts"]?[1]?["filename"]?.stringValue == "balcony.jpg")
            #expect(plan.byteCount == 200_000)
            #expect(lastFigure?.fractionCompleted == 1)
            #expect(container.role(containing: plan.url) == .caches)
        }
    }
}
