import Runway
import RunwayTestSupport

extension DemoChapter {
    /// A service per backend, a base URL per environment: switching is one call, and every API
    /// of the service follows.
    static let services = DemoChapter("services", "Services and environments (seed 003: 多服務、多環境)") { context, log in
        let develop = context.baseURL + "/echo/develop"
        let release = context.baseURL + "/echo/release"
        try context.engine.register(
            Service(
                id: "environments",
                environment: .develop,
                baseURLs: [.develop: develop, .release: release],
                commonParams: ["client": "runway-demo"],
                credentials: .init(signer: context.signer)))
        var api = AdHocAPI("WhoAmIAPI", path: "/whoami")
        api.service = "environments"
        let first = try await context.engine.perform(api).get()
        let switched = context.engine.setEnvironment(.release, for: "environments")
        let second = try await context.engine.perform(api).get()
        let firstPath = first.json?["path"]?.stringValue ?? "?"
        let secondPath = second.json?["path"]?.stringValue ?? "?"
        log.say("develop  → base URL \(develop)")
        log.say("           the server saw GET \(firstPath)?\(first.json?["query"]?.stringValue ?? "")")
        log.say("setEnvironment(.release) → base URL \(release)")
        log.say("           the server saw GET \(secondPath); the API's code did not change")
        log.figure("developPath", .string(firstPath))
        log.figure("releasePath", .string(secondPath))
        try log.require(switched, "the release environment was not accepted")
        try log.require(
            firstPath == "/echo/develop/whoami" && secondPath == "/echo/release/whoami",
            "expected the two environments' paths, got \(firstPath) and \(secondPath)")
        try log.require(
            first.json?["query"]?.stringValue == "client=runway-demo", "the service's common params were not sent")
    }
}
