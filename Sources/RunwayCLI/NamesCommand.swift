import ArgumentParser
import Runway
import RunwayExamples

/// `runway names`: the default names of the example APIs, one per line. Hidden: the tests run it
/// in a second process to show that names stay the same from launch to launch.
struct NamesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "names",
        abstract: "Print the default names of the example APIs (private and function-local ones included).",
        shouldDisplay: false)

    func run() {
        let apis: [any API] = ScreenLocalAPIs.all + [SecondHandListAPI(), RentalListAPI(), NewHomeListAPI()]
        for api in apis { print(api.name) }
    }
}
